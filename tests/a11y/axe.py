"""axe-core in the browser tests: every console page is checked for accessibility problems.

axe-core comes from the npm registry, pinned in ``package.json`` / ``package-lock.json`` next
to this file, and is installed into ``tests/a11y/node_modules`` by ``npm ci`` the first time a
test needs it (Node is /usr/bin/node). The console's Content-Security-Policy forbids scripts,
so the browser context that runs axe is made with ``bypass_csp=True``; the pages themselves
stay script-free.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

HERE = Path(__file__).resolve().parent
AXE_JS = HERE / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = frozenset({"serious", "critical"})


@cache
def axe_source() -> str:
    if not AXE_JS.exists():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(HERE)],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return AXE_JS.read_text()


def violations(page: Page) -> list[dict[str, Any]]:
    """Every axe violation of the page as it is now (WCAG 2.x A and AA and best practice)."""
    page.wait_for_load_state()
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    result: dict[str, Any] = page.evaluate(
        "async () => await axe.run(document, {resultTypes: ['violations']})"
    )
    return list(result["violations"])


def assert_accessible(page: Page, log: list[dict[str, Any]] | None = None) -> None:
    """No serious or critical violation; the page and every violation found (rule and
    impact) are appended to ``log``."""
    found = violations(page)
    if log is not None:
        log.append(
            {"url": page.url, "violations": [{"id": v["id"], "impact": v["impact"]} for v in found]}
        )
    blocking = [
        (v["id"], v["impact"], v["help"], [n["target"] for n in v["nodes"]][:3])
        for v in found
        if v["impact"] in BLOCKING
    ]
    assert not blocking, f"{page.url}: {blocking}"
