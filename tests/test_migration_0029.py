"""Migration 0029 on a database of the release before it: messages' recipients, contents,
senders, texts and choices and the conversations' states are sealed in batches under the
key file's ring (the ring the application reads); the unkeyed refs become the ring's blind
index (conversations and opt-outs found through the numbers we hold; an opt-out whose
number we do not hold keeps its old ref and still counts); erased rows are left alone, and
running it again changes nothing. Both backends."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection

from rehabref.channels.content import Reply, to_json
from rehabref.channels.sealing import (
    ADDRESS_INDEX,
    CHOICE,
    CONTENT,
    RECIPIENT,
    SENDER,
    TEXT,
    opt_out_refs,
)
from rehabref.crypto import blind_index, open_stored, seal
from rehabref.db import sync_url
from rehabref.instance_secret import load_key_ring
from rehabref.intake.sealing import opened_state
from rehabref.migrate import alembic_config, upgrade
from rehabref.referrals.sealing import PHONE
from tests.support.databases import fresh_database
from tests.support.key_file import key_file_only

ROWS = 1203  # more than two batches of 500
ONLY_IN_REFERRALS = "+2348077777777"  # a web conversation's number: no message holds it
NOWHERE = "+2348099999999"  # a STOP whose number no row holds any more
# The columns as the release before 0029 made them (PostgreSQL; SQLite has no such types).
OLD_TYPES = (
    "ALTER TABLE outbound_messages ALTER COLUMN content TYPE json USING content::json",
    "ALTER TABLE outbound_messages ALTER COLUMN recipient TYPE varchar(320)",
    "ALTER TABLE outbound_messages ALTER COLUMN recipient_ref TYPE varchar(16)",
    "ALTER TABLE inbound_messages ALTER COLUMN sender TYPE varchar(32)",
    "ALTER TABLE inbound_messages ALTER COLUMN sender_ref TYPE varchar(16)",
    "ALTER TABLE inbound_messages ALTER COLUMN choice_id TYPE varchar(200)",
    "ALTER TABLE intake_conversations ALTER COLUMN state TYPE json USING state::json",
    "ALTER TABLE intake_conversations ALTER COLUMN recipient_ref TYPE varchar(16)",
    "ALTER TABLE message_opt_outs ALTER COLUMN recipient_ref TYPE varchar(16)",
)


def old_ref(address: str) -> str:
    return hashlib.sha256(address.strip().lower().encode()).hexdigest()[:16]


def phone(n: int) -> str:
    return f"+234803{n:07d}"


def _as_before(conn: Connection, url: str) -> str:
    """The bind expression of a JSON value in the old schema."""
    if url.startswith("postgresql"):
        for statement in OLD_TYPES:
            conn.execute(text(statement))
        return "CAST(:{} AS json)"
    return ":{}"


def _fill(conn: Connection, url: str, ring_phone_sealed: str, now: datetime) -> None:
    json_of = _as_before(conn, url)
    conn.execute(
        text(
            "INSERT INTO referrals (id, partner_id, environment, shape, status,"
            " patient_first_name, patient_phone, patient_city, created_at, updated_at)"
            " VALUES (:id, 'ptn_x', 'live', 'v1', 'received', 'Ngozi', :phone, 'Enugu',"
            " :now, :now)"
        ),
        [
            {"id": "ref_1", "phone": phone(1), "now": now},
            {"id": "ref_2", "phone": ring_phone_sealed, "now": now},
        ],
    )
    conn.execute(
        text(
            "INSERT INTO outbound_messages (id, referral_id, environment, channel, recipient,"
            " recipient_ref, purpose, content, state, attempts, next_attempt_at, created_at,"
            f" updated_at) VALUES (:id, NULL, 'live', 'whatsapp', :to, :ref, 'test',"
            f" {json_of.format('content')}, 'sent', 1, :now, :now, :now)"
        ),
        [
            {
                "id": f"msg_{n:05d}",
                "to": phone(n),
                "ref": old_ref(phone(n)),
                "content": json.dumps(to_json(Reply(f"Hello Ngozi{n}"))),
                "now": now,
            }
            for n in range(ROWS)
        ]
        + [
            {
                "id": "msg_erased",
                "to": "[erased]",
                "ref": "erased",
                "content": json.dumps(to_json(Reply("[erased]"))),
                "now": now,
            }
        ],
    )
    conn.execute(
        text(
            "INSERT INTO inbound_messages (id, provider, provider_message_id, channel, sender,"
            " sender_ref, text, choice_id, referral_id, received_at, created_at) VALUES"
            " (:id, 'whatsapp', :id, 'whatsapp', :sender, :ref, :text, :choice, 'ref_1', :now,"
            " :now)"
        ),
        [
            {
                "id": f"inm_{n}",
                "sender": phone(1),
                "ref": old_ref(phone(1)),
                "text": None if n else "My knee hurts",
                "choice": "slot:weekends" if n else None,
                "now": now,
            }
            for n in range(2)
        ],
    )
    conn.execute(
        text(
            "INSERT INTO intake_conversations (referral_id, environment, channel, recipient_ref,"
            f" state, created_at, updated_at) VALUES (:r, 'live', :channel, :ref,"
            f" {json_of.format('state')}, :now, :now)"
        ),
        [
            {
                "r": "ref_1",
                "channel": "whatsapp",
                "ref": old_ref(phone(1)),
                "state": json.dumps({"step": "availability", "area": "Yaba Close"}),
                "now": now,
            },
            {
                "r": "ref_2",
                "channel": "web",
                "ref": old_ref(ONLY_IN_REFERRALS),
                "state": json.dumps({"step": "consent"}),
                "now": now,
            },
        ],
    )
    conn.execute(
        text(
            "INSERT INTO message_opt_outs (recipient_ref, opted_out, channel, opted_out_at,"
            f" history) VALUES (:ref, :out, 'whatsapp', :now, {json_of.format('history')})"
        ),
        [
            {"ref": old_ref(address), "out": True, "now": now, "history": "[]"}
            for address in (phone(1), ONLY_IN_REFERRALS, NOWHERE)
        ],
    )


def _everything(conn: Connection) -> dict[str, list[tuple[object, ...]]]:
    tables = {
        "outbound_messages": "id",
        "inbound_messages": "id",
        "intake_conversations": "referral_id",
        "message_opt_outs": "recipient_ref",
    }
    return {
        name: [tuple(row) for row in conn.execute(text(f"SELECT * FROM {name} ORDER BY {key}"))]
        for name, key in tables.items()
    }


def test_existing_messages_are_sealed_and_rekeyed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = key_file_only(monkeypatch, tmp_path / "keys" / "rehabref.key")
    ring = load_key_ring(None, key_file)
    now = datetime.now(UTC)
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), "0028")
        engine = create_engine(sync_url(url))
        with engine.begin() as conn:
            _fill(conn, url, seal(ring, PHONE, ONLY_IN_REFERRALS), now)

        upgrade(url)

        def index(address: str) -> str:
            return blind_index(ring, ADDRESS_INDEX, address)

        with engine.connect() as conn:
            sent = conn.execute(text("SELECT * FROM outbound_messages ORDER BY id")).all()
            received = conn.execute(text("SELECT * FROM inbound_messages ORDER BY id")).all()
            conversations = conn.execute(
                text("SELECT * FROM intake_conversations ORDER BY referral_id")
            ).all()
            opt_outs = set(
                conn.execute(text("SELECT recipient_ref FROM message_opt_outs")).scalars()
            )
            before = _everything(conn)
        assert len(sent) == ROWS + 1
        for n, row in enumerate(sent[:ROWS]):
            assert row.recipient.startswith("s1.k1.") and row.content.startswith("s1.k1.")
            assert row.recipient_ref == index(phone(n))
        eighth = sent[8]
        assert open_stored(ring, RECIPIENT, eighth.recipient) == phone(8)
        content = open_stored(ring, CONTENT, eighth.content)
        assert content is not None and json.loads(content) == to_json(Reply("Hello Ngozi8"))
        erased = sent[ROWS]
        assert (erased.id, erased.recipient, erased.recipient_ref) == (
            "msg_erased",
            "[erased]",
            "erased",
        )

        assert [open_stored(ring, SENDER, row.sender) for row in received] == [phone(1)] * 2
        assert {row.sender_ref for row in received} == {index(phone(1))}
        assert [open_stored(ring, TEXT, row.text) for row in received] == ["My knee hurts", None]
        assert open_stored(ring, CHOICE, received[1].choice_id) == "slot:weekends"
        assert all(row.text is None or row.text.startswith("s1.") for row in received)

        whatsapp, web = conversations
        assert whatsapp.recipient_ref == index(phone(1))
        assert whatsapp.state.startswith("s1.k1.")
        assert opened_state(ring, whatsapp.state) == {"step": "availability", "area": "Yaba Close"}
        # Found through the referral's (sealed) phone.
        assert web.recipient_ref == index(ONLY_IN_REFERRALS)
        # The STOPs follow their numbers; the one whose number is nowhere keeps its old ref,
        # which the application still matches (channels.sealing.opt_out_refs).
        assert opt_outs == {index(phone(1)), index(ONLY_IN_REFERRALS), old_ref(NOWHERE)}
        assert old_ref(NOWHERE) in opt_out_refs(ring, NOWHERE)

        # Idempotent: again from 0028 (a run interrupted half-way), nothing changes twice.
        command.downgrade(alembic_config(url), "0028")
        upgrade(url)
        with engine.connect() as conn:
            again = _everything(conn)
        engine.dispose()
    assert again == before


def test_it_refuses_to_seal_under_a_key_made_up_on_the_spot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = key_file_only(monkeypatch, tmp_path / "elsewhere" / "rehabref.key")
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), "0028")
        engine = create_engine(sync_url(url))
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO inbound_messages (id, provider, provider_message_id, channel,"
                    " sender, sender_ref, text, received_at, created_at) VALUES ('inm_1',"
                    " 'twilio', 'SM1', 'sms', '+2348031111111', 'abc', 'STOP', :now, :now)"
                ),
                {"now": datetime.now(UTC)},
            )
        with pytest.raises(RuntimeError, match="no key was found"):
            upgrade(url)
        with engine.connect() as conn:
            sender = conn.execute(text("SELECT sender FROM inbound_messages")).scalar_one()
        engine.dispose()
    assert sender == "+2348031111111" and not key_file.exists()
