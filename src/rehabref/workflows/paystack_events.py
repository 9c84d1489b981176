"""Paystack's webhook events, handled once each: the code path of ``POST /webhooks/paystack``
and of the sandbox checkout's buttons (which sign with the sandbox secret and verify against
the sandbox's own charge, never Paystack).

Threat: a forged or replayed event must record nothing. So, in order: the signature over the
raw bytes (401 before parsing); only our own references, of this environment; for
``charge.success`` Paystack's verify answer, not the event body, says what was paid; the
payment is written once (the request's row lock, then the unique reference), so Paystack's
repeated deliveries — even many at once — make one payment and one ``payment.completed``.

- ``charge.success`` -> ``workflows.payments.record_payment`` (applied or held).
- ``refund.processed`` -> a refund row (unique Paystack refund id); the partner gets
  ``payment.refunded``; a whole refund reverses the referral's commission.
- Any other event: acknowledged (200) and ignored.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.billing import policy, store
from rehabref.billing.paystack import PaystackError, PaystackGateway
from rehabref.billing.signature import signature_valid
from rehabref.clock import utcnow
from rehabref.crypto import KeyRing
from rehabref.db import Database, table
from rehabref.errors import ApiError
from rehabref.events.outbox import NewEvent, record_events
from rehabref.ids import new_id
from rehabref.referrals.event_data import callback_targets, payment_data
from rehabref.referrals.transitions import lock_referral
from rehabref.tables.partners import Partner
from rehabref.tables.referrals import Referral
from rehabref.workflows.payments import record_payment

log = logging.getLogger("rehabref.payments")
_referrals = table(Referral)
_partners = table(Partner)

IGNORED = "ignored"
DUPLICATE = "duplicate"
UNKNOWN_REFERENCE = "unknown_reference"
NOT_SUCCESSFUL = "not_successful"
REFUND_MISMATCH = "refund_currency_mismatch"
REFUND_RECORDED = "refund_recorded"
REVERSED = "reversed"


def _event_of(raw: bytes) -> tuple[str, dict[str, Any]]:
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "malformed_request", "The body is not JSON.") from None
    if not isinstance(body, dict) or not isinstance(body.get("data"), dict):
        raise ApiError(400, "malformed_request", "The body is not a Paystack event.")
    return str(body.get("event") or ""), body["data"]


async def receive(
    db: Database,
    *,
    ring: KeyRing,
    raw: bytes,
    signature: str | None,
    secret: str | None,
    gateway: PaystackGateway,
    environment: str,
    provider: str,
    now: datetime | None = None,
) -> str:
    """Handle one delivery; what it did (for logs and tests). 401 when wrongly signed, 503
    when Paystack's verify cannot answer (Paystack delivers again later)."""
    if not signature_valid(secret, raw, signature):
        raise ApiError(401, "unauthenticated", "The x-paystack-signature is not valid.")
    event, data = _event_of(raw)
    if event == "charge.success":
        outcome = await _charge_success(db, ring, data, gateway, environment, provider, now)
    elif event == "refund.processed":
        outcome = await _refund_processed(db, ring, data, environment, now or utcnow())
    else:
        outcome = IGNORED
    log.info("paystack event", extra={"event": event[:40], "outcome": outcome})
    return outcome


async def _charge_success(
    db: Database,
    ring: KeyRing,
    data: dict[str, Any],
    gateway: PaystackGateway,
    environment: str,
    provider: str,
    now: datetime | None,
) -> str:
    reference = data.get("reference")
    if not isinstance(reference, str):
        return UNKNOWN_REFERENCE
    async with db.read() as conn:
        request = await store.request_by_reference(conn, reference)
        if request is None or request.environment != environment:
            return UNKNOWN_REFERENCE
        if await store.payment_of_request(conn, request.id) is not None:
            return DUPLICATE
    try:
        charge = await gateway.verify(reference)
    except PaystackError as exc:
        if exc.retryable:
            raise ApiError(
                503, "service_unavailable", "Paystack could not confirm the charge yet."
            ) from None
        return NOT_SUCCESSFUL
    if charge.status != "success":
        return NOT_SUCCESSFUL
    try:
        async with db.write() as conn:
            # The referral first (every writer's order), then the request: concurrent
            # deliveries queue here and the later ones find the payment.
            await lock_referral(conn, request.referral_id)
            locked = await store.request_by_reference(conn, reference, lock=True)
            assert locked is not None  # requests are never deleted
            if await store.payment_of_request(conn, locked.id) is not None:
                return DUPLICATE
            outcome = await record_payment(
                conn, ring, request=locked, charge=charge, provider=provider, now=now or utcnow()
            )
            await record(
                conn,
                entry("provider:paystack", "payment.recorded", referral_id=locked.referral_id),
            )
            return outcome
    except IntegrityError:  # the unique reference: another delivery won the race
        return DUPLICATE


def _refund_fields(data: dict[str, Any]) -> tuple[str, str, int, str] | None:
    """(refund id, transaction reference, amount, currency) of a ``refund.processed``."""
    refund_id, reference = data.get("id"), data.get("transaction_reference")
    amount, currency = data.get("amount"), data.get("currency")
    if isinstance(amount, str) and amount.isdigit():
        amount = int(amount)  # Paystack's refund events have sent amounts as strings
    if (
        not isinstance(refund_id, int | str)
        or isinstance(refund_id, bool)
        or not isinstance(reference, str)
        or not isinstance(amount, int)
        or isinstance(amount, bool)
        or amount <= 0
        or not isinstance(currency, str)
    ):
        return None
    return str(refund_id)[:64], reference, amount, currency.upper()


async def _refund_processed(
    db: Database, ring: KeyRing, data: dict[str, Any], environment: str, now: datetime
) -> str:
    fields = _refund_fields(data)
    if fields is None:
        return IGNORED
    refund_id, reference, amount, currency = fields
    try:
        async with db.write() as conn:
            request = await store.request_by_reference(conn, reference)
            if request is None or request.environment != environment:
                return UNKNOWN_REFERENCE
            await lock_referral(conn, request.referral_id)
            payment = await store.payment_by_reference(conn, reference, lock=True)
            if payment is None:
                return UNKNOWN_REFERENCE
            if await store.refund_seen(conn, refund_id):
                return DUPLICATE
            if currency != payment.currency:
                # Not a refund of this payment as we know it: nothing is recorded, and the
                # log names the reference for a coordinator (Paystack's dashboard has it).
                log.warning(
                    "refund %s in %s for a payment in %s", reference, currency, payment.currency
                )
                return REFUND_MISMATCH
            await store.insert_refund(
                conn,
                {
                    "id": new_id("rfd"),
                    "payment_id": payment.id,
                    "provider_refund_id": refund_id,
                    "amount_minor": amount,
                    "currency": currency,
                    "created_at": now,
                },
            )
            await record(
                conn,
                entry("provider:paystack", "payment.refunded", referral_id=request.referral_id),
            )
            total = payment.refunded_minor + amount
            whole = policy.refund_state(payment.amount_minor, total) is not None
            was_applied = payment.state == policy.APPLIED
            values: dict[str, Any] = {"refunded_minor": total, "updated_at": now}
            if whole:
                values["state"] = policy.REFUNDED
                await store.set_request_status(conn, request.id, "refunded", now)
            await store.update_payment(conn, payment.id, **values)
            if was_applied:
                await _tell_partner(
                    conn, ring, request.referral_id, amount, currency, total, whole, now
                )
    except IntegrityError:
        return DUPLICATE
    return REFUND_RECORDED


async def _tell_partner(
    conn: AsyncConnection,
    ring: KeyRing,
    referral_id: str,
    amount: int,
    currency: str,
    total: int,
    whole: bool,
    now: datetime,
) -> None:
    """``payment.refunded``; a whole refund reverses the commission first (none is owed on
    money returned)."""
    if whole:
        await conn.execute(
            update(_referrals)
            .where(_referrals.c.id == referral_id)
            .values(commission_minor=0, commission_status=REVERSED, updated_at=now)
        )
    referral = (await conn.execute(select(_referrals).where(_referrals.c.id == referral_id))).one()
    show = (
        await conn.execute(
            select(_partners.c.show_payments).where(_partners.c.id == referral.partner_id)
        )
    ).scalar_one()
    data = {
        "referral_id": referral.id,
        "external_ref": referral.external_ref
        if referral.shape == "v1"
        else referral.partner_reference,
        "status": referral.status,
        "care_mode": referral.care_mode or referral.appointment_care_mode,
        "refund": {"currency": currency, "amount_minor": amount, "refunded_total_minor": total},
        "payment": payment_data(referral) if show else None,
    }
    await record_events(
        conn,
        ring,
        partner_id=referral.partner_id,
        environment=referral.environment,
        events=[
            NewEvent(
                "payment.refunded",
                data,
                referral.id,
                extra_targets=callback_targets(referral),
                occurred_at=now,
            )
        ],
    )
