"""Shared fixtures: one migrated database and one real server per test session (per worker).

The backend comes from REHABREF_TEST_DATABASE (sqlite or postgres); `make test` runs the
whole suite once for each.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine

from rehabref.db import sync_url
from tests.support.databases import fresh_database, selected_backend
from tests.support.partners import onboard
from tests.support.server import ServerProcess


@pytest.fixture(scope="session")
def backend() -> str:
    return selected_backend()


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(tmp_path_factory.mktemp("db")) as url:
        yield url


@pytest.fixture(scope="session")
def server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    log_path = tmp_path_factory.mktemp("logs") / "server.log"
    process = ServerProcess(database_url, log_path).start("--no-worker")
    yield process
    process.stop()


@pytest.fixture(scope="session")
def sql(database_url: str) -> Iterator[Engine]:
    """Direct SQL access for assertions about what was stored."""
    engine = create_engine(sync_url(database_url))
    yield engine
    engine.dispose()


@pytest.fixture
def partner(database_url: str) -> dict[str, Any]:
    return onboard(database_url, name=f"Clinic {uuid.uuid4().hex[:6]}")


@pytest.fixture
def make_partner(database_url: str) -> Callable[..., dict[str, Any]]:
    def make(**options: Any) -> dict[str, Any]:
        return onboard(database_url, **options)

    return make


@pytest.fixture
def client(server: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        yield http


def auth(key: str, idempotency_key: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {key}"}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return headers


def count(engine: Engine, query: str, **params: Any) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text(query), params).scalar_one())
