"""Test phone 5's delivery transport with a real worker, database and loopback receivers
(moved here from tests/events/test_schedule.py, where the worker used to fabricate the
simulated 500 itself; the contract changed: the partner's URL now gets three real copies).

The worker is wired as ``wiring.delivery_transport`` wires it: live deliveries through the
real sender, sandbox deliveries through ``PhoneFiveReplay`` around the same sender.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from rehabref.db import Database, sync_url
from rehabref.events.outbox import NewEvent, record_events
from rehabref.events.worker import DeliveryWorker, WorkerConfig
from rehabref.instance_secret import SecretBox
from rehabref.sandbox.phones import TEST_PHONES
from rehabref.sandbox.replay_transport import (
    NOTE_FIRST,
    NOTE_RETRY,
    NOTE_SIMULATED,
    NOTE_STALE,
    OUT_OF_TIME,
    STALE_ACCEPTED,
)
from rehabref.wiring import delivery_transport
from tests.sandbox.receiver import Receiver
from tests.support.care import insert_referral
from tests.support.databases import fresh_database
from tests.support.partners import TEST_SECRET_KEY, onboard
from tests.support.receiver import Receiver as ScriptedReceiver
from tests.support.receiver import always

PHONE_5 = TEST_PHONES[4]


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(tmp_path_factory.mktemp("replay")) as url:
        yield url


@pytest.fixture(scope="module")
def sql(db_url):
    engine = create_engine(sync_url(db_url))
    yield engine
    engine.dispose()


async def _seed(db: Database, partner_id: str, environment: str, referral_id: str, url: str) -> str:
    async with db.write() as conn:
        (event_id,) = await record_events(
            conn,
            SecretBox(TEST_SECRET_KEY).ring,
            partner_id=partner_id,
            environment=environment,
            events=[
                NewEvent(
                    "patient.intake_completed",
                    {"referral_id": referral_id, "status": "assistant_started"},
                    referral_id,
                    extra_targets=(url,),
                    only_extra_targets=True,
                )
            ],
        )
    return event_id


def _send_once(db_url: str, partner_id: str, environment: str, referral_id: str, url: str):
    """Record one event, run one worker round, return (delivery row, attempts)."""

    async def work() -> tuple[Any, list[Any]]:
        db = Database(db_url)
        config = WorkerConfig(retry_base_seconds=5, allow_loopback_targets=True)
        box = SecretBox(TEST_SECRET_KEY)
        worker = DeliveryWorker(
            db, box, config, transport=delivery_transport(db, config, ring=box.ring)
        )
        try:
            event_id = await _seed(db, partner_id, environment, referral_id, url)
            assert await worker.run_once() == 1
            async with db.read() as conn:
                delivery = (
                    await conn.execute(
                        text("SELECT * FROM deliveries WHERE event_id = :e"), {"e": event_id}
                    )
                ).one()
                attempts = list(
                    await conn.execute(
                        text(
                            "SELECT status_code, error, note FROM delivery_attempts "
                            "WHERE delivery_id = :d ORDER BY attempted_at, id"
                        ),
                        {"d": delivery.id},
                    )
                )
            return delivery, attempts
        finally:
            await worker.aclose()
            await db.dispose()

    return asyncio.run(work())


def test_phone_5_sends_three_copies_and_a_correct_receiver_processes_one(db_url, sql):
    partner = onboard(db_url, name="Replay")
    referral_id = insert_referral(sql, partner_id=partner["partner_id"], phone=PHONE_5)
    with Receiver(partner["keys"]["whsec_test"]) as receiver:
        delivery, attempts = _send_once(
            db_url, partner["partner_id"], "test", referral_id, receiver.url
        )
        copies = list(receiver.received)
    assert [(a.status_code, a.note) for a in attempts] == [
        (200, NOTE_FIRST),
        (500, NOTE_SIMULATED),
        (200, NOTE_RETRY),
        (401, NOTE_STALE),
    ]
    assert "simulated" in attempts[1].error
    assert (delivery.state, delivery.attempt_count, delivery.last_status_code) == (
        "succeeded",
        4,
        200,
    )
    assert [c["answered"] for c in copies] == [200, 200, 401]
    assert [c["processed"] for c in copies] == [True, False, False]
    assert len({c["headers"]["x-service-event-id"] for c in copies}) == 1


def test_a_receiver_that_accepts_the_stale_replay_is_told(db_url, sql):
    partner = onboard(db_url, name="Naive")
    referral_id = insert_referral(sql, partner_id=partner["partner_id"], phone=PHONE_5)
    with Receiver() as naive:  # no signature or timestamp check, no de-duplication
        delivery, attempts = _send_once(
            db_url, partner["partner_id"], "test", referral_id, naive.url
        )
        processed = [c for c in naive.received if c["processed"]]
    assert [a.status_code for a in attempts] == [200, 500, 200, 200]
    assert attempts[3].error == STALE_ACCEPTED
    assert delivery.state == "succeeded"
    assert len(processed) == 3  # what a partner's log now shows them: processed three times


def test_a_failing_receiver_retries_the_whole_sequence(db_url, sql):
    partner = onboard(db_url, name="Down")
    referral_id = insert_referral(sql, partner_id=partner["partner_id"], phone=PHONE_5)
    down = ScriptedReceiver(behaviour=always(503)).start()
    try:
        delivery, attempts = _send_once(
            db_url, partner["partner_id"], "test", referral_id, down.url
        )
    finally:
        down.stop()
    assert [a.status_code for a in attempts] == [503, 500, 503, 503]
    assert (delivery.state, delivery.attempt_count, delivery.last_status_code) == (
        "pending",
        4,
        503,
    )
    assert len(down.received) == 3


@pytest.mark.parametrize(
    ("environment", "phone"),
    [("live", PHONE_5), ("test", TEST_PHONES[0]), ("test", "+2348031234567")],
)
def test_every_other_delivery_is_one_ordinary_attempt(db_url, sql, environment, phone):
    partner = onboard(db_url, name=f"Plain {environment} {phone}")
    referral_id = insert_referral(
        sql, partner_id=partner["partner_id"], environment=environment, phone=phone
    )
    with Receiver() as receiver:
        delivery, attempts = _send_once(
            db_url, partner["partner_id"], environment, referral_id, receiver.url
        )
        received = len(receiver.received)
    assert [(a.status_code, a.note) for a in attempts] == [(200, None)]
    assert (delivery.state, delivery.attempt_count) == ("succeeded", 1)
    assert received == 1


def test_the_three_copies_share_one_sends_time(db_url, sql):
    """The worker's lease covers one ordinary send; a slow receiver cannot stretch the three
    copies past it: what is left without time is logged as a timeout."""
    partner = onboard(db_url, name="Slow")
    referral_id = insert_referral(sql, partner_id=partner["partner_id"], phone=PHONE_5)
    slow = ScriptedReceiver(behaviour=lambda _r, _i: (200, {}, 6.0)).start()
    try:
        delivery, attempts = _send_once(
            db_url, partner["partner_id"], "test", referral_id, slow.url
        )
    finally:
        slow.stop()
    assert [a.status_code for a in attempts] == [200, 500, 200, None]
    assert attempts[3].error == OUT_OF_TIME
    assert attempts[3].note == NOTE_STALE
    assert delivery.state == "succeeded"
