"""End-to-end delivery: real server, real `rehabref worker` subprocess, real loopback receiver."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
import uuid

import httpx
import pytest
from sqlalchemy import text

from rehabref.webhooks import verify
from tests.conftest import auth, count
from tests.events.conftest import register, trigger
from tests.support.payloads import v1_referral
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess, isolated_environ


def test_referral_event_is_signed_and_verified_by_independent_receiver(
    client, partner, receiver, start_worker
):
    key = partner["keys"]["sk_test"]
    secret = partner["keys"]["whsec_test"]
    register(client, key, receiver.url)
    created = client.post(
        "/api/v1/partners/referrals",
        json=v1_referral(route="contact"),
        headers=auth(key, str(uuid.uuid4())),
    )
    assert created.status_code == 201, created.text
    referral_id = created.json()["referral_id"]
    start_worker()
    receiver.wait_for(lambda: len(receiver.received) >= 2)
    types = set()
    for item in receiver.received:
        assert item.signature_valid(secret), item.signature
        assert not item.signature_valid(partner["keys"]["whsec_live"])
        event = verify(
            item.body,
            {"X-Service-Timestamp": item.timestamp, "X-Service-Signature": item.signature},
            secret,
        )
        assert event["event_id"] == item.event_id
        assert event["data"]["referral_id"] == referral_id
        assert set(event) == {"event_id", "type", "occurred_at", "data"}
        types.add(event["type"])
    assert types == {"referral.created", "contact.requested"}


def test_retries_with_growing_gaps_and_one_event_id(client, partner, start_worker, sql):
    failures = 3
    receiver = Receiver(behaviour=lambda _r, i: (500 if i < failures else 200, {}, 0.0)).start()
    try:
        sent = trigger(client, partner["keys"]["sk_test"], "appointment.booked", receiver.url)
        start_worker(REHABREF_WEBHOOK_RETRY_BASE_SECONDS="0.4")
        receiver.wait_for(lambda: len(receiver.received) >= failures + 1)
        arrivals = receiver.for_event(sent["event_id"])
        assert len(arrivals) == failures + 1
        assert {item.event_id for item in receiver.received} == {sent["event_id"]}
        assert len({item.body for item in arrivals}) == 1  # the same envelope every time
        gaps = [b.at - a.at for a, b in itertools.pairwise(arrivals)]
        # attempt n waits at least base * 2**(n-1): 0.4, 0.8, 1.6 s (poll latency only adds)
        for n, gap in enumerate(gaps, start=1):
            assert gap >= 0.4 * 2 ** (n - 1) * 0.95, gaps
        path = f"/api/v1/partners/events/{sent['event_id']}"
        headers = auth(partner["keys"]["sk_test"])

        def current() -> dict:
            return client.get(path, headers=headers).json()["deliveries"][0]

        receiver.wait_for(lambda: current()["state"] == "succeeded")  # result recorded
        delivery = current()
        assert [a["status_code"] for a in delivery["attempts"]] == [500, 500, 500, 200]
        assert delivery["attempts"][0]["response_excerpt"] == '{"error":"nope"}'
        with sql.connect() as conn:  # the receiver's answer is sealed at rest
            stored = (
                conn.execute(
                    text(
                        "SELECT a.response_excerpt FROM delivery_attempts a JOIN deliveries d"
                        " ON d.id = a.delivery_id WHERE d.event_id = :e AND a.status_code = 500"
                    ),
                    {"e": sent["event_id"]},
                )
                .scalars()
                .all()
            )
        assert len(stored) == failures and all(value.startswith("s1.k0.") for value in stored)
        assert all(a["latency_ms"] is not None for a in delivery["attempts"])
    finally:
        receiver.stop()


def test_receiver_down_then_up(client, partner, start_worker):
    receiver = Receiver()  # not started: connection refused
    sent = trigger(client, partner["keys"]["sk_test"], "referral.created", receiver.url)
    start_worker(REHABREF_WEBHOOK_RETRY_BASE_SECONDS="0.2")
    key = partner["keys"]["sk_test"]

    def attempts() -> list[dict]:
        detail = client.get(f"/api/v1/partners/events/{sent['event_id']}", headers=auth(key))
        return detail.json()["deliveries"][0]["attempts"]

    deadline = time.monotonic() + 20
    while len(attempts()) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    failed = attempts()
    assert len(failed) >= 2
    assert all(a["status_code"] is None and a["error"].startswith("connect_error") for a in failed)
    receiver.start()
    try:
        receiver.wait_for(lambda: sent["event_id"] in receiver.event_ids())
        assert receiver.received[0].signature_valid(partner["keys"]["whsec_test"])
    finally:
        receiver.stop()


def test_worker_killed_mid_delivery_loses_nothing(client, partner, start_worker, sql):
    # Slow receiver: deliveries are in flight when the worker is killed.
    receiver = Receiver(behaviour=lambda _r, _i: (200, {}, 1.5)).start()
    key = partner["keys"]["sk_test"]
    try:
        sent = [trigger(client, key, "provider.matched", receiver.url) for _ in range(30)]
        first = start_worker(REHABREF_WEBHOOK_LEASE_SECONDS="20")
        receiver.wait_for(lambda: len(receiver.received) >= 1)
        first.kill()
        assert first.process is not None and first.process.returncode == -9
        held = count(
            sql,
            "SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id "
            "WHERE e.partner_id = :p AND d.claimed_by IS NOT NULL AND d.state = 'pending'",
            p=partner["partner_id"],
        )
        assert held >= 1  # the killed worker died holding claims
        start_worker(REHABREF_WEBHOOK_LEASE_SECONDS="20")
        wanted = {item["event_id"] for item in sent}
        receiver.wait_for(lambda: wanted <= receiver.event_ids(), timeout=60)
        path = "/api/v1/partners/events/{}"

        def states() -> set[str]:
            return {
                client.get(path.format(e), headers=auth(key)).json()["deliveries"][0]["state"]
                for e in wanted
            }

        # the restarted worker re-sent what the killed one held once its lease expired
        receiver.wait_for(lambda: states() == {"succeeded"}, timeout=30)
    finally:
        receiver.stop()


def test_two_workers_on_postgres_never_send_one_event_twice_at_once(
    backend, client, partner, start_worker, sql
):
    if backend != "postgres":
        pytest.skip("several claimers share work with SKIP LOCKED on PostgreSQL only")
    receiver = Receiver(behaviour=lambda _r, _i: (200, {}, 0.02)).start()
    key = partner["keys"]["sk_test"]
    try:
        start_worker()
        start_worker()
        ids = set()
        for _ in range(4):
            for _ in range(25):
                ids.add(trigger(client, key, "assistant.started", receiver.url)["event_id"])
        receiver.wait_for(lambda: ids <= receiver.event_ids(), timeout=60)
        time.sleep(0.5)
        assert max(receiver.max_in_flight_per_event[e] for e in ids) == 1
        # Every delivery succeeded on its first attempt: each event arrived exactly once.
        assert all(len(receiver.for_event(e)) == 1 for e in ids)
        succeeded = count(
            sql,
            "SELECT count(*) FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id "
            "JOIN events e ON e.id = d.event_id WHERE e.partner_id = :p AND a.status_code = 200",
            p=partner["partner_id"],
        )
        assert succeeded == len(ids)
    finally:
        receiver.stop()


def test_secret_rotation_sends_both_signatures(
    client, partner, receiver, start_worker, database_url
):
    key = partner["keys"]["sk_test"]
    old = partner["keys"]["whsec_test"]
    command = [sys.executable, "-m", "rehabref.cli", "partners", "webhook-secret", "rotate"]
    rotated = subprocess.run(
        [*command, "--partner", partner["partner_id"], "--env", "test", "--json"],
        env={
            **isolated_environ(),
            "REHABREF_DATABASE_URL": database_url,
            "REHABREF_SECRET_KEY": "test-secret-key-not-for-production",
        },
        capture_output=True,
        text=True,
        check=True,
    )
    new = json.loads(rotated.stdout)["secret"]
    assert new.startswith("whsec_test_") and new != old
    trigger(client, key, "referral.closed", receiver.url)
    start_worker()
    receiver.wait_for(lambda: len(receiver.received) >= 1)
    item = receiver.received[0]
    assert len(item.signature.split(" ")) == 2
    assert item.signature_valid(old) and item.signature_valid(new)


def test_serve_runs_the_worker_in_process(database_url, partner, receiver, tmp_path):
    server = ServerProcess(
        database_url, tmp_path / "serve.log", REHABREF_WEBHOOK_RETRY_BASE_SECONDS="0.3"
    ).start()
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            sent = trigger(http, partner["keys"]["sk_test"], "session.completed", receiver.url)
        receiver.wait_for(lambda: sent["event_id"] in receiver.event_ids())
        assert receiver.received[0].signature_valid(partner["keys"]["whsec_test"])
    finally:
        server.stop()


def test_sigterm_finishes_in_flight_deliveries_and_releases_claims(
    client, partner, start_worker, sql
):
    receiver = Receiver(behaviour=lambda _r, _i: (200, {}, 1.0)).start()
    key = partner["keys"]["sk_test"]
    try:
        sent = [trigger(client, key, "referral.created", receiver.url) for _ in range(5)]
        worker = start_worker()
        receiver.wait_for(lambda: len(receiver.received) >= 1)
        assert worker.process is not None
        worker.process.terminate()
        assert worker.process.wait(timeout=30) == 0
        held = count(
            sql,
            "SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id "
            "WHERE e.partner_id = :p AND d.claimed_by IS NOT NULL",
            p=partner["partner_id"],
        )
        assert held == 0
        arrived = receiver.event_ids()
        for item in sent:
            detail = client.get(f"/api/v1/partners/events/{item['event_id']}", headers=auth(key))
            state = detail.json()["deliveries"][0]["state"]
            # what was in flight was finished and recorded; the rest waits, unclaimed
            assert state == ("succeeded" if item["event_id"] in arrived else "pending")
    finally:
        receiver.stop()
