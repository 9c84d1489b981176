"""Therapy sessions across domains, each in the caller's one transaction.

- Scheduling (care) is refused first when an HMO-billed member has no allowance left for one
  more session (eligibility): 409 ``allowance_exceeded`` before anything is written.
- Completing: the payer is decided first (an ``hmo_direct_billing`` referral with a verified
  pre-auth bills its HMO; a ``corporate_sponsored`` referral bills its sponsoring employer,
  the partner that referred it); a line of that payer's monthly invoice is reserved (billing)
  and its reference is the ``invoice_reference`` of ``session.completed`` (care); the claim
  line is written; one session is charged to the member's allowance (eligibility).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.billing.claims import Payer, ReservedLine, reserve_line, write_line
from rehabref.billing.payer_invoices import EMPLOYER, HMO
from rehabref.care import sessions
from rehabref.care.rows import CareSessionRow
from rehabref.clock import as_utc, utcnow
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.eligibility.adapters import CoverageSources
from rehabref.eligibility.allowance import check_allowance, claim_coverage
from rehabref.eligibility.codes import NEGOTIATED_RATE_KOBO, STANDARD_SESSION
from rehabref.eligibility.service import consume_session
from rehabref.tables.care import CareSession
from rehabref.tables.referrals import Referral

_sessions = table(CareSession)
_referrals = table(Referral)


async def schedule_session(
    conn: AsyncConnection,
    *,
    coverage: CoverageSources,
    referral_id: str,
    scheduled_at: datetime,
    modality: str,
    session_type: str,
    actor: str,
    physio_id: str | None = None,
    location: tuple[float, float] | None = None,
) -> str:
    await check_allowance(conn, referral_id=referral_id, coverage=coverage)
    return await sessions.schedule_session(
        conn,
        referral_id=referral_id,
        scheduled_at=scheduled_at,
        modality=modality,
        session_type=session_type,
        actor=actor,
        physio_id=physio_id,
        location=location,
    )


async def payer_of(
    conn: AsyncConnection, *, session_id: str, coverage: CoverageSources
) -> tuple[Payer, str, str] | None:
    """(payer, referral id, environment) of a session billed to an HMO or employer."""
    referral = (
        await conn.execute(
            select(
                _referrals.c.id,
                _referrals.c.billing_mode,
                _referrals.c.partner_id,
                _referrals.c.environment,
            )
            .join(_sessions, _sessions.c.referral_id == _referrals.c.id)
            .where(_sessions.c.id == session_id)
        )
    ).first()
    if referral is None:
        return None
    if referral.billing_mode == "corporate_sponsored":
        payer = Payer(
            kind=EMPLOYER,
            payer_id=referral.partner_id,
            procedure_code=STANDARD_SESSION,
            rate_minor=NEGOTIATED_RATE_KOBO[STANDARD_SESSION],
        )
        return payer, referral.id, referral.environment
    claim = await claim_coverage(conn, referral_id=referral.id, coverage=coverage)
    if claim is None:
        return None  # self-pay, or HMO billing without a verified pre-auth: nobody to claim from
    payer = Payer(
        kind=HMO,
        payer_id=claim.hmo_code,
        procedure_code=claim.procedure_code,
        rate_minor=claim.rate_minor,
        co_pay_minor=claim.member.co_pay_kobo if claim.member is not None else 0,
        member_id=claim.policy_number,
        policy=claim.member.plan_tier if claim.member is not None else None,
        pre_auth_token=claim.pre_auth_token,
    )
    return payer, referral.id, referral.environment


async def complete_session(
    conn: AsyncConnection,
    *,
    ring: KeyRing,
    coverage: CoverageSources,
    session_id: str,
    pain_before: int,
    pain_after: int,
    notes_summary: str,
    check_out_at: datetime,
    check_out_lat: float | None,
    check_out_lng: float | None,
    actor: str,
    check_out_accuracy_m: float | None = None,
    check_out_refused: bool = False,
) -> CareSessionRow:
    now = utcnow()
    billed = await payer_of(conn, session_id=session_id, coverage=coverage)
    reserved: ReservedLine | None = None
    if billed is not None:
        reserved = await reserve_line(conn, payer=billed[0], environment=billed[2], now=now)
    done = await sessions.complete_session(
        conn,
        ring=ring,
        session_id=session_id,
        pain_before=pain_before,
        pain_after=pain_after,
        notes_summary=notes_summary,
        check_out_at=check_out_at,
        check_out_lat=check_out_lat,
        check_out_lng=check_out_lng,
        actor=actor,
        check_out_accuracy_m=check_out_accuracy_m,
        check_out_refused=check_out_refused,
        invoice_reference=reserved.reference if reserved is not None else None,
    )
    if billed is not None and reserved is not None:
        payer, referral_id, environment = billed
        await write_line(
            conn,
            payer=payer,
            reserved=reserved,
            environment=environment,
            referral_id=referral_id,
            session_id=done.id,
            session_date=as_utc(check_out_at).date(),
            now=now,
        )
    await consume_session(conn, referral_id=done.referral_id, coverage=coverage, session_id=done.id)
    return done
