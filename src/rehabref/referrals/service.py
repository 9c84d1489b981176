"""Referral creation and lookup. Keyword-only functions on a caller-owned connection."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select

from rehabref import cursors
from rehabref.clock import iso, utcnow
from rehabref.db import table
from rehabref.events.outbox import NewEvent, record_events
from rehabref.fastsql import (
    Connection,
    Statement,
    execute,
    execute_many,
    fetch_all,
    fetch_one,
)
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.intake.service import open_assistant_session, open_contact_task
from rehabref.partners.auth import Principal
from rehabref.referrals.schemas_v1 import ReferralCreateV1
from rehabref.referrals.status import next_action
from rehabref.result_rows import Record
from rehabref.sandbox import scenarios
from rehabref.tables.referrals import Referral, ReferralTransition

_referrals = table(Referral)
_transitions = table(ReferralTransition)
_INSERT_REFERRAL = Statement(insert(_referrals))
_INSERT_TRANSITIONS = Statement(insert(_transitions))

_CURSOR_ID = re.compile(r"^ref_[0-9a-z]{26}$")


@dataclass(frozen=True)
class IntakeSettings:
    box: SecretBox
    base_url: str
    assistant_ttl_seconds: int


def actor_of(principal: Principal) -> str:
    return f"partner:{principal.partner_id}:{principal.key_id}"


async def create_v1(
    conn: Connection,
    *,
    principal: Principal,
    request: ReferralCreateV1,
    intake: IntakeSettings,
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
    actor = actor_of(principal)
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
    # Sandbox test phones run their scenario (spec 6.5); a no-op for live keys and other phones.
    await scenarios.begin(
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


_in_scope = (
    _referrals.c.partner_id == bindparam("partner_id"),
    _referrals.c.environment == bindparam("environment"),
)
_BY_ID = Statement(select(_referrals).where(*_in_scope, _referrals.c.id == bindparam("id")))
_BY_EXTERNAL_REF = Statement(
    select(_referrals).where(*_in_scope, _referrals.c.external_ref == bindparam("external_ref"))
)


def _scope(principal: Principal) -> dict[str, Any]:
    return {"partner_id": principal.partner_id, "environment": principal.environment}


async def get_referral(
    conn: Connection, *, principal: Principal, referral_id: str
) -> Record | None:
    return await fetch_one(conn, _BY_ID, {**_scope(principal), "id": referral_id})


async def find_by_external_ref(
    conn: Connection, *, principal: Principal, external_ref: str
) -> Record | None:
    return await fetch_one(
        conn, _BY_EXTERNAL_REF, {**_scope(principal), "external_ref": external_ref}
    )


def encode_cursor(last_id: str) -> str:
    return cursors.encode_cursor(last_id)


def decode_cursor(cursor: str) -> str | None:
    return cursors.decode_cursor(cursor, _CURSOR_ID)


_list_statements: dict[tuple[bool, ...], Statement] = {}


def _list_statement(filters: tuple[bool, bool, bool, bool]) -> Statement:
    """One prepared statement per combination of filters (generic plans stay good)."""
    found = _list_statements.get(filters)
    if found is None:
        has_status, has_from, has_to, has_cursor = filters
        query = select(_referrals).where(*_in_scope)
        if has_status:
            query = query.where(_referrals.c.status == bindparam("status"))
        if has_from:
            query = query.where(_referrals.c.created_at >= bindparam("created_from"))
        if has_to:
            query = query.where(_referrals.c.created_at < bindparam("created_to"))
        if has_cursor:
            query = query.where(_referrals.c.id < bindparam("before_id"))
        query = query.order_by(_referrals.c.id.desc()).limit(bindparam("page_size"))
        found = _list_statements[filters] = Statement(query)
    return found


async def list_referrals(
    conn: Connection,
    *,
    principal: Principal,
    status: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
    before_id: str | None,
    limit: int,
) -> tuple[list[Record], bool]:
    """Newest first; keyset on the time-ordered id. Returns (rows, has_more)."""
    params: dict[str, Any] = {**_scope(principal), "page_size": limit + 1}
    optional = {
        "status": status,
        "created_from": created_from,
        "created_to": created_to,
        "before_id": before_id,
    }
    params.update({name: value for name, value in optional.items() if value is not None})
    statement = _list_statement(
        (
            status is not None,
            created_from is not None,
            created_to is not None,
            before_id is not None,
        )
    )
    rows = await fetch_all(conn, statement, params)
    return rows[:limit], len(rows) > limit
