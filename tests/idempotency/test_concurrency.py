"""Concurrent duplicates: 16+ simultaneous requests never create more than one referral.

Each request runs in its own thread with its own connection; a barrier releases them together.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.conftest import count
from tests.support.api import REFERRALS, bearer
from tests.support.payloads import v1_referral
from tests.support.server import ServerProcess

PARALLEL = 20


def fire_together(base_url: str, requests: list[dict[str, Any]]) -> list[httpx.Response]:
    """Send every request at the same moment, each from its own client (own connection)."""
    barrier = threading.Barrier(len(requests))

    def send(request: dict[str, Any]) -> httpx.Response:
        with httpx.Client(base_url=base_url, timeout=60) as http:
            http.get("/healthz")  # open the connection before the race starts
            barrier.wait()
            return http.post(REFERRALS, json=request["json"], headers=request["headers"])

    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return list(pool.map(send, requests))


def test_identical_concurrent_requests_create_exactly_one_referral(server, partner, sql):
    body = v1_referral()
    headers = {**bearer(partner["keys"]["sk_test"]), "Idempotency-Key": f"race-{uuid.uuid4()}"}
    responses = fire_together(server.base_url, [{"json": body, "headers": headers}] * PARALLEL)

    outcomes = Counter(response.status_code for response in responses)
    assert set(outcomes) <= {201, 409}, outcomes
    created = [r for r in responses if r.status_code == 201]
    assert created, outcomes
    originals = [r for r in created if "idempotent-replayed" not in r.headers]
    assert len(originals) <= 1
    assert len({r.content for r in created}) == 1, "every 201 carries the identical body"
    for response in responses:
        if response.status_code == 409:
            assert response.json()["error"]["code"] == "idempotency_in_flight"
    referral_id = created[0].json()["referral_id"]
    assert (
        count(sql, "SELECT count(*) FROM referrals WHERE external_ref = :e", e=body["external_ref"])
        == 1
    )
    assert count(sql, "SELECT count(*) FROM events WHERE referral_id = :r", r=referral_id) == 1
    assert (
        count(sql, "SELECT count(*) FROM assistant_sessions WHERE referral_id = :r", r=referral_id)
        == 1
    )

    # Once the dust settles, a retry replays the same response.
    with httpx.Client(base_url=server.base_url) as http:
        retry = http.post(REFERRALS, json=body, headers=headers)
    assert retry.status_code == 201
    assert retry.headers["idempotent-replayed"] == "true"
    assert retry.content == created[0].content


def test_concurrent_keys_with_one_external_ref_create_exactly_one_referral(server, partner, sql):
    body = v1_referral()
    key = partner["keys"]["sk_test"]
    requests = [
        {"json": body, "headers": {**bearer(key), "Idempotency-Key": f"ext-{i}-{uuid.uuid4()}"}}
        for i in range(PARALLEL)
    ]
    responses = fire_together(server.base_url, requests)

    outcomes = Counter(response.status_code for response in responses)
    assert outcomes == {201: 1, 409: PARALLEL - 1}, outcomes
    for response in responses:
        if response.status_code == 409:
            assert response.json()["error"]["code"] == "duplicate_external_ref"
    assert (
        count(sql, "SELECT count(*) FROM referrals WHERE external_ref = :e", e=body["external_ref"])
        == 1
    )
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE partner_id = :p AND type = 'referral.created'",
            p=partner["partner_id"],
        )
        == 1
    )


def test_concurrent_distinct_referrals_all_succeed(server, partner, sql):
    key = partner["keys"]["sk_test"]
    requests = [
        {"json": v1_referral(), "headers": {**bearer(key), "Idempotency-Key": str(uuid.uuid4())}}
        for _ in range(PARALLEL)
    ]
    responses = fire_together(server.base_url, requests)
    assert [response.status_code for response in responses] == [201] * PARALLEL
    assert len({response.json()["referral_id"] for response in responses}) == PARALLEL
    assert (
        count(sql, "SELECT count(*) FROM referrals WHERE partner_id = :p", p=partner["partner_id"])
        == PARALLEL
    )


@pytest.fixture(scope="module")
def two_worker_server(backend, database_url, tmp_path_factory) -> Iterator[ServerProcess]:
    """Production layout on PostgreSQL: two uvicorn worker processes behind one port, so the
    in-process guard cannot help and only the database decides."""
    if backend != "postgres":
        pytest.skip("SQLite deployments serve from one process")
    log_path = tmp_path_factory.mktemp("two-workers") / "server.log"
    server = ServerProcess(database_url, log_path).start("--no-worker", "--workers", "2")
    yield server
    server.stop()


def test_identical_requests_across_worker_processes(two_worker_server, partner, sql):
    body = v1_referral()
    headers = {**bearer(partner["keys"]["sk_test"]), "Idempotency-Key": f"race-{uuid.uuid4()}"}
    responses = fire_together(
        two_worker_server.base_url, [{"json": body, "headers": headers}] * PARALLEL
    )
    outcomes = Counter(response.status_code for response in responses)
    assert set(outcomes) <= {201, 409}, outcomes
    created = [r for r in responses if r.status_code == 201]
    assert len({r.content for r in created}) == 1
    assert all(
        r.json()["error"]["code"] == "idempotency_in_flight"
        for r in responses
        if r.status_code == 409
    )
    assert (
        count(sql, "SELECT count(*) FROM referrals WHERE external_ref = :e", e=body["external_ref"])
        == 1
    )


def test_one_external_ref_across_worker_processes(two_worker_server, partner, sql):
    body = v1_referral()
    key = partner["keys"]["sk_test"]
    requests = [
        {"json": body, "headers": {**bearer(key), "Idempotency-Key": str(uuid.uuid4())}}
        for _ in range(PARALLEL)
    ]
    responses = fire_together(two_worker_server.base_url, requests)
    outcomes = Counter(response.status_code for response in responses)
    assert outcomes == {201: 1, 409: PARALLEL - 1}, outcomes
    assert (
        count(sql, "SELECT count(*) FROM referrals WHERE external_ref = :e", e=body["external_ref"])
        == 1
    )
