"""docs/README.md is the index of every guide, and the README links to it and to every guide."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDES = {path.name for path in (ROOT / "docs").glob("*.md")} - {"README.md"}
LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")


def linked(text: str) -> set[str]:
    return set(LINK.findall(text))


def test_the_docs_index_links_every_guide_and_only_guides_that_exist():
    links = linked((ROOT / "docs" / "README.md").read_text())
    assert links - {"../README.md"} == GUIDES


def test_the_readme_links_the_index_and_every_guide():
    links = linked((ROOT / "README.md").read_text())
    assert "docs/README.md" in links
    assert {name.removeprefix("docs/") for name in links if name.startswith("docs/")} >= GUIDES
    assert all((ROOT / name).exists() for name in links)


def test_the_readme_stays_a_front_door():
    assert len((ROOT / "README.md").read_text().splitlines()) < 250
