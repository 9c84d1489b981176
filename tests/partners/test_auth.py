"""Partner authentication over HTTP: secret vs publishable keys, environments, rotation and
revocation through the `rehabref partners keys` CLI; and the key cache's lookups in process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from rehabref.db import Database
from rehabref.errors import ApiError
from rehabref.fastsql import Connection
from rehabref.partners.auth import Authenticator
from rehabref.rate_limiting import RateLimiter
from tests.support.api import REFERRALS, bearer, create, error_of
from tests.support.partners import TEST_SECRET_KEY
from tests.support.server import ServerProcess, isolated_environ


def cli(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **isolated_environ(),
        "REHABREF_DATABASE_URL": database_url,
        "REHABREF_SECRET_KEY": TEST_SECRET_KEY,
    }
    return subprocess.run(
        [sys.executable, "-m", "rehabref.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def key_id_of(database_url: str, partner_id: str, key: str) -> str:
    result = cli(database_url, "partners", "keys", "list", "--partner", partner_id)
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    matches = [item for item in listed if key.startswith(item["prefix"].removesuffix("..."))]
    assert len(matches) == 1
    return str(matches[0]["key_id"])


@pytest.fixture(scope="module")
def quick_server(database_url, tmp_path_factory) -> Iterator[ServerProcess]:
    """A second server on the same database whose key cache lives 0.5 s instead of 5 s."""
    log_path = tmp_path_factory.mktemp("quick") / "server.log"
    server = ServerProcess(database_url, log_path, REHABREF_AUTH_CACHE_SECONDS="0.5")
    yield server.start("--no-worker")
    server.stop()


@pytest.mark.parametrize("key_type", ["sk_test", "sk_live"])
def test_secret_keys_create_and_read(client, partner, key_type):
    key = partner["keys"][key_type]
    referral_id = create(client, key).json()["referral_id"]
    assert client.get(f"{REFERRALS}/{referral_id}", headers=bearer(key)).status_code == 200


def test_publishable_key_may_not_create_or_read(client, partner, sql):
    public = partner["keys"]["pk_test"]
    error = error_of(create(client, public), 403, "forbidden")
    assert "secret key" in error["message"]
    error_of(client.get(REFERRALS, headers=bearer(public)), 403, "forbidden")
    referral_id = create(client, partner["keys"]["sk_test"]).json()["referral_id"]
    error_of(client.get(f"{REFERRALS}/{referral_id}", headers=bearer(public)), 403, "forbidden")


def test_key_listing_shows_prefixes_only(database_url, partner):
    result = cli(database_url, "partners", "keys", "list", "--partner", partner["partner_id"])
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert {(item["environment"], item["kind"]) for item in listed} == {
        ("test", "secret"),
        ("live", "secret"),
        ("test", "public"),
    }
    for key in partner["keys"].values():
        assert key not in result.stdout
    for item in listed:
        assert item["prefix"].endswith("...") and len(item["prefix"]) <= 16


def test_a_key_revoked_before_first_use_is_refused_at_once(client, database_url, partner):
    key = partner["keys"]["sk_live"]
    key_id = key_id_of(database_url, partner["partner_id"], key)
    result = cli(
        database_url,
        "partners",
        "keys",
        "revoke",
        "--partner",
        partner["partner_id"],
        "--key-id",
        key_id,
    )
    assert result.returncode == 0, result.stderr
    assert f"revoked {key_id}" in result.stdout
    error_of(client.get(REFERRALS, headers=bearer(key)), 401, "unauthenticated")
    assert client.get(REFERRALS, headers=bearer(partner["keys"]["sk_test"])).status_code == 200


def test_revocation_takes_effect_within_the_cache_window(quick_server, database_url, partner):
    key = partner["keys"]["sk_test"]
    with httpx.Client(base_url=quick_server.base_url) as http:
        assert http.get(REFERRALS, headers=bearer(key)).status_code == 200  # now cached
        key_id = key_id_of(database_url, partner["partner_id"], key)
        revoked = cli(
            database_url,
            "partners",
            "keys",
            "revoke",
            "--partner",
            partner["partner_id"],
            "--key-id",
            key_id,
        )
        assert revoked.returncode == 0, revoked.stderr
        deadline = time.monotonic() + 10
        status = 200
        while status == 200 and time.monotonic() < deadline:
            time.sleep(0.1)
            status = http.get(REFERRALS, headers=bearer(key)).status_code
        assert status == 401
        error_of(http.get(REFERRALS, headers=bearer(key)), 401, "unauthenticated")
        error_of(create(http, key), 401, "unauthenticated")


def test_revoking_twice_or_another_partners_key_fails(database_url, partner, make_partner):
    key_id = key_id_of(database_url, partner["partner_id"], partner["keys"]["pk_test"])
    other = make_partner()
    wrong = cli(
        database_url,
        "partners",
        "keys",
        "revoke",
        "--partner",
        other["partner_id"],
        "--key-id",
        key_id,
    )
    assert wrong.returncode == 2 and "no active key" in wrong.stderr
    args = ("partners", "keys", "revoke", "--partner", partner["partner_id"], "--key-id", key_id)
    assert cli(database_url, *args).returncode == 0
    assert cli(database_url, *args).returncode == 2


def test_rotation_gives_a_second_working_key(client, database_url, partner):
    partner_id = partner["partner_id"]
    old = partner["keys"]["sk_test"]
    rotated = cli(
        database_url,
        "partners",
        "keys",
        "rotate",
        "--partner",
        partner_id,
        "--type",
        "sk_test",
        "--json",
    )
    assert rotated.returncode == 0, rotated.stderr
    issued = json.loads(rotated.stdout)
    assert issued["key_type"] == "sk_test"
    new = issued["key"]
    assert new.startswith("sk_test_") and new != old

    # Both keys work and see the same sandbox data.
    referral_id = create(client, old).json()["referral_id"]
    assert client.get(f"{REFERRALS}/{referral_id}", headers=bearer(new)).status_code == 200
    assert create(client, new).status_code == 201

    # A third active key is refused until the old one is revoked.
    third = cli(
        database_url, "partners", "keys", "rotate", "--partner", partner_id, "--type", "sk_test"
    )
    assert third.returncode == 2 and "revoke" in third.stderr
    revoked = cli(
        database_url,
        "partners",
        "keys",
        "revoke",
        "--partner",
        partner_id,
        "--key-id",
        key_id_of(database_url, partner_id, old),
    )
    assert revoked.returncode == 0, revoked.stderr
    assert client.get(f"{REFERRALS}/{referral_id}", headers=bearer(new)).status_code == 200


def test_rotation_of_an_unknown_partner_or_type_fails(database_url, partner):
    unknown = cli(
        database_url, "partners", "keys", "rotate", "--partner", "ptn_missing", "--type", "sk_test"
    )
    assert unknown.returncode == 2 and "no partner" in unknown.stderr
    bad_type = cli(
        database_url,
        "partners",
        "keys",
        "rotate",
        "--partner",
        partner["partner_id"],
        "--type",
        "sk_prod",
    )
    assert bad_type.returncode == 2


# --- The key cache, in process against the real database -------------------------------


@dataclass
class KeyRequest:
    """The parts of a request ``Authenticator.authenticate`` reads."""

    key: str
    scope: dict[str, Any] = field(default_factory=lambda: {"state": {}})
    query_params: dict[str, Any] = field(default_factory=dict)
    app: Any = None

    @property
    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.key}"}

    async def body(self) -> bytes:
        return b""


class CountedDatabase(Database):
    """The real database, counting key lookups (the cache's own rules are in
    tests/test_expiring_cache.py)."""

    def __init__(self, url: str) -> None:
        super().__init__(url, pool_size=2)
        self.lookups = 0

    @asynccontextmanager
    async def _counted(self) -> AsyncIterator[Connection]:
        self.lookups += 1
        async with super().fast_read() as conn:
            yield conn

    def fast_read(self) -> Any:
        return self._counted()


@pytest.fixture
async def counted_db(database_url) -> AsyncIterator[CountedDatabase]:
    db = CountedDatabase(database_url)
    yield db
    await db.dispose()


def authenticator(db: Database, cache_seconds: float = 60) -> Authenticator:
    return Authenticator(
        db, cache_seconds=cache_seconds, rate_limit="1000000/second", limiter=RateLimiter(None)
    )


async def test_requests_holding_an_uncached_key_share_one_lookup(counted_db, partner):
    auth = authenticator(counted_db, cache_seconds=0.3)
    key = partner["keys"]["sk_test"]
    found = await asyncio.gather(*(auth.authenticate(KeyRequest(key)) for _ in range(32)))
    assert {principal.partner_id for principal in found} == {partner["partner_id"]}
    assert {principal.environment for principal in found} == {"test"}
    assert counted_db.lookups == 1
    await asyncio.gather(*(auth.authenticate(KeyRequest(key)) for _ in range(8)))
    assert counted_db.lookups == 1  # cached
    await asyncio.sleep(0.35)
    await asyncio.gather(*(auth.authenticate(KeyRequest(key)) for _ in range(32)))
    assert counted_db.lookups == 2  # expired: looked up again, once


async def test_different_keys_are_looked_up_separately(counted_db, partner):
    auth = authenticator(counted_db)
    secret, public = partner["keys"]["sk_live"], partner["keys"]["pk_test"]
    live = auth.authenticate(KeyRequest(secret))
    publishable = auth.authenticate(KeyRequest(public), secret_only=False)
    found = await asyncio.gather(live, publishable)
    assert [(p.environment, p.kind) for p in found] == [("live", "secret"), ("test", "public")]
    assert counted_db.lookups == 2


async def test_an_unknown_key_is_refused_and_its_refusal_cached(counted_db, partner):
    auth = authenticator(counted_db)
    unknown = partner["keys"]["sk_test"][:-4] + "zzzz"
    for _ in range(3):
        with pytest.raises(ApiError) as refused:
            await auth.authenticate(KeyRequest(unknown))
        assert refused.value.status == 401
    assert counted_db.lookups == 1
