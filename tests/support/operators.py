"""Coordinator tokens for tests, made the way an operator makes them: the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

import httpx
import pytest

from tests.support.partners import TEST_SECRET_KEY
from tests.support.server import isolated_environ

OPS = "/api/v1/ops"


def create_operator(database_url: str, name: str | None = None) -> str:
    """``rehabref operators create --name N --json``; returns the token."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "rehabref.cli",
            "operators",
            "create",
            "--json",
            "--name",
            name or f"Coordinator {uuid.uuid4().hex[:6]}",
        ],
        env={
            **isolated_environ(),
            "REHABREF_DATABASE_URL": database_url,
            "REHABREF_SECRET_KEY": TEST_SECRET_KEY,
        },
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    token: str = json.loads(result.stdout)["token"]
    return token


def op_headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def move(
    client: httpx.Client, token: str, referral_id: str, to: str, **extra: Any
) -> httpx.Response:
    """POST a transition as a coordinator."""
    return client.post(
        f"{OPS}/referrals/{referral_id}/transitions",
        json={"to": to, **extra},
        headers=op_headers(token),
    )


def moved(
    client: httpx.Client, token: str, referral_id: str, to: str, **extra: Any
) -> dict[str, Any]:
    response = move(client, token, referral_id, to, **extra)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == to
    return body


@pytest.fixture(scope="session")
def operator_token(database_url: str) -> str:
    return create_operator(database_url, "Ada Coordinator")
