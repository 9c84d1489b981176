"""A Shape V1 referral is created: the referral, its history, its intake (an assistant
session and the first message to the patient, or a contact task), its events and the jobs
of the wired referral-created hooks, planned as rows (``CreatePlan``) for the create store
to write at once.

Planning reads and writes nothing: the same plan is written by one statement on PostgreSQL
and by one transaction elsewhere (``create_store``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec

from rehabref.channels.providers import ChannelProviders
from rehabref.clock import iso
from rehabref.events.outbox import NewEvent
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.intake.service import assistant_session
from rehabref.principal import Principal
from rehabref.referrals.responses import ReferralCreatedV1
from rehabref.referrals.schemas_v1 import ReferralCreateV1, ReferralStatus
from rehabref.referrals.status import next_action
from rehabref.referrals.tasks import contact_task
from rehabref.workflows.create_plan import CreatePlan, Intake, ReferralCreated, Row, transition
from rehabref.workflows.first_contact import dialogue_context, plan_first_contact


@dataclass(frozen=True)
class IntakeSettings:
    box: SecretBox
    base_url: str
    assistant_ttl_seconds: int
    channels: ChannelProviders


@dataclass(frozen=True)
class Attribution:
    """A referral made through a hosted referral link: the link and its campaign."""

    link_id: str
    campaign: str


def plan_v1(
    *,
    principal: Principal,
    request: ReferralCreateV1,
    intake: IntakeSettings,
    now: datetime,
    on_created: Sequence[ReferralCreated] = (),
    attribution: Attribution | None = None,
) -> CreatePlan:
    """Plan a Shape V1 referral, its intake and its events; the response is the 2.3 body."""
    referral_id = new_id("ref")
    status: ReferralStatus = "contact_pending" if request.route == "contact" else "received"
    patient = request.patient
    referral: Row = {
        "id": referral_id,
        "partner_id": principal.partner_id,
        "environment": principal.environment,
        "shape": "v1",
        "status": status,
        "external_ref": request.external_ref,
        "patient_first_name": patient.first_name,
        "patient_phone": patient.phone,
        "patient_email": patient.email,
        "patient_city": patient.city,
        "reason": request.reason,
        "care_mode": request.care_mode,
        "preferred_contact": request.preferred_contact,
        "route": request.route,
        "consent_accepted": request.consent.accepted,
        "consent_accepted_at": request.consent_time(),
        "consent_version": request.consent.version,
        "consent_source": request.consent.source,
        "partner_metadata": request.metadata,
        "link_id": attribution.link_id if attribution else None,
        "campaign": attribution.campaign if attribution else None,
        "created_at": now,
        "updated_at": now,
    }
    history = [transition(referral_id, None, "received", principal.actor, "referral created", now)]
    base_data = {
        "referral_id": referral_id,
        "external_ref": request.external_ref,
        "care_mode": request.care_mode,
        "route": request.route,
    }
    events = [
        NewEvent(
            "referral.created",
            {**base_data, "status": "received"},
            referral_id,
        )
    ]
    sessions: list[Row] = []
    tasks: list[Row] = []
    messages: list[Row] = []
    conversations: list[Row] = []
    assistant_url = None
    if request.route == "contact":
        task = contact_task(
            referral_id=referral_id,
            partner_id=principal.partner_id,
            environment=principal.environment,
            channel=request.preferred_contact,
            purpose="initial_contact",
            now=now,
        )
        tasks.append(task)
        history.append(
            transition(referral_id, "received", status, "system", "contact task opened", now)
        )
        events.append(
            NewEvent(
                "contact.requested",
                {
                    **base_data,
                    "status": status,
                    "contact_task_id": task["id"],
                    "channel": request.preferred_contact,
                },
                referral_id,
            )
        )
    else:
        session, assistant_url = assistant_session(
            box=intake.box,
            referral_id=referral_id,
            now=now,
            ttl_seconds=intake.assistant_ttl_seconds,
            base_url=intake.base_url,
        )
        sessions.append(session)
        first = plan_first_contact(
            intake.box.ring,
            referral_id=referral_id,
            partner_id=principal.partner_id,
            environment=principal.environment,
            preferred_contact=request.preferred_contact,
            address=str(patient.email if request.preferred_contact == "email" else patient.phone),
            context=dialogue_context(
                first_name=patient.first_name,
                referrer=principal.partner_name,
                care_mode=request.care_mode,
                area=None,
                city=patient.city,
            ),
            link=assistant_url,
            channels=intake.channels,
            now=now,
        )
        messages, conversations = first.messages, first.conversations
        tasks.extend(first.contact_tasks)
    response = ReferralCreatedV1(
        referral_id=referral_id,
        external_ref=request.external_ref,
        status=status,
        care_mode=request.care_mode,
        next_action=next_action(status, request.route),
        assistant_session_url=assistant_url,
        created_at=iso(now),
    )
    return CreatePlan.for_referral(
        principal,
        referral=referral,
        transitions=history,
        intake=Intake(
            assistant_sessions=sessions,
            contact_tasks=tasks,
            messages=messages,
            conversations=conversations,
        ),
        events=events,
        on_created=on_created,
        phone=patient.phone,
        response=msgspec.json.encode(response),
        now=now,
    )
