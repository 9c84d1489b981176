"""Card payments across domains: asking a patient to pay, and applying a verified payment
to its referral (``attended -> paid`` with the partner's commission, or held).

- ``request_payment``: a coordinator asks for an amount; the request row (the Paystack
  initialization outbox for live referrals) and the patient's message with the link are
  written in one transaction.
- ``record_payment``: a charge Paystack verified becomes one payment row (unique per
  request and reference: a repeated delivery finds it) and, when it matches the request
  and the visit was attended, moves the referral to ``paid`` (``payment.completed``).
  Otherwise the payment is held: for attendance (applied by ``apply_held_payments`` when
  the referral is attended) or for a coordinator (amount or currency differs, or the
  referral is already paid or ended), who gets a contact task.

Lock order, as every referral writer: the referral row first, then payment rows.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.billing import policy, store
from rehabref.billing.rows import PaymentRequestRow, PaymentRow
from rehabref.billing.schemas import pay_url
from rehabref.channels.content import Template
from rehabref.channels.outbox import enqueue
from rehabref.channels.providers import ChannelProviders
from rehabref.crypto import KeyRing
from rehabref.errors import ApiError
from rehabref.ids import new_id
from rehabref.intake import conversation_store as conversations
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import FIRST_NAME, open_text
from rehabref.referrals.tasks import open_task_once
from rehabref.referrals.transitions import PaymentChange, lock_referral, transition
from rehabref.workflows.first_contact import CHANNEL_OF, patient_address
from rehabref.workflows.move_events import record_move

log = logging.getLogger("rehabref.payments")

PAYSTACK_ACTOR = "paystack"
REVIEW_PURPOSE = "payment_review"
SELF_PAY = frozenset({None, "patient_self_pay"})
LINK_TEXT = {
    "en": "Hello {name}, please pay {amount} for your physiotherapy care with your card "
    "(secure Paystack checkout):",
}


async def request_payment(
    conn: AsyncConnection,
    *,
    referral_id: str,
    amount_minor: int,
    currency: str,
    actor: str,
    base_url: str,
    channels: ChannelProviders,
    ring: KeyRing,
    now: datetime,
    live_payments: bool,
    token_hex: Callable[[int], str] = secrets.token_hex,
    token_urlsafe: Callable[[int], str] = secrets.token_urlsafe,
) -> PaymentRequestRow:
    """Write a payment request and the patient's link message; 404, or 409 when the referral
    cannot take one (paid or ended, not billed to the patient, or live without Paystack)."""
    referral = await lock_referral(conn, referral_id)
    if referral is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    if referral.environment == "live" and not live_payments:
        raise ApiError(
            409,
            "payments_not_configured",
            "Card payments are not configured on this server (REHABREF_PAYSTACK_SECRET_KEY).",
        )
    if referral.status in policy.NOT_PAYABLE:
        raise ApiError(
            409,
            "invalid_transition",
            f"A referral in status {referral.status} cannot take a payment request.",
        )
    if referral.billing_mode not in SELF_PAY:
        raise ApiError(
            409,
            "invalid_transition",
            f"This referral is billed as {referral.billing_mode}, not paid by the patient.",
        )
    row = store.request_row(
        request_id=new_id("prq"),
        referral_id=referral.id,
        partner_id=referral.partner_id,
        environment=referral.environment,
        reference=policy.new_reference(token_hex),
        pay_token=policy.new_pay_token(token_urlsafe),
        amount_minor=amount_minor,
        currency=currency,
        created_by=actor,
        expires_at=policy.expires_at(now),
        now=now,
    )
    await store.insert_request(conn, row)
    link = pay_url(base_url, row["pay_token"])
    await _send_link(conn, ring, referral, link, amount_minor, currency, channels, now)
    found = await conn.execute(select(store.requests).where(store.requests.c.id == row["id"]))
    return found.one()


async def _send_link(
    conn: AsyncConnection,
    ring: KeyRing,
    referral: ReferralRow,
    link: str,
    amount_minor: int,
    currency: str,
    channels: ChannelProviders,
    now: datetime,
) -> None:
    """On the channel of the patient's conversation, else their preferred one; nothing when
    no provider reaches them (the coordinator has the link in the answer)."""
    conversation = await conversations.for_referral(conn, ring, referral.id)
    channel = (
        conversation["channel"]
        if conversation is not None
        else CHANNEL_OF.get(referral.preferred_contact or "messaging", "whatsapp")
    )
    reached = patient_address(ring, referral, channel)
    if reached is None or not channels.reachable(referral.environment, reached[0]):
        log.info(
            "payment link not messaged: no reachable channel", extra={"referral_id": referral.id}
        )
        return
    amount = policy.naira(amount_minor, currency)
    name = open_text(ring, FIRST_NAME, referral.patient_first_name) or ""
    content = Template(
        name="rehabref_payment_link",
        language="en",
        parameters=(name, amount),
        text=LINK_TEXT["en"].format(name=name, amount=amount),
        link=link,
    )
    await enqueue(
        conn,
        ring,
        channel=reached[0],
        to=reached[1],
        content=content,
        purpose="payment.link",
        environment=referral.environment,
        referral_id=referral.id,
        now=now,
    )


async def _pay(
    conn: AsyncConnection, ring: KeyRing, referral_id: str, payment: PaymentRow, now: datetime
) -> Any:
    move = await transition(
        conn,
        referral_id=referral_id,
        to="paid",
        actor=PAYSTACK_ACTOR,
        ring=ring,
        reason=f"card payment {payment.reference}",
        payment=PaymentChange(amount_minor=payment.amount_minor, currency=payment.currency),
        now=now,
    )
    await record_move(conn, ring, move)
    await store.update_payment(
        conn, payment.id, state=policy.APPLIED, hold_reason=None, applied_at=now, updated_at=now
    )
    await store.set_request_status(conn, payment.payment_request_id, "paid", now)
    return move.referral


async def record_payment(
    conn: AsyncConnection,
    ring: KeyRing,
    *,
    request: PaymentRequestRow,
    charge: policy.Charge,
    provider: str,
    now: datetime,
) -> str:
    """A verified successful charge, once: ``applied``, ``held`` or ``duplicate``. The caller
    holds the referral's lock and has checked the request has no payment yet."""
    referral = await lock_referral(conn, request.referral_id)
    if referral is None:  # a request outlives nothing: referrals are never deleted
        raise ApiError(404, "not_found", "No referral with this identifier.")
    decision = policy.decide(
        charge=charge,
        amount_minor=request.amount_minor,
        currency=request.currency,
        referral_status=referral.status,
    )
    payment_id = new_id("pay")
    await store.insert_payment(
        conn,
        {
            "id": payment_id,
            "payment_request_id": request.id,
            "referral_id": request.referral_id,
            "reference": request.reference,
            "provider": provider,
            "amount_minor": charge.amount_minor,
            "currency": charge.currency,
            "state": policy.HELD,
            "hold_reason": decision.hold_reason,
            "refunded_minor": 0,
            "paid_at": now,
            "applied_at": None,
            "created_at": now,
            "updated_at": now,
        },
    )
    payment = await store.payment_by_reference(conn, request.reference)
    assert payment is not None  # written just above, in this transaction
    if decision.state == policy.APPLIED:
        await _pay(conn, ring, referral.id, payment, now)
        return policy.APPLIED
    await store.set_request_status(conn, request.id, "held", now)
    if decision.hold_reason != policy.AWAITING_ATTENDANCE:
        await open_task_once(conn, referral=referral, purpose=REVIEW_PURPOSE, now=now)
    log.info(
        "card payment held",
        extra={"referral_id": referral.id, "reason": decision.hold_reason},
    )
    return policy.HELD


async def apply_held_payments(
    conn: AsyncConnection, ring: KeyRing, referral: ReferralRow, *, now: datetime
) -> ReferralRow:
    """The referral was just attended: a payment held for that moves it to ``paid``. More
    than one (two links paid) go to a coordinator: only one payment makes a referral paid."""
    held = await store.waiting_for_attendance(conn, referral.id)
    if not held:
        return referral
    if held[0].refunded_minor > 0:  # partly refunded while it waited: a coordinator decides
        await review_held_payments(conn, referral, now=now)
        return referral
    paid = await _pay(conn, ring, referral.id, held[0], now)
    for extra in held[1:]:
        await store.update_payment(
            conn, extra.id, hold_reason=policy.REFERRAL_STATUS, updated_at=now
        )
        await open_task_once(conn, referral=referral, purpose=REVIEW_PURPOSE, now=now)
    result: ReferralRow = paid
    return result


async def review_held_payments(
    conn: AsyncConnection, referral: ReferralRow, *, now: datetime
) -> None:
    """The referral ended before its visit was attended: a payment waiting for that now
    needs a coordinator (a refund, most likely)."""
    held = await store.waiting_for_attendance(conn, referral.id)
    for payment in held:
        await store.update_payment(
            conn, payment.id, hold_reason=policy.REFERRAL_STATUS, updated_at=now
        )
    if held:
        await open_task_once(conn, referral=referral, purpose=REVIEW_PURPOSE, now=now)
