"""An isolated database holding the realistic registry (200 physiotherapists, 4 cities)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.databases import fresh_database
from tests.support.server import isolated_environ

REGISTRY_CSV = Path(__file__).parent / "data" / "physios.csv"


def run_import(database_url: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rehabref.cli", "physios", "import", str(path)],
        env={**isolated_environ(), "REHABREF_DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def registry_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(tmp_path_factory.mktemp("registry")) as url:
        result = run_import(url, REGISTRY_CSV)
        assert result.returncode == 0, result.stderr
        yield url
