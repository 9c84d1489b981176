"""Operators with a role, an expiry or a second factor, made with the CLI as an operator would."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

from tests.support.partners import TEST_SECRET_KEY
from tests.support.server import isolated_environ


def cli(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rehabref.cli", *args],
        env={
            **isolated_environ(),
            "REHABREF_DATABASE_URL": database_url,
            "REHABREF_SECRET_KEY": TEST_SECRET_KEY,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )


def create(database_url: str, *options: str) -> dict[str, str]:
    """``rehabref operators create --json`` with ``options``; operator_id and token."""
    result = cli(
        database_url,
        "operators",
        "create",
        "--json",
        "--name",
        f"Operator {uuid.uuid4().hex[:6]}",
        *options,
    )
    assert result.returncode == 0, result.stderr
    created: dict[str, str] = json.loads(result.stdout)
    return created
