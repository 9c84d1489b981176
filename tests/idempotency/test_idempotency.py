"""Idempotency-Key on Shape V1 creates: required, replayed, refused on reuse, scoped, expiring."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from rehabref.db import Database
from rehabref.idempotency import service as idempotency
from tests.conftest import count
from tests.support.api import CREATE_PATHS, REFERRALS, bearer, create, error_of
from tests.support.payloads import v1_referral
from tests.support.rows import update_rows


def referrals_with(sql, external_ref: str) -> int:
    return count(sql, "SELECT count(*) FROM referrals WHERE external_ref = :e", e=external_ref)


@pytest.mark.parametrize("path", CREATE_PATHS)
@pytest.mark.parametrize("value", [None, ""])
def test_missing_key_is_400(client, partner, sql, path, value):
    body = v1_referral()
    headers = bearer(partner["keys"]["sk_test"])
    if value is not None:
        headers["Idempotency-Key"] = value
    error = error_of(client.post(path, json=body, headers=headers), 400, "idempotency_key_required")
    assert "Idempotency-Key" in error["fields"]
    assert referrals_with(sql, body["external_ref"]) == 0


@pytest.mark.parametrize(
    "key",
    ["k" * 256, "has space", "tab\tinside", "caf\u00e9".encode()],
)
def test_invalid_key_is_400(client, partner, key):
    response = client.post(
        REFERRALS,
        content=json.dumps(v1_referral()).encode(),
        headers={
            **bearer(partner["keys"]["sk_test"]),
            "Content-Type": "application/json",
            "Idempotency-Key": key,
        },
    )
    error = error_of(response, 400, "malformed_request")
    assert list(error["fields"]) == ["Idempotency-Key"]


def test_longest_allowed_key_works(client, partner):
    key = "k" * 254 + "!"
    assert create(client, partner["keys"]["sk_test"], idempotency_key=key).status_code == 201


def test_replay_returns_the_identical_response(client, partner, sql):
    key = partner["keys"]["sk_test"]
    body = v1_referral()
    first = create(client, key, body, idempotency_key="replay-1")
    assert first.status_code == 201
    assert "idempotent-replayed" not in first.headers
    for path in CREATE_PATHS:
        again = create(client, key, body, idempotency_key="replay-1", path=path)
        assert again.status_code == 201
        assert again.headers["idempotent-replayed"] == "true"
        assert again.content == first.content
    assert referrals_with(sql, body["external_ref"]) == 1


def test_replay_ignores_key_order_and_whitespace(client, partner):
    key = partner["keys"]["sk_test"]
    body = v1_referral()
    first = create(client, key, body, idempotency_key="replay-order")
    reordered = dict(reversed(list(body.items())))
    again = client.post(
        REFERRALS,
        content=json.dumps(reordered, indent=4).encode(),
        headers={
            **bearer(key),
            "Content-Type": "application/json",
            "Idempotency-Key": "replay-order",
        },
    )
    assert again.status_code == 201
    assert again.content == first.content


def test_same_key_with_another_body_is_422(client, partner, sql):
    key = partner["keys"]["sk_test"]
    body = v1_referral()
    assert create(client, key, body, idempotency_key="reused").status_code == 201
    other = v1_referral(reason="A different need")
    error = error_of(create(client, key, other, idempotency_key="reused"), 422)
    assert error["code"] == "idempotency_key_reused"
    assert list(error["fields"]) == ["Idempotency-Key"]
    assert referrals_with(sql, other["external_ref"]) == 0


def test_a_refused_request_does_not_burn_its_key(client, partner):
    key = partner["keys"]["sk_test"]
    error_of(create(client, key, v1_referral(care_mode="home"), idempotency_key="fix-me"), 422)
    assert create(client, key, v1_referral(), idempotency_key="fix-me").status_code == 201


def test_keys_are_scoped_to_partner_and_environment(client, partner, make_partner):
    other = make_partner()
    ids = {
        create(client, api_key, idempotency_key="shared-key").json()["referral_id"]
        for api_key in (
            partner["keys"]["sk_test"],
            partner["keys"]["sk_live"],
            other["keys"]["sk_test"],
        )
    }
    assert len(ids) == 3


def test_duplicate_external_ref_with_a_new_key_is_409(client, partner, sql):
    key = partner["keys"]["sk_test"]
    body = v1_referral()
    original = create(client, key, body).json()
    error = error_of(create(client, key, body), 409, "duplicate_external_ref")
    assert list(error["fields"]) == ["external_ref"]
    assert referrals_with(sql, body["external_ref"]) == 1
    found = client.get(
        REFERRALS, params={"external_ref": body["external_ref"]}, headers=bearer(key)
    )
    assert found.json()["data"][0]["referral_id"] == original["referral_id"]


def expire(sql, partner_id: str, idempotency_key: str) -> None:
    changed = update_rows(
        sql,
        "idempotency_records",
        {"partner_id": partner_id, "key": idempotency_key},
        expires_at=datetime.now(UTC) - timedelta(seconds=1),
    )
    assert changed == 1


def test_keys_are_remembered_for_24_hours(client, partner, sql):
    create(client, partner["keys"]["sk_test"], idempotency_key="ttl-check")
    with sql.connect() as conn:
        expires_at = conn.execute(
            text("SELECT expires_at FROM idempotency_records WHERE partner_id = :p"),
            {"p": partner["partner_id"]},
        ).scalar_one()
    if isinstance(expires_at, str):
        expires_at = datetime.fromisoformat(expires_at)
    if expires_at.tzinfo is None:
        expires_at = expires_at.replace(tzinfo=UTC)
    remaining = expires_at - datetime.now(UTC)
    assert timedelta(hours=23, minutes=59) < remaining <= timedelta(hours=24)


def test_an_expired_key_is_forgotten(client, partner, sql):
    key = partner["keys"]["sk_test"]
    body = v1_referral()
    first = create(client, key, body, idempotency_key="expiring")
    assert first.status_code == 201
    expire(sql, partner["partner_id"], "expiring")
    # The key no longer replays: the same body now meets its own external_ref ...
    error_of(create(client, key, body, idempotency_key="expiring"), 409, "duplicate_external_ref")
    # ... and a different body under the old key is a new referral, not a reuse error.
    fresh = create(client, key, v1_referral(), idempotency_key="expiring")
    assert fresh.status_code == 201
    assert "idempotent-replayed" not in fresh.headers
    assert fresh.json()["referral_id"] != first.json()["referral_id"]
    # The new response is remembered in place of the expired one.
    again = create(client, key, v1_referral(), idempotency_key="expiring")
    assert again.status_code == 422


def test_purge_expired_deletes_only_expired_records(client, partner, sql, database_url):
    key = partner["keys"]["sk_test"]
    create(client, key, idempotency_key="purge-old")
    create(client, key, idempotency_key="purge-new")
    expire(sql, partner["partner_id"], "purge-old")

    async def purge() -> int:
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                return await idempotency.purge_expired(conn)
        finally:
            await db.dispose()

    assert asyncio.run(purge()) >= 1
    remaining = count(
        sql,
        "SELECT count(*) FROM idempotency_records WHERE partner_id = :p",
        p=partner["partner_id"],
    )
    assert remaining == 1


def test_valid_key_rules():
    assert idempotency.valid_key("abc", required=True) == "abc"
    assert idempotency.valid_key(None, required=False) is None
    assert idempotency.valid_key("~" * 255, required=True) == "~" * 255
    for bad in ("~" * 256, "a b", "\x7f", "é"):
        with pytest.raises(Exception, match="malformed_request"):
            idempotency.valid_key(bad, required=False)
    with pytest.raises(Exception, match="idempotency_key_required"):
        idempotency.valid_key("", required=True)


def test_fingerprint_is_canonical_and_per_operation():
    body = {"b": [1, 2], "a": {"y": 1, "x": 2}}
    same = {"a": {"x": 2, "y": 1}, "b": [1, 2]}
    assert idempotency.fingerprint("op", body) == idempotency.fingerprint("op", same)
    assert idempotency.fingerprint("op", body) != idempotency.fingerprint("other", body)
    assert idempotency.fingerprint("op", body) != idempotency.fingerprint("op", {"b": [2, 1]})
    assert len(idempotency.fingerprint("op", body)) == 64


def test_unique_keys_are_fine(client, partner):
    key = partner["keys"]["sk_test"]
    for _ in range(3):
        assert create(client, key, idempotency_key=str(uuid.uuid4())).status_code == 201
