"""Seal patient messages and conversations at rest

- ``outbound_messages.recipient`` and ``content``, ``inbound_messages.sender``, ``text`` and
  ``choice_id`` and ``intake_conversations.state`` become sealed values
  (``s1.<key id>.<...>``, rehabref.crypto.seal): the columns become TEXT (``content`` and
  ``state`` were JSON: the sealed JSON text is stored).
- ``recipient_ref`` / ``sender_ref`` (outbound and inbound messages, conversations, the
  opt-outs' primary key) change from an unkeyed SHA-256 prefix of the address (16 hex
  characters) to the ring's keyed blind index of it (rehabref.crypto.blind_index, 32
  characters): the columns widen to 64. Messages' refs are recomputed from their own
  address. Conversations and opt-outs hold only the old ref: their address is found among
  the messages' recipients and senders and the referrals' phones and e-mail addresses
  (opened); one that cannot be found keeps its old ref (the application also looks opt-outs
  up by the old ref, so such a STOP is still honoured; a conversation left so is only no
  longer matched to replies, as it would be once closed).
- Existing rows are changed here, in batches, under the ring the application reads (the key
  file or ``REHABREF_SECRET_KEY``, as 0025 reads it). Idempotent: a value this ring opens is
  left as it is and a ref already re-keyed is not old-style, so a migration interrupted
  half-way can simply run again. Erased rows (``[erased]``) are left as they are.

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-24
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op

from rehabref.crypto import (
    SEALED_PREFIX,
    KeyRing,
    blind_index,
    open_sealed,
    seal,
)
from rehabref.migration_sealing import MigrationRing, is_sealed_under

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None

BATCH = 500
# The application's purposes (channels/sealing.py, intake/sealing.py, referrals/sealing.py),
# written out: a migration must not change when the code does.
RECIPIENT = "message.recipient"
CONTENT = "message.content"
SENDER = "message.sender"
TEXT = "message.text"
CHOICE = "message.choice_id"
ADDRESS_INDEX = "message.recipient"
STATE = "intake.conversation_state"
REFERRAL_PHONE = "referral.patient_phone"
REFERRAL_EMAIL = "referral.patient_email"
ERASED = "[erased]"
# The reference written before this migration: 16 hex characters.
OLD_REF = re.compile(r"^[0-9a-f]{16}$")

WIDENED: dict[str, tuple[tuple[str, Any, Any, bool, str | None], ...]] = {
    # (column, was, becomes, nullable, PostgreSQL's USING when the type changes kind)
    "outbound_messages": (
        ("recipient", sa.String(length=320), sa.Text(), False, None),
        ("recipient_ref", sa.String(length=16), sa.String(length=64), False, None),
        ("content", sa.JSON(), sa.Text(), False, "content::text"),
    ),
    "inbound_messages": (
        ("sender", sa.String(length=32), sa.Text(), False, None),
        ("sender_ref", sa.String(length=16), sa.String(length=64), False, None),
        ("choice_id", sa.String(length=200), sa.Text(), True, None),
    ),
    "intake_conversations": (
        ("recipient_ref", sa.String(length=16), sa.String(length=64), False, None),
        ("state", sa.JSON(), sa.Text(), False, "state::text"),
    ),
    "message_opt_outs": (
        ("recipient_ref", sa.String(length=16), sa.String(length=64), False, None),
    ),
}


def old_ref(address: str) -> str:
    """The unkeyed reference of before (channels/outbox.py recipient_ref, written out)."""
    return hashlib.sha256(address.strip().lower().encode()).hexdigest()[:16]


def _opened(ring: KeyRing, purpose: str, value: str) -> str:
    return open_sealed(ring, purpose, value) if is_sealed_under(ring, purpose, value) else value


def _sealed(ring: KeyRing, purpose: str, value: str | None) -> str | None:
    if value is None or is_sealed_under(ring, purpose, value):
        return value
    return seal(ring, purpose, value)


def _pages(
    bind: sa.engine.Connection, table: Any, key: str, where: Any
) -> Iterator[list[sa.RowMapping]]:
    """Rows matching ``where``, ``BATCH`` at a time (keyset on ``key``)."""
    row_key = table.c[key]
    after = ""
    while True:
        rows = list(
            bind.execute(
                sa.select(table).where(row_key > after, where).order_by(row_key).limit(BATCH)
            ).mappings()
        )
        if not rows:
            return
        yield rows
        after = str(rows[-1][key])


def _old_refs_to_find(bind: sa.engine.Connection) -> set[str]:
    refs: set[str] = set()
    for name in ("intake_conversations", "message_opt_outs"):
        ref = sa.table(name, sa.column("recipient_ref")).c.recipient_ref
        found = bind.execute(sa.select(ref).distinct()).scalars()
        refs.update(ref for ref in found if OLD_REF.match(ref))
    return refs


def _addresses_of(
    bind: sa.engine.Connection, keys: MigrationRing, wanted: set[str]
) -> dict[str, str]:
    """Old reference -> plain address, for the ``wanted`` references, from every address we
    hold: messages' recipients and senders, referrals' phones and e-mail addresses."""
    found: dict[str, str] = {}
    if not wanted:
        return found
    sources = (
        ("outbound_messages", "id", {"recipient": RECIPIENT}),
        ("inbound_messages", "id", {"sender": SENDER}),
        ("referrals", "id", {"patient_phone": REFERRAL_PHONE, "patient_email": REFERRAL_EMAIL}),
    )
    for name, key, columns in sources:
        table = sa.table(name, sa.column(key), *(sa.column(c) for c in columns))
        for rows in _pages(bind, table, key, sa.true()):
            for row in rows:
                for column, purpose in columns.items():
                    value = row[column]
                    if not value or value == ERASED:
                        continue
                    address = _opened(keys.get(), purpose, value)
                    ref = old_ref(address)
                    if ref in wanted:
                        found[ref] = address
    return found


def _rekey_conversations(
    bind: sa.engine.Connection, keys: MigrationRing, address_of: dict[str, str]
) -> None:
    table = sa.table(
        "intake_conversations", sa.column("referral_id"), sa.column("recipient_ref"),
        sa.column("state"),
    )  # fmt: skip
    change = (
        sa.update(table)
        .where(table.c.referral_id == sa.bindparam("row_key"))
        .values(recipient_ref=sa.bindparam("new_ref"), state=sa.bindparam("new_state"))
    )
    for rows in _pages(bind, table, "referral_id", table.c.state.not_like(f"{SEALED_PREFIX}%")):
        updates = []
        for row in rows:
            ref = row["recipient_ref"]
            address = address_of.get(ref)
            updates.append(
                {
                    "row_key": row["referral_id"],
                    "new_ref": blind_index(keys.get(), ADDRESS_INDEX, address) if address else ref,
                    "new_state": seal(keys.get(), STATE, row["state"]),
                }
            )
        bind.execute(change, updates)


def _rekey_opt_outs(
    bind: sa.engine.Connection, keys: MigrationRing, address_of: dict[str, str]
) -> None:
    """Each STOP whose number was found moves to the number's blind index; the others keep
    their old reference (the application looks opt-outs up by it too)."""
    table = sa.table("message_opt_outs", sa.column("recipient_ref"))
    change = (
        sa.update(table)
        .where(table.c.recipient_ref == sa.bindparam("old"))
        .values(recipient_ref=sa.bindparam("new"))
    )
    refs = bind.execute(sa.select(table.c.recipient_ref)).scalars().all()
    updates = [
        {"old": ref, "new": blind_index(keys.get(), ADDRESS_INDEX, address_of[ref])}
        for ref in refs
        if ref in address_of
    ]
    for start in range(0, len(updates), BATCH):
        bind.execute(change, updates[start : start + BATCH])


def _seal_messages(
    bind: sa.engine.Connection,
    keys: MigrationRing,
    name: str,
    address: tuple[str, str, str],
    texts: dict[str, str],
) -> None:
    """Seal the address and ``texts`` of every not yet sealed message and index its address
    (``address``: its column, its ref column and its purpose)."""
    column, ref_column, purpose = address
    table = sa.table(
        name, sa.column("id"), sa.column(column), sa.column(ref_column),
        *(sa.column(c) for c in texts),
    )  # fmt: skip
    # A sealed address means the row was done (all its columns are written at once).
    to_do = sa.and_(table.c[column] != ERASED, table.c[column].not_like(f"{SEALED_PREFIX}%"))
    # An address that only looks sealed (an e-mail starting with "s1.") is checked below.
    lookalike = sa.and_(table.c[column].like(f"{SEALED_PREFIX}%"), table.c[column].like("%@%"))
    change = (
        sa.update(table)
        .where(table.c.id == sa.bindparam("row_key"))
        .values(
            {
                column: sa.bindparam("new_address"),
                ref_column: sa.bindparam("new_ref"),
                **{c: sa.bindparam(f"new_{c}") for c in texts},
            }
        )
    )
    for rows in _pages(bind, table, "id", sa.or_(to_do, lookalike)):
        updates = []
        for row in rows:
            plain = row[column]
            if is_sealed_under(keys.get(), purpose, plain):
                continue
            update = {
                "row_key": row["id"],
                "new_address": seal(keys.get(), purpose, plain),
                "new_ref": blind_index(keys.get(), ADDRESS_INDEX, plain),
            }
            for text_column, text_purpose in texts.items():
                update[f"new_{text_column}"] = _sealed(keys.get(), text_purpose, row[text_column])
            updates.append(update)
        if updates:
            bind.execute(change, updates)


def upgrade() -> None:
    for table, columns in WIDENED.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            for column, was, becomes, nullable, using in columns:
                batch_op.alter_column(
                    column,
                    existing_type=was,
                    type_=becomes,
                    existing_nullable=nullable,
                    **({"postgresql_using": using} if using else {}),
                )
    bind = op.get_bind()
    keys = MigrationRing(bind, revision)
    # Conversations and opt-outs first: their addresses are read from the messages' plain
    # addresses (opened, when a run interrupted half-way sealed some already).
    address_of = _addresses_of(bind, keys, _old_refs_to_find(bind))
    _rekey_conversations(bind, keys, address_of)
    _rekey_opt_outs(bind, keys, address_of)
    _seal_messages(
        bind,
        keys,
        "outbound_messages",
        ("recipient", "recipient_ref", RECIPIENT),
        {"content": CONTENT},
    )
    _seal_messages(
        bind,
        keys,
        "inbound_messages",
        ("sender", "sender_ref", SENDER),
        {"text": TEXT, "choice_id": CHOICE},
    )


def downgrade() -> None:
    # Sealed values stay sealed, the columns TEXT and the refs keyed: a sealed value does
    # not fit the old widths nor JSON, and opening it needs the ring (the application reads
    # sealed and plain values alike).
    pass
