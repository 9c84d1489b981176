"""``rehabref audit verify``: walk the chain from record 1 and find the first broken link.

Threat: an edited, deleted, inserted or reordered audit record. Each record must have the next
``seq`` of its chain, the previous record's hash as ``prev_hash``, and a ``hash`` that
matches its stored fields; each chain's head must point at its last record. Read in pages
of ``batch`` rows, so a long trail is verified in constant memory.

The chain is not keyed: someone who owns the database can rewrite records and recompute every
hash, or cut the newest records and wind the head back. ``heads`` and ``anchor_problem`` close
that: the heads of one verification, kept outside the database (``--anchor``), must still be
in the trail at the next one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.chain import GENESIS, Entry, link_hash
from rehabref.audit.rows import AuditEventRow
from rehabref.db import table
from rehabref.tables.audit import AuditChain, AuditEvent

_events = table(AuditEvent)
_chain = table(AuditChain)


@dataclass(frozen=True)
class Verdict:
    intact: bool
    checked: int
    # The first record that does not fit (its chain, seq and id), and why.
    broken_chain: int | None = None
    broken_seq: int | None = None
    broken_id: str | None = None
    problem: str | None = None


@dataclass(frozen=True)
class Head:
    chain: int
    seq: int
    hash: str


async def heads(conn: AsyncConnection) -> list[Head]:
    rows = (await conn.execute(select(_chain).order_by(_chain.c.id))).all()
    return [Head(row.id, row.seq, row.hash) for row in rows]


async def anchor_problem(conn: AsyncConnection, anchored: list[Head]) -> str | None:
    """The first head of an earlier verification that the trail no longer holds."""
    for head in anchored:
        if head.seq == 0:
            continue
        stored = await conn.scalar(
            select(_events.c.hash).where(_events.c.chain == head.chain, _events.c.seq == head.seq)
        )
        if stored != head.hash:
            return (
                f"chain {head.chain} record {head.seq} no longer has the hash anchored outside "
                "the database: records were rewritten or removed"
            )
    return None


async def verify_chain(conn: AsyncConnection, *, batch: int = 1000) -> Verdict:
    """Every chain, in turn; the first broken record found, or the total checked."""
    # The heads first: records appended while we walk come after them and are left for the
    # next run; every record up to a head's seq was committed with it.
    heads = (await conn.execute(select(_chain).order_by(_chain.c.id))).all()
    total = 0
    for head in heads:
        verdict = await _verify_one(conn, head, batch)
        if not verdict.intact:
            return replace(verdict, checked=total + verdict.checked)
        total += verdict.checked
    return Verdict(True, total)


async def _verify_one(conn: AsyncConnection, head: Row[Any], batch: int) -> Verdict:
    chain = head.id
    expected_seq, prev_hash, checked = 1, GENESIS, 0
    while expected_seq <= head.seq:
        rows = (
            await conn.execute(
                select(_events)
                .where(
                    _events.c.chain == chain,
                    _events.c.seq >= expected_seq,
                    _events.c.seq <= head.seq,
                )
                .order_by(_events.c.seq)
                .limit(batch)
            )
        ).all()
        for row in rows:
            problem = _problem(row, expected_seq, prev_hash)
            if problem is not None:
                return Verdict(False, checked, chain, row.seq, row.id, problem)
            checked += 1
            expected_seq, prev_hash = row.seq + 1, row.hash
        if len(rows) < batch:
            break
    if checked != head.seq or prev_hash != head.hash:
        return Verdict(
            False,
            checked,
            chain,
            checked + 1,
            None,
            f"the chain head says record {head.seq} is the last; the trail does not end there",
        )
    return Verdict(True, checked)


def _problem(row: AuditEventRow, expected_seq: int, prev_hash: str) -> str | None:
    if row.seq != expected_seq:
        return f"record {expected_seq} is missing"
    if row.prev_hash != prev_hash:
        return "prev_hash does not match the previous record's hash"
    stored = Entry(
        id=row.id,
        at=row.at,
        actor_kind=row.actor_kind,
        actor_id=row.actor_id,
        action=row.action,
        referral_id=row.referral_id,
        subject=row.subject,
        request_id=row.request_id,
    )
    if link_hash(row.chain, row.seq, stored.canonical(), prev_hash) != row.hash:
        return "hash does not match the record's fields"
    return None
