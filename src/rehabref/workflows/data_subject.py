"""Data-subject requests (NDPA access and erasure), one flow for the ops API and the CLI.

``handle`` normalises the identifiers, finds the person's referrals (``referrals.person``,
the one lookup), exports or erases in the caller's transaction and logs the request in
``data_subject_requests`` with hashed identifiers and row counts, never the data itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.referrals.person import (
    identifier_hash,
    normalise_email,
    normalise_phone,
    referrals_of_person,
)
from rehabref.tables.rights import DataSubjectRequest
from rehabref.workflows.person_erasure import erase_referrals
from rehabref.workflows.person_export import counts, export_person

Kind = Literal["export", "erasure"]
KINDS: tuple[Kind, ...] = ("export", "erasure")

_requests = table(DataSubjectRequest)


@dataclass(frozen=True)
class Person:
    phone: str | None
    email: str | None


def person(phone: str | None, email: str | None) -> Person:
    """Normalised identifiers; ValueError naming the field when one is invalid or both
    are missing."""
    if not phone and not email:
        raise ValueError("phone: Give a phone, an e-mail address or both.")
    try:
        checked_phone = normalise_phone(phone) if phone else None
    except ValueError as exc:
        raise ValueError(f"phone: {exc}") from None
    try:
        checked_email = normalise_email(email) if email else None
    except ValueError as exc:
        raise ValueError(f"email: {exc}") from None
    return Person(checked_phone, checked_email)


@dataclass(frozen=True)
class Outcome:
    request_id: str
    kind: Kind
    result: dict[str, int]
    export: dict[str, Any] | None  # the document, for an export


async def handle(
    conn: AsyncConnection,
    *,
    ring: KeyRing,
    kind: Kind,
    who: Person,
    actor: str,
    now: datetime,
) -> Outcome:
    referrals = await referrals_of_person(conn, ring, phone=who.phone, email=who.email)
    document: dict[str, Any] | None = None
    if kind == "export":
        document = await export_person(
            conn, ring, referrals, phone=who.phone, email=who.email, now=now
        )
        result = counts(document)
    else:
        result = await erase_referrals(
            conn, referrals, ring=ring, actor=actor, now=now, phone=who.phone, email=who.email
        )
    request_id = new_id("dsr")
    action = f"data_subject.{'export' if kind == 'export' else 'erasure'}"
    for referral in referrals:
        await record(conn, entry(actor, action, referral_id=referral.id, subject=request_id))
    if not referrals:
        await record(conn, entry(actor, action, subject=request_id))
    await conn.execute(
        _requests.insert(),
        {
            "id": request_id,
            "kind": kind,
            "phone_hash": identifier_hash(ring, "phone", who.phone) if who.phone else None,
            "email_hash": identifier_hash(ring, "email", who.email) if who.email else None,
            "actor": actor[:80],
            "result": result,
            "created_at": now,
        },
    )
    return Outcome(request_id, kind, result, document)
