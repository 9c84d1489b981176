"""A Shape G referral is created: its WhatsApp message to the patient, the pre-authorised
HMO coverage and its events, planned as rows (``CreatePlan``) for the create store, like a V1
create. The message is tried right after the commit (``api/referrals_g.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec

from rehabref.channels.providers import ChannelProviders
from rehabref.clock import epoch_ms
from rehabref.eligibility import tokens as preauth
from rehabref.errors import ApiError
from rehabref.events import targets
from rehabref.events.outbox import NewEvent
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.intake.service import assistant_session
from rehabref.principal import Principal
from rehabref.referrals.responses import (
    IntakeStatus,
    MessagingIntake,
    PatientNamePhone,
    ReferralCreatedG,
)
from rehabref.referrals.schemas_g import ReferralCreateG
from rehabref.referrals.tracking import new_tracking_code, tracking_url
from rehabref.workflows.create_plan import CreatePlan, Intake, ReferralCreated, Row, transition
from rehabref.workflows.first_contact import dialogue_context, plan_first_contact


@dataclass(frozen=True)
class GContext:
    box: SecretBox
    base_url: str
    assistant_ttl_seconds: int
    channels: ChannelProviders
    allow_loopback_targets: bool


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
            allow_loopback=ctx.allow_loopback_targets,
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


def duplicate_reference() -> ApiError:
    return ApiError(
        409,
        "duplicate_partner_reference",
        "A referral with this partner_reference already exists; retrieve it with "
        "GET /api/v1/partners/referrals/{partner_reference}.",
        fields={"partner_reference": "Already used by another referral."},
    )


def plan_g(
    *,
    principal: Principal,
    request: ReferralCreateG,
    grant: preauth.PreAuth | None,
    ctx: GContext,
    now: datetime,
    on_created: Sequence[ReferralCreated] = (),
) -> CreatePlan:
    """Plan a Shape G referral, its first message to the patient and its events; the 2.3 G
    body. Reads and writes nothing: the message is sent once the plan is written."""
    referral_id = new_id("ref")
    code = new_tracking_code()
    patient = request.patient
    notes = request.clinical_notes
    referral: Row = {
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
    }
    history = [
        transition(
            referral_id, None, "received", principal.actor, "referral created (Shape G)", now
        )
    ]
    coverage = (
        [
            {
                "referral_id": referral_id,
                "environment": principal.environment,
                "hmo_code": grant.hmo_code,
                "policy_number": grant.policy_number,
                "procedure_code": grant.procedure_code,
                "pre_auth_token": request.pre_auth_token,
                "created_at": now,
            }
        ]
        if grant is not None
        else []
    )
    session, deep_link = assistant_session(
        box=ctx.box,
        referral_id=referral_id,
        now=now,
        ttl_seconds=ctx.assistant_ttl_seconds,
        base_url=ctx.base_url,
    )
    first = plan_first_contact(
        ctx.box.ring,
        referral_id=referral_id,
        partner_id=principal.partner_id,
        environment=principal.environment,
        preferred_contact="messaging",
        address=patient.phone,
        context=dialogue_context(
            first_name=patient.first_name,
            referrer=principal.partner_name,
            care_mode=None,
            area=patient.area,
            city=patient.city,
        ),
        link=deep_link,
        channels=ctx.channels,
        now=now,
    )
    intake_status: IntakeStatus = (
        "pending_messaging_response" if first.messages else "pending_coordinator_contact"
    )
    data = {
        "referral_id": referral_id,
        "status": "received",
        "partner_reference": request.partner_reference,
        "tracking_code": code,
        "billing_mode": request.billing_mode,
        "priority": notes.priority,
        "intake_status": intake_status,
    }
    event = NewEvent(
        "referral.created",
        data,
        referral_id,
        extra_targets=(request.callback_url,) if request.callback_url else (),
        occurred_at=now,
    )
    response = ReferralCreatedG(
        status="success",
        referral_id=referral_id,
        tracking_code=code,
        partner_reference=request.partner_reference,
        tracking_url=tracking_url(ctx.base_url, code),
        intake_status=intake_status,
        patient=PatientNamePhone(
            name=f"{patient.first_name} {patient.last_name}", phone=patient.phone
        ),
        messaging_intake=MessagingIntake(
            # True only once a provider took the message: the sandbox's at once; a live
            # provider's after the commit (``api/referrals_g.py`` tries it then).
            dispatched=first.recorded_as_sent,
            recipient=patient.phone,
            intake_token=deep_link.rsplit("/a/", 1)[1],
            deep_link=deep_link,
        ),
        created_at=epoch_ms(now),
    )
    return CreatePlan.for_referral(
        principal,
        referral=referral,
        transitions=history,
        intake=Intake(
            assistant_sessions=[session],
            contact_tasks=first.contact_tasks,
            messages=first.messages,
            conversations=first.conversations,
        ),
        coverage=coverage,
        events=[event],
        on_created=on_created,
        phone=patient.phone,
        response=msgspec.json.encode(response),
        now=now,
    )
