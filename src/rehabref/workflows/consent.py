"""A patient withdraws consent (NDPA): processing stops and the partner is told.

Three doors, one flow: the signed link in every message and patient page (``/w/<token>``,
one referral), STOP on WhatsApp or SMS (every live referral of that number), and a
coordinator recording a phone call (``POST /api/v1/ops/referrals/{id}/consent-withdrawal``,
one referral, with a note).

For each referral still open: it moves through the state machine (``cancelled``, or
``closed`` once a visit was attended, since care was given), which writes the
``referral.closed`` event to the partner's outbox with ``reason: consent_withdrawn``, closes
the conversation, cancels unsent messages and contact tasks; scheduled therapy sessions are
cancelled; ``consent_withdrawn_at`` is set. The patient's phone and e-mail are opted out of
every automated message. A referral already ended only gets ``consent_withdrawn_at``.
Withdrawal is not erasure: the record stays (the partner and billing may need it) until an
erasure request or retention removes its personal data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.care.sealing import sealed_cancel_reason
from rehabref.channels import opt_outs
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.referrals.person import identifier_hash, referrals_of_person
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import patient_identity
from rehabref.referrals.transitions import TERMINAL, lock_referral, transition
from rehabref.tables.care import CareSession
from rehabref.tables.referrals import Referral
from rehabref.tables.rights import DataSubjectRequest
from rehabref.workflows.move_events import record_move
from rehabref.workflows.moves import tell_patient

_referrals = table(Referral)
_sessions = table(CareSession)
_requests = table(DataSubjectRequest)

REASON = "consent_withdrawn"
# Care was given: the referral is closed rather than cancelled.
CLOSES = frozenset({"attended", "paid"})


@dataclass(frozen=True)
class Withdrawal:
    referral_ids: tuple[str, ...]  # every referral marked withdrawn
    ended: tuple[str, ...]  # those this withdrawal closed or cancelled


def end_status(current: str) -> str:
    """Where withdrawal takes an open referral."""
    return "closed" if current in CLOSES else "cancelled"


async def withdraw_one(
    conn: AsyncConnection,
    referral_id: str,
    *,
    ring: KeyRing,
    actor: str,
    channel: str,
    note: str | None,
    now: datetime,
) -> tuple[ReferralRow, bool] | None:
    """Withdraw one referral (not logged: the caller logs its request); the row as it was
    and whether this ended it; None when there is no such referral."""
    row = await lock_referral(conn, referral_id)
    if row is None:
        return None
    ended = False
    if row.status not in TERMINAL:
        reason = f"{REASON} ({channel})" + (f": {note}" if note else "")
        move = await transition(
            conn,
            referral_id=referral_id,
            to=end_status(row.status),
            actor=actor,
            ring=ring,
            reason=reason[:2000],
            now=now,
        )
        move = replace(move, data={**move.data, "reason": REASON})
        await record_move(conn, ring, move)
        await tell_patient(conn, move, ring=ring)
        await conn.execute(
            update(_sessions)
            .where(_sessions.c.referral_id == referral_id, _sessions.c.status == "scheduled")
            .values(
                status="cancelled",
                cancel_reason=sealed_cancel_reason(ring, REASON),
                updated_by=actor,
                updated_at=now,
            )
        )
        ended = True
    if row.consent_withdrawn_at is None:
        await conn.execute(
            update(_referrals)
            .where(_referrals.c.id == referral_id)
            .values(consent_withdrawn_at=now, updated_at=now)
        )
    person = patient_identity(ring, row)
    for address in (person.phone, person.email):
        if address:
            await opt_outs.opt_out(conn, ring, address=address, channel=channel, now=now)
    return row, ended


async def withdraw_referral(
    conn: AsyncConnection,
    referral_id: str,
    *,
    ring: KeyRing,
    actor: str,
    channel: str,
    note: str | None = None,
    now: datetime,
) -> Withdrawal | None:
    """Withdraw consent for one referral (link or coordinator); None when it does not exist."""
    done = await withdraw_one(
        conn, referral_id, ring=ring, actor=actor, channel=channel, note=note, now=now
    )
    if done is None:
        return None
    row, ended = done
    await _log(conn, row, ring=ring, actor=actor, referral_ids=[row.id], ended=int(ended), now=now)
    await record(conn, entry(actor, "consent.withdrawn", referral_id=row.id))
    return Withdrawal((row.id,), (row.id,) if ended else ())


async def withdraw_number(
    conn: AsyncConnection, ring: KeyRing, phone: str, *, channel: str, now: datetime
) -> Withdrawal:
    """STOP from ``phone`` (E.164): every live referral of that number."""
    found = [
        r for r in await referrals_of_person(conn, ring, phone=phone) if r.environment == "live"
    ]
    withdrawn: list[str] = []
    ended: list[str] = []
    for referral in found:
        done = await withdraw_one(
            conn,
            referral.id,
            ring=ring,
            actor=f"patient:{channel}",
            channel=channel,
            note=None,
            now=now,
        )
        if done is not None:
            withdrawn.append(referral.id)
            if done[1]:
                ended.append(referral.id)
    if found:
        await _log(
            conn,
            found[-1],
            ring=ring,
            actor=f"patient:{channel}",
            referral_ids=withdrawn,
            ended=len(ended),
            now=now,
            phone=phone,
        )
        for referral_id in withdrawn:
            await record(
                conn, entry(f"patient:{channel}", "consent.withdrawn", referral_id=referral_id)
            )
    return Withdrawal(tuple(withdrawn), tuple(ended))


async def _log(
    conn: AsyncConnection,
    row: ReferralRow,
    *,
    ring: KeyRing,
    actor: str,
    referral_ids: list[str],
    ended: int,
    now: datetime,
    phone: str | None = None,
) -> None:
    person = patient_identity(ring, row)
    phone = phone or person.phone
    email = person.email.strip().lower() if person.email else None
    await conn.execute(
        _requests.insert(),
        {
            "id": new_id("dsr"),
            "kind": "withdrawal",
            "phone_hash": identifier_hash(ring, "phone", phone) if phone else None,
            "email_hash": identifier_hash(ring, "email", email) if email else None,
            "actor": actor[:80],
            "result": {"referrals": len(referral_ids), "ended": ended},
            "created_at": now,
        },
    )
