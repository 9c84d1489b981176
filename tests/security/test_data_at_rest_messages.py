"""Patient messages at rest: the numbers we write to and hear from, what we wrote, what the
patient wrote and the conversation's answers are sealed in the database file and in a
pg_dump; the provider, the coordinator's timeline and the data-subject export still get
them in clear; references are the ring's keyed blind index, and a number that said STOP
before a key rotation is still not messaged after it.

Real server with its message worker and the WhatsApp Cloud API stand-in (tests/channels),
on SQLite or PostgreSQL (REHABREF_TEST_DATABASE).
"""

from __future__ import annotations

import asyncio
import secrets
import string
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import text

from rehabref.channels import opt_outs
from rehabref.channels.content import Reply
from rehabref.channels.failures import Fallback
from rehabref.channels.outbox import enqueue
from rehabref.channels.providers import ChannelProviders
from rehabref.channels.sealing import (
    ADDRESS_INDEX,
    address_ref,
    address_refs,
    legacy_address_ref,
)
from rehabref.channels.timeline import UNREADABLE, timeline
from rehabref.channels.worker import UNOPENABLE, MessageWorker, MessageWorkerConfig
from rehabref.clock import utcnow
from rehabref.crypto import blind_index, new_key, parse_key_ring
from rehabref.db import Database
from rehabref.intake import conversation_store
from rehabref.sandbox.messages import SandboxChannel
from tests.channels import conftest as channel_fixtures
from tests.channels.conftest import new_phone
from tests.channels.patient import PREFERRED, choices, nth_message, post_signed
from tests.conftest import auth
from tests.console.operators import make_operator, sign_in
from tests.support.database_copy import columns_holding, database_copy
from tests.support.graph_api import (
    inbound_button,
    inbound_list,
    inbound_template_button,
    inbound_text,
)
from tests.support.operators import create_operator, op_headers
from tests.support.partners import TEST_RING, TEST_SECRET_KEY
from tests.support.payloads import v1_referral

# The channel tests' server, wired to the provider stand-ins, with its worker running.
graph = channel_fixtures.graph
twilio = channel_fixtures.twilio
smtp = channel_fixtures.smtp
live_server = channel_fixtures.live_server
api = channel_fixtures.api


def _word() -> str:
    """Letters found nowhere else in the database (a name, a place)."""
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(10)).capitalize()


def _tap(api, phone: str, message: dict[str, Any]) -> str | None:
    """Tap the patient's preferred choice when the message offers one (the area question
    offers none: the patient types it)."""
    wanted = next((choice for choice in PREFERRED if choice in choices(message)), None)
    if wanted is None:
        return None
    if message["type"] == "template":
        body = inbound_template_button(phone, wanted, wanted)
    elif message["interactive"]["type"] == "button":
        body = inbound_button(phone, wanted, wanted)
    else:
        body = inbound_list(phone, wanted, wanted)
    assert post_signed(api, body).status_code == 200
    return wanted


def test_messages_both_ways_are_sealed_yet_the_provider_timeline_and_export_read_them(
    api, graph, live_server, partner, sql, database_url
):
    first, place, said = _word(), _word(), _word()
    phone = new_phone()
    body = v1_referral(patient={"first_name": first, "phone": phone, "city": "Lagos"})
    created = api.post(
        "/api/v1/partners/referrals",
        json=body,
        headers=auth(partner["keys"]["sk_live"], f"seal-{secrets.token_hex(6)}"),
    )
    assert created.status_code == 201, created.text
    referral_id = created.json()["referral_id"]

    # The worker opened recipient and content for the provider: the template names the
    # patient and went to their number.
    template = nth_message(graph, phone, 1)
    assert first in str(template)
    # The patient writes words of their own, then answers up to typing their area.
    typed = f"Good morning {said} here"
    assert post_signed(api, inbound_text(phone, typed)).status_code == 200
    message, n = nth_message(graph, phone, 2), 2
    while _tap(api, phone, message) is not None:
        n += 1
        message = nth_message(graph, phone, n)
    assert post_signed(api, inbound_text(phone, f"Yaba {place}")).status_code == 200
    nth_message(graph, phone, n + 1)  # the next question: the area is in the state

    with sql.connect() as conn:
        sent = conn.execute(
            text(
                "SELECT recipient, recipient_ref, content FROM outbound_messages"
                " WHERE referral_id = :r"
            ),
            {"r": referral_id},
        ).all()
        received = conn.execute(
            text(
                "SELECT sender, sender_ref, text, choice_id FROM inbound_messages"
                " WHERE referral_id = :r"
            ),
            {"r": referral_id},
        ).all()
        conversation = conn.execute(
            text("SELECT recipient_ref, state FROM intake_conversations WHERE referral_id = :r"),
            {"r": referral_id},
        ).one()
    ref = blind_index(TEST_RING, ADDRESS_INDEX, phone)
    assert sent and received
    for row in sent:
        assert row.recipient.startswith("s1.k0.") and row.content.startswith("s1.k0.")
        assert row.recipient_ref == ref
    for row in received:
        assert row.sender.startswith("s1.k0.") and row.sender_ref == ref
        assert all(value is None or value.startswith("s1.k0.") for value in row[2:])
    assert conversation.recipient_ref == ref and conversation.state.startswith("s1.k0.")
    # The old unkeyed reference is gone: without the key a ref cannot be tested against
    # guessed numbers.
    assert legacy_address_ref(phone) not in {row.recipient_ref for row in sent}

    copy = database_copy(database_url)
    for secret in (phone, phone.removeprefix("+"), first, said, place):
        assert secret.encode() not in copy, (
            f"{secret!r} is readable in the database copy: {columns_holding(sql, secret)}"
        )

    # Readers open them: the coordinator's timeline on the referral page...
    with httpx.Client(base_url=live_server.base_url, timeout=30) as console:
        assert sign_in(console, make_operator(database_url)["token"]).status_code == 303
        page = console.get(f"/console/referrals/{referral_id}")
    assert page.status_code == 200
    assert typed in page.text and f"Yaba {place}" in page.text  # the patient's words
    assert first in page.text and "s1.k0." not in page.text  # ours
    # ...and the data-subject export, both ways and the conversation's answers.
    token = create_operator(database_url)
    exported = api.post(
        "/api/v1/ops/data-subject-requests",
        json={"kind": "export", "phone": phone},
        headers=op_headers(token),
    )
    assert exported.status_code == 200, exported.text
    document = exported.json()["export"]
    assert {m["to"] for m in document["messages_sent"]} == {phone}
    assert any(first in (m["text"] or "") for m in document["messages_sent"])
    assert {m["from"] for m in document["messages_received"]} == {phone}
    assert typed in {m["text"] for m in document["messages_received"]}
    [referral] = document["referrals"]
    assert referral["conversations"][0]["state"]["area"] == f"Yaba {place}"
    assert "s1.k0." not in exported.text


def test_a_stop_said_before_a_key_rotation_still_holds_after_it(partner, sql, database_url):
    """The STOP is stored under the old key's index; after a new key is added, a message
    written (indexed under the new key) is suppressed by the worker, the conversation is
    still found by the number, and START still finds the STOP."""
    old = TEST_RING
    rotated = parse_key_ring(f"k0:{TEST_SECRET_KEY},k1:{new_key()}")
    assert rotated.current_id == "k1"
    phone = new_phone()
    # Far enough ahead that the module's live server never finds these messages due.
    later = utcnow() + timedelta(days=400)
    referral_id = f"ref_rot{secrets.token_hex(8)}"
    with sql.begin() as conn:  # the conversation's referral
        conn.execute(
            text(
                "INSERT INTO referrals (id, partner_id, environment, shape, status,"
                " patient_first_name, patient_city, created_at, updated_at) VALUES"
                " (:id, :partner, 'live', 'v1', 'received', 'Ada', 'Lagos', :now, :now)"
            ),
            {"id": referral_id, "partner": partner["partner_id"], "now": later},
        )

    async def scenario() -> tuple[str | None, bool, bool, str | None]:
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                await conversation_store.start(
                    conn,
                    old,
                    referral_id=referral_id,
                    environment="live",
                    channel="whatsapp",
                    recipient_ref=address_ref(old, phone),
                    state={"step": "consent", "language": "en"},
                    now=later,
                )
                assert await opt_outs.opt_out(
                    conn, old, address=phone, channel="whatsapp", now=later
                )
            async with db.write() as conn:
                message_id = await enqueue(
                    conn,
                    rotated,
                    channel="whatsapp",
                    to=phone,
                    content=Reply("After the rotation"),
                    purpose="test.rotation",
                    environment="live",
                    referral_id=None,
                    now=later,
                )
            worker = MessageWorker(
                db,
                ChannelProviders(live={}, test=SandboxChannel()),
                Fallback(
                    ChannelProviders(live={}, test=SandboxChannel()),
                    undeliverable=_nobody,
                    ring=rotated,
                ),
                MessageWorkerConfig(),
                clock=lambda: later + timedelta(seconds=1),
            )
            claimed = await worker.claim(only=message_id)
            assert claimed == []
            async with db.read() as conn:
                state = (
                    await conn.execute(
                        text("SELECT state, last_error FROM outbound_messages WHERE id = :i"),
                        {"i": message_id},
                    )
                ).one()
                found = await conversation_store.for_recipient(
                    conn, rotated, address_refs(rotated, phone), open_only=True
                )
                opted_out = await opt_outs.is_opted_out(conn, rotated, phone)
            async with db.write() as conn:
                started = await opt_outs.opt_in(
                    conn, rotated, address=phone, channel="whatsapp", now=later
                )
            return (
                state.state,
                opted_out,
                started,
                found["state"]["step"] if found is not None else None,
            )
        finally:
            await db.dispose()

    state, opted_out, started, step = asyncio.run(scenario())
    assert state == "suppressed"
    assert opted_out and started
    assert step == "consent"  # the conversation begun under the old key, opened
    # The new key indexes the number differently: without matching every key the STOP and
    # the conversation would have been missed.
    assert address_ref(rotated, phone) != address_ref(old, phone)


async def _nobody(*_: object) -> None:
    return None


def test_a_message_sealed_under_a_removed_key_fails_alone(sql, database_url):
    """A key removed from the ring (docs/security.md, rotation step 4) leaves its messages
    unopenable: each is failed with the reason, once, and the message beside it is still
    claimed; the coordinator's timeline shows a placeholder instead of failing."""
    removed = parse_key_ring(f"k9:{new_key()}")
    later = utcnow() + timedelta(days=401)  # never due for the module's live server
    referral_id = f"ref_gone{secrets.token_hex(8)}"

    async def scenario() -> tuple[list[str], Any, list[Any]]:
        db = Database(database_url, pool_size=1)
        try:
            ids = []
            async with db.write() as conn:
                for ring, words in ((removed, "Sealed under a removed key"), (TEST_RING, "Fine")):
                    ids.append(
                        await enqueue(
                            conn,
                            ring,
                            channel="whatsapp",
                            to=new_phone(),
                            content=Reply(words),
                            purpose="test.removed_key",
                            environment="test",
                            referral_id=referral_id,
                            now=later,
                        )
                    )
            worker = MessageWorker(
                db,
                ChannelProviders(live={}, test=SandboxChannel()),
                Fallback(
                    ChannelProviders(live={}, test=SandboxChannel()),
                    undeliverable=_nobody,
                    ring=TEST_RING,
                ),
                MessageWorkerConfig(),
                clock=lambda: later + timedelta(seconds=1),
            )
            # One at a time: the suite's other messages in this database are not this test's.
            claimed = [m.id for m in await worker.claim(only=ids[0])]
            claimed += [m.id for m in await worker.claim(only=ids[1])]
            async with db.read() as conn:
                gone = (
                    await conn.execute(
                        text("SELECT state, last_error FROM outbound_messages WHERE id = :i"),
                        {"i": ids[0]},
                    )
                ).one()
                shown = await timeline(conn, TEST_RING, referral_id)
            return [ids[1]] if ids[1] in claimed and ids[0] not in claimed else [], gone, shown
        finally:
            await db.dispose()

    fine, gone, shown = asyncio.run(scenario())
    assert fine, "the message beside the unopenable one is claimed, the other is not"
    assert tuple(gone) == ("failed", UNOPENABLE)
    assert sorted(entry.text for entry in shown) == ["Fine", UNREADABLE]
