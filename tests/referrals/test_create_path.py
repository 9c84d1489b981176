"""What a V1 create runs: the modules on its path, and nothing of the sandbox for live keys.

The request is served in this process (the real app, its lifespan, a real database) while a
profiler notes the project module of every Python function called. The first create warms
the process up; the second is the one observed.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from litestar.testing import TestClient

from rehabref.app import build_asgi_app
from rehabref.config import load_settings
from tests.support.partners import TEST_SECRET_KEY
from tests.support.payloads import v1_referral

# Top-level modules (clock, ids, crypto, db, errors...) are the kernel, read once; the
# others are the path a reader follows. The ceiling fails the suite when the path grows.
PATH_CEILING = 38
EDGES_OTHER_THAN_THE_API = ("console", "ops", "pages", "physio_app", "provider_webhooks")


def _observed_create(database_url: str, key: str, **overrides: Any) -> set[str]:
    modules: set[str] = set()
    observing = False

    def note(frame: FrameType, event: str, arg: object) -> None:
        if observing and event == "call":
            name = str(frame.f_globals.get("__name__", ""))
            if name.startswith("rehabref."):
                modules.add(name.removeprefix("rehabref."))

    settings = load_settings(
        {
            "REHABREF_DATABASE_URL": database_url,
            "REHABREF_SECRET_KEY": TEST_SECRET_KEY,
            "REHABREF_RATE_LIMIT": "100000/second",
        }
    )
    headers = {"Authorization": f"Bearer {key}"}
    threading.setprofile(note)
    sys.setprofile(note)
    try:
        with TestClient(app=build_asgi_app(settings, run_worker=False)) as client:
            for attempt in ("warm-up", "observed"):
                observing = attempt == "observed"
                answer = client.post(
                    "/api/v1/partners/referrals",
                    json=v1_referral(**overrides),
                    headers={**headers, "Idempotency-Key": f"path-{attempt}-{id(modules)}"},
                )
                observing = False
                assert answer.status_code == 201, answer.text
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return modules


@pytest.fixture
def observe(database_url: str, partner: dict[str, Any]) -> Iterator[Any]:
    yield lambda key, **overrides: _observed_create(database_url, partner["keys"][key], **overrides)


def test_a_v1_create_stays_on_its_path(observe: Any) -> None:
    modules = observe("sk_test")
    path = sorted(name for name in modules if "." in name)
    assert len(path) <= PATH_CEILING, path
    assert not [name for name in path if name.startswith(EDGES_OTHER_THAN_THE_API)]
    for step in ("api.referrals", "workflows.referral_created", "workflows.create_plan"):
        assert step in modules
    # The create store's adapter: one statement on PostgreSQL, one transaction on SQLite.
    assert {"workflows.create_store", "workflows.create_store_postgres"} & modules


def test_a_live_create_runs_no_sandbox_code(observe: Any) -> None:
    modules = observe("sk_live", preferred_contact="sms")
    assert "workflows.referral_created" in modules
    assert not [name for name in modules if name.startswith("sandbox")], sorted(modules)
