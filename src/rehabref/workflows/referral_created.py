"""A Shape V1 referral is created: the referral, its history, its intake (an assistant
session or a contact task) and its events, in the caller's transaction.

``on_created`` hooks (wired at start-up; the sandbox's scenarios are one) run last, in the
same transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import insert

from rehabref.clock import iso, utcnow
from rehabref.db import table
from rehabref.events.outbox import NewEvent, record_events
from rehabref.fastsql import Connection, Statement, execute, execute_many
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.intake.service import open_assistant_session
from rehabref.principal import Principal
from rehabref.referrals.schemas_v1 import ReferralCreateV1
from rehabref.referrals.status import next_action
from rehabref.referrals.tasks import open_contact_task
from rehabref.tables.referrals import Referral, ReferralTransition

_INSERT_REFERRAL = Statement(insert(table(Referral)))
_INSERT_TRANSITIONS = Statement(insert(table(ReferralTransition)))


class ReferralCreated(Protocol):
    """Called after a referral and its events are written, in the creating transaction."""

    async def __call__(
        self,
        conn: Connection,
        *,
        referral_id: str,
        environment: str,
        phone: str | None,
        now: datetime,
    ) -> None: ...


@dataclass(frozen=True)
class IntakeSettings:
    box: SecretBox
    base_url: str
    assistant_ttl_seconds: int


async def create_v1(
    conn: Connection,
    *,
    principal: Principal,
    request: ReferralCreateV1,
    intake: IntakeSettings,
    on_created: Sequence[ReferralCreated] = (),
) -> dict[str, Any]:
    """Create a Shape V1 referral, start its intake, write its events; returns the 2.3 body."""
    now = utcnow()
    referral_id = new_id("ref")
    status = "contact_pending" if request.route == "contact" else "received"
    await execute(
        conn,
        _INSERT_REFERRAL,
        {
            "id": referral_id,
            "partner_id": principal.partner_id,
            "environment": principal.environment,
            "shape": "v1",
            "status": status,
            "external_ref": request.external_ref,
            "patient_first_name": request.patient.first_name,
            "patient_phone": request.patient.phone,
            "patient_email": request.patient.email,
            "patient_city": request.patient.city,
            "reason": request.reason,
            "care_mode": request.care_mode,
            "preferred_contact": request.preferred_contact,
            "route": request.route,
            "consent_accepted": request.consent.accepted,
            "consent_accepted_at": request.consent_time(),
            "consent_version": request.consent.version,
            "consent_source": request.consent.source,
            "partner_metadata": request.metadata,
            "created_at": now,
            "updated_at": now,
        },
    )
    actor = principal.actor
    history = [_transition(referral_id, None, "received", actor, "referral created", now)]
    base_data = {
        "referral_id": referral_id,
        "external_ref": request.external_ref,
        "care_mode": request.care_mode,
        "route": request.route,
    }
    events = [NewEvent("referral.created", {**base_data, "status": "received"}, referral_id)]
    assistant_url = None
    if request.route == "contact":
        task_id = await open_contact_task(
            conn,
            referral_id=referral_id,
            partner_id=principal.partner_id,
            environment=principal.environment,
            channel=request.preferred_contact,
            purpose="initial_contact",
            now=now,
        )
        history.append(
            _transition(referral_id, "received", status, "system", "contact task opened", now)
        )
        events.append(
            NewEvent(
                "contact.requested",
                {
                    **base_data,
                    "status": status,
                    "contact_task_id": task_id,
                    "channel": request.preferred_contact,
                },
                referral_id,
            )
        )
    else:
        assistant_url = await open_assistant_session(
            conn,
            box=intake.box,
            referral_id=referral_id,
            now=now,
            ttl_seconds=intake.assistant_ttl_seconds,
            base_url=intake.base_url,
        )
    await execute_many(conn, _INSERT_TRANSITIONS, history)
    await record_events(
        conn,
        partner_id=principal.partner_id,
        environment=principal.environment,
        events=events,
        contract=principal.contract,
    )
    for hook in on_created:
        await hook(
            conn,
            referral_id=referral_id,
            environment=principal.environment,
            phone=request.patient.phone,
            now=now,
        )
    return {
        "referral_id": referral_id,
        "external_ref": request.external_ref,
        "status": status,
        "care_mode": request.care_mode,
        "next_action": next_action(status, request.route),
        "assistant_session_url": assistant_url,
        "created_at": iso(now),
    }


def _transition(
    referral_id: str,
    from_status: str | None,
    to_status: str,
    actor: str,
    reason: str,
    now: datetime,
) -> dict[str, Any]:
    return {
        "id": new_id("trn"),
        "referral_id": referral_id,
        "from_status": from_status,
        "to_status": to_status,
        "actor": actor,
        "reason": reason,
        "created_at": now,
    }
