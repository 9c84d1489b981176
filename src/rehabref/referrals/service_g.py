"""Shape G referrals: creation (intake message at once) and lookup by any of its three keys."""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import epoch_ms, utcnow
from rehabref.db import table
from rehabref.eligibility import tokens as preauth
from rehabref.errors import ApiError
from rehabref.events import targets
from rehabref.events.outbox import NewEvent, record_events
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.intake.messaging import MessagingAdapter
from rehabref.intake.service import open_assistant_session
from rehabref.partners.auth import Principal
from rehabref.referrals import service
from rehabref.referrals.schemas_g import ReferralCreateG
from rehabref.result_rows import RowLike
from rehabref.sandbox import scenarios
from rehabref.sandbox.phones import scenario_for
from rehabref.tables.eligibility import ReferralCoverage
from rehabref.tables.referrals import Referral, ReferralTransition

log = logging.getLogger("rehabref.referrals")
_referrals = table(Referral)
_transitions = table(ReferralTransition)
_coverage = table(ReferralCoverage)

# 12 symbols from a 31-letter alphabet without look-alikes (0/O, 1/I/L): about 59 bits.
_TRACKING_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
TRACKING_LENGTH = 12
TRACKING_PREFIX = "RR"
_TRACKING = re.compile(rf"^{TRACKING_PREFIX}[{_TRACKING_ALPHABET}]{{{TRACKING_LENGTH}}}$")
_REFERRAL_ID = re.compile(r"^ref_[0-9a-z]{26}$")


@dataclass(frozen=True)
class GContext:
    box: SecretBox
    base_url: str
    assistant_ttl_seconds: int
    messaging: MessagingAdapter
    allow_private_targets: bool


def new_tracking_code() -> str:
    body = "".join(secrets.choice(_TRACKING_ALPHABET) for _ in range(TRACKING_LENGTH))
    return TRACKING_PREFIX + body


def normalise_tracking_code(value: str) -> str | None:
    candidate = value.strip().upper()
    return candidate if _TRACKING.match(candidate) else None


def tracking_url(base_url: str, code: str) -> str:
    return f"{base_url}/track/{code}"


async def check_request(
    *, principal: Principal, request: ReferralCreateG, ctx: GContext
) -> preauth.PreAuth | None:
    """Checks needing I/O, before any write: callback target, pre-auth token, duplicates."""
    problems: dict[str, str] = {}
    token_field = "pre_auth_token"  # noqa: S105 - a field name
    if request.callback_url is not None:
        problem = await targets.check_target(
            request.callback_url,
            environment=principal.environment,
            allow_private=ctx.allow_private_targets,
        )
        if problem is not None:
            problems["callback_url"] = problem
    grant = None
    if request.pre_auth_token is not None:
        if request.billing_mode != "hmo_direct_billing":
            problems[token_field] = "Only allowed with billing_mode hmo_direct_billing."
        else:
            grant = preauth.read(ctx.box, request.pre_auth_token)
            refusal = preauth.refusal(
                grant,
                partner_id=principal.partner_id,
                environment=principal.environment,
                patient_phone=request.patient.phone,
            )
            if refusal is not None:
                problems[token_field] = refusal
    if problems:
        raise ApiError(
            422, "validation_error", "Some fields are invalid; see error.fields.", fields=problems
        )
    return grant


async def find_by_partner_reference(
    conn: AsyncConnection, *, principal: Principal, partner_reference: str
) -> Row[Any] | None:
    return (
        await conn.execute(
            select(_referrals.c.id).where(
                _referrals.c.partner_id == principal.partner_id,
                _referrals.c.environment == principal.environment,
                _referrals.c.partner_reference == partner_reference,
            )
        )
    ).first()


def duplicate_reference() -> ApiError:
    return ApiError(
        409,
        "duplicate_partner_reference",
        "A referral with this partner_reference already exists; retrieve it with "
        "GET /api/v1/partners/referrals/{partner_reference}.",
        fields={"partner_reference": "Already used by another referral."},
    )


def intake_text(first_name: str, partner_name: str) -> str:
    return (
        f"Hello {first_name}, {partner_name} has referred you for physiotherapy. "
        "Tell us when you are available and how you would like to be seen:"
    )


async def create_g(
    conn: AsyncConnection,
    *,
    principal: Principal,
    request: ReferralCreateG,
    grant: preauth.PreAuth | None,
    ctx: GContext,
) -> dict[str, Any]:
    """Create a Shape G referral, message the patient, write its events; the 2.3 G body."""
    if request.partner_reference is not None and await find_by_partner_reference(
        conn, principal=principal, partner_reference=request.partner_reference
    ):
        raise duplicate_reference()
    now = utcnow()
    referral_id = new_id("ref")
    code = new_tracking_code()
    patient = request.patient
    notes = request.clinical_notes
    await conn.execute(
        insert(_referrals),
        {
            "id": referral_id,
            "partner_id": principal.partner_id,
            "environment": principal.environment,
            "shape": "g",
            "status": "received",
            "partner_reference": request.partner_reference,
            "tracking_code": code,
            "patient_first_name": patient.first_name,
            "patient_last_name": patient.last_name,
            "patient_phone": patient.phone,
            "patient_email": patient.email,
            "patient_city": patient.city,
            "patient_area": patient.area,
            "preferred_contact": "messaging",
            "route": "assistant",
            "diagnosis": notes.diagnosis,
            "recommended_sessions": notes.recommended_sessions,
            "priority": notes.priority,
            "referring_doctor": notes.referring_doctor,
            "billing_mode": request.billing_mode,
            "callback_url": request.callback_url,
            "created_at": now,
            "updated_at": now,
        },
    )
    actor = f"partner:{principal.partner_id}:{principal.key_id}"
    await conn.execute(
        insert(_transitions),
        {
            "id": new_id("trn"),
            "referral_id": referral_id,
            "from_status": None,
            "to_status": "received",
            "actor": actor,
            "reason": "referral created (Shape G)",
            "created_at": now,
        },
    )
    if grant is not None:
        await conn.execute(
            insert(_coverage),
            {
                "referral_id": referral_id,
                "environment": principal.environment,
                "hmo_code": grant.hmo_code,
                "policy_number": grant.policy_number,
                "procedure_code": grant.procedure_code,
                "created_at": now,
            },
        )
    deep_link = await open_assistant_session(
        conn,
        box=ctx.box,
        referral_id=referral_id,
        now=now,
        ttl_seconds=ctx.assistant_ttl_seconds,
        base_url=ctx.base_url,
    )
    # The sandbox adapter records the request in this transaction and sends nothing. If a
    # provider fails, nothing is created: the partner retries with the same Idempotency-Key.
    try:
        await ctx.messaging.send(
            to=patient.phone,
            text=intake_text(patient.first_name, principal.partner_name),
            link=deep_link,
            template="shape_g_intake",
            referral_id=referral_id,
            conn=conn,
        )
    except Exception as exc:
        log.warning("intake message failed", extra={"error_type": type(exc).__name__})
        raise ApiError(
            503,
            "service_unavailable",
            "The patient could not be messaged right now; nothing was created. Retry with "
            "the same Idempotency-Key.",
            headers={"Retry-After": "5"},
        ) from None
    scenario = scenario_for(patient.phone) if principal.is_sandbox else None
    data = {
        "referral_id": referral_id,
        "status": "received",
        "partner_reference": request.partner_reference,
        "tracking_code": code,
        "billing_mode": request.billing_mode,
        "priority": notes.priority,
        "intake_status": "pending_messaging_response",
    }
    await record_events(
        conn,
        partner_id=principal.partner_id,
        environment=principal.environment,
        contract=principal.contract,
        events=[
            NewEvent(
                "referral.created",
                data,
                referral_id,
                extra_targets=(request.callback_url,) if request.callback_url else (),
                simulated_failures=scenarios.simulated_failures(scenario),
                occurred_at=now,
            )
        ],
    )
    await scenarios.begin(
        conn,
        referral_id=referral_id,
        environment=principal.environment,
        phone=patient.phone,
        now=now,
    )
    return {
        "status": "success",
        "referral_id": referral_id,
        "tracking_code": code,
        "partner_reference": request.partner_reference,
        "tracking_url": tracking_url(ctx.base_url, code),
        "intake_status": "pending_messaging_response",
        "patient": {"name": f"{patient.first_name} {patient.last_name}", "phone": patient.phone},
        "messaging_intake": {
            "dispatched": True,
            "recipient": patient.phone,
            "intake_token": deep_link.rsplit("/a/", 1)[1],
            "deep_link": deep_link,
        },
        "created_at": epoch_ms(now),
    }


def is_referral_id(key: str) -> bool:
    return bool(_REFERRAL_ID.match(key))


async def resolve(conn: AsyncConnection, *, principal: Principal, key: str) -> RowLike | None:
    """One referral by internal id, tracking code or partner_reference, in that order."""
    if not key or len(key) > 255:
        return None
    if _REFERRAL_ID.match(key):
        # The common case, and the id takes precedence anyway: one indexed lookup.
        by_id = await service.get_referral(conn, principal=principal, referral_id=key)
        if by_id is not None:
            return by_id
    tracking = normalise_tracking_code(key)
    conditions = [_referrals.c.partner_reference == key]
    if tracking is not None:
        conditions.append(_referrals.c.tracking_code == tracking)
    rows = (
        await conn.execute(
            select(_referrals).where(
                _referrals.c.partner_id == principal.partner_id,
                _referrals.c.environment == principal.environment,
                or_(*conditions),
            )
        )
    ).all()
    by_code = [row for row in rows if tracking is not None and row.tracking_code == tracking]
    by_reference = [row for row in rows if row.partner_reference == key]
    for found in (by_code, by_reference):
        if found:
            return found[0]
    return None
