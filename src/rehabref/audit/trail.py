"""Appending to the audit trail: ``record`` (in the caller's transaction) and ``record_read``.

Threat: a read or change of patient data that leaves no trace, or a trace that can be quietly
rewritten. A change is recorded in the transaction that makes it (both or neither); a read
after it succeeded: API reads in grouped transactions (``read_group``, built on ``APPEND``),
page reads one per transaction (``record_read``).

Concurrency: every append moves the head row of its chain (``audit_chain``). On PostgreSQL
the append is one statement (``APPEND``): the UPDATE of the head locks it until the
transaction ends, so concurrent appends to a chain take their ``seq`` and ``prev_hash``
strictly one after another, and a rolled-back append never leaves a record others chained to.
The lock is held through the commit's WAL flush, so one chain carries about one append per
flush; each database connection therefore appends to its own chain of ``CHAINS`` (by its
backend pid), and connections wait only when they share one (measured in
docs/security.md). On SQLite the single writer already serialises transactions: one chain.
There is no update or delete path in this package.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.chain import Entry, link_hash, split_actor
from rehabref.clock import utcnow
from rehabref.db import Database, table
from rehabref.fastsql import Connection, RawConnection
from rehabref.ids import new_id
from rehabref.logging import request_id_var
from rehabref.tables.audit import CHAINS, AuditChain, AuditEvent

_events = table(AuditEvent)
_chain = table(AuditChain)

# The record's columns as parameters (canonical text first). The hash expression is
# ``chain.link_hash`` in SQL: sha256("{chain}:{seq}\n{canonical}\n{prev_hash}"), hex.
_CTES = (
    """
audit_head AS (
    UPDATE audit_chain SET
        seq = seq + 1,
        prev_hash = hash,
        hash = encode(sha256(convert_to(
            id::text || ':' || (seq + 1)::text || chr(10) || CAST({canonical} AS text)
            || chr(10) || hash,
            'UTF8')), 'hex')
    WHERE id = 1 + pg_backend_pid() % """
    + str(CHAINS)
    + """ AND {when}
    RETURNING id, seq, prev_hash, hash
),
new_audit_event AS (
    INSERT INTO audit_events (
        id, chain, seq, at, actor_kind, actor_id, action, referral_id, subject, request_id,
        prev_hash, hash)
    SELECT
        CAST({id} AS text), audit_head.id, seq, CAST({at} AS timestamptz),
        CAST({actor_kind} AS text),
        CAST({actor_id} AS text), CAST({action} AS text), CAST({referral_id} AS text),
        CAST({subject} AS text), CAST({request_id} AS text), prev_hash, hash
    FROM audit_head
)"""
)
_NAMES = (
    "canonical",
    "id",
    "at",
    "actor_kind",
    "actor_id",
    "action",
    "referral_id",
    "subject",
    "request_id",
)


def append_ctes(first_param: int, *, when: str = "TRUE") -> str:
    """The append as two CTEs (``audit_head``, ``new_audit_event``) for a statement of
    asyncpg parameters, this record's from ``$first_param`` on (``columns``); ``when`` a
    condition that must hold for the record to be written (the referral create's)."""
    numbered = {name: f"${n}" for n, name in enumerate(_NAMES, first_param)}
    return _CTES.format(when=when, **numbered)


# The append alone: asyncpg (``$1``..) and SQLAlchemy (``:name``) spellings.
APPEND = f"WITH {append_ctes(1)}\nSELECT 1"
_APPEND_TEXT = text(
    f"WITH {_CTES.format(when='TRUE', **{name: f':{name}' for name in _NAMES})}\nSELECT 1"
)


def entry(
    actor: str,
    action: str,
    *,
    referral_id: str | None = None,
    subject: str | None = None,
    now: datetime | None = None,
    request_id: str | None = None,
) -> Entry:
    """An audit record of ``actor`` (a history actor string such as ``operator:opr_1``);
    the request id defaults to the current request's."""
    kind, actor_id = split_actor(actor)
    return Entry(
        id=new_id("aud"),
        at=now or utcnow(),
        actor_kind=kind,
        actor_id=actor_id[:100],
        action=action,
        referral_id=referral_id[:100] if referral_id else None,
        subject=subject[:100] if subject else None,
        request_id=request_id or request_id_var.get(),
    )


def columns(item: Entry) -> list[object]:
    """The parameters of ``append_ctes``, in order."""
    return [
        item.canonical(),
        item.id,
        item.at,
        item.actor_kind,
        item.actor_id,
        item.action,
        item.referral_id,
        item.subject,
        item.request_id,
    ]


async def record(conn: Connection, item: Entry) -> None:
    """Append ``item`` in the caller's transaction (or, on a raw connection, on its own)."""
    if isinstance(conn, RawConnection):
        await conn.driver.fetchval(APPEND, *columns(item))
    elif conn.dialect.name == "postgresql":
        await conn.execute(_APPEND_TEXT, _named(item))
    else:
        await _append_portably(conn, item)


async def record_read(db: Database, item: Entry) -> None:
    """Append a read's record in its own transaction (one statement on PostgreSQL)."""
    async with db.autocommit() as conn:
        await record(conn, item)


def _named(item: Entry) -> dict[str, object]:
    return dict(zip(_NAMES, columns(item), strict=True))


async def _append_portably(conn: AsyncConnection, item: Entry) -> None:
    head = (await conn.execute(select(_chain.c.seq, _chain.c.hash).where(_chain.c.id == 1))).one()
    seq = head.seq + 1
    digest = link_hash(1, seq, item.canonical(), head.hash)
    named = _named(item)
    del named["canonical"]
    await conn.execute(
        _events.insert(),
        {**named, "chain": 1, "seq": seq, "prev_hash": head.hash, "hash": digest},
    )
    await conn.execute(
        update(_chain).where(_chain.c.id == 1).values(seq=seq, prev_hash=head.hash, hash=digest)
    )
