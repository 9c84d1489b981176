"""Rows of payment requests, payments and refunds. Nothing here commits or calls Paystack."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.billing.policy import AWAITING_ATTENDANCE, HELD
from rehabref.billing.rows import PaymentRequestRow, PaymentRow
from rehabref.db import table
from rehabref.tables.billing import Payment, PaymentRefund, PaymentRequest

requests = table(PaymentRequest)
payments = table(Payment)
refunds = table(PaymentRefund)


def request_row(
    *,
    request_id: str,
    referral_id: str,
    partner_id: str,
    environment: str,
    reference: str,
    pay_token: str,
    amount_minor: int,
    currency: str,
    created_by: str,
    expires_at: datetime,
    now: datetime,
) -> dict[str, Any]:
    """A new, pending request; live ones wait for the initialization worker."""
    return {
        "id": request_id,
        "referral_id": referral_id,
        "partner_id": partner_id,
        "environment": environment,
        "reference": reference,
        "pay_token": pay_token,
        "amount_minor": amount_minor,
        "currency": currency,
        "status": "pending",
        "init_state": "pending" if environment == "live" else "not_needed",
        "init_attempts": 0,
        "init_next_at": now,
        "claimed_until": None,
        "authorization_url": None,
        "last_error": None,
        "created_by": created_by[:80],
        "expires_at": expires_at,
        "created_at": now,
        "updated_at": now,
    }


async def insert_request(conn: AsyncConnection, row: dict[str, Any]) -> None:
    await conn.execute(insert(requests), row)


async def request_by_token(conn: AsyncConnection, token: str) -> PaymentRequestRow | None:
    if not token or len(token) > 64:
        return None
    return (await conn.execute(select(requests).where(requests.c.pay_token == token))).first()


async def request_by_reference(
    conn: AsyncConnection, reference: str, *, lock: bool = False
) -> PaymentRequestRow | None:
    if not reference or len(reference) > 64:
        return None
    query = select(requests).where(requests.c.reference == reference)
    if lock:
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def set_request_status(
    conn: AsyncConnection, request_id: str, status: str, now: datetime
) -> None:
    await conn.execute(
        update(requests).where(requests.c.id == request_id).values(status=status, updated_at=now)
    )


async def payment_of_request(conn: AsyncConnection, request_id: str) -> PaymentRow | None:
    return (
        await conn.execute(select(payments).where(payments.c.payment_request_id == request_id))
    ).first()


async def payment_by_reference(
    conn: AsyncConnection, reference: str, *, lock: bool = False
) -> PaymentRow | None:
    if not reference or len(reference) > 64:
        return None
    query = select(payments).where(payments.c.reference == reference)
    if lock:
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def insert_payment(conn: AsyncConnection, row: dict[str, Any]) -> None:
    await conn.execute(insert(payments), row)


async def waiting_for_attendance(conn: AsyncConnection, referral_id: str) -> list[PaymentRow]:
    """Payments of a referral held until its visit is attended, oldest first, locked."""
    query = (
        select(payments)
        .where(
            payments.c.referral_id == referral_id,
            payments.c.state == HELD,
            payments.c.hold_reason == AWAITING_ATTENDANCE,
        )
        .order_by(payments.c.created_at, payments.c.id)
        .with_for_update()
    )
    return list((await conn.execute(query)).all())


async def update_payment(conn: AsyncConnection, payment_id: str, **values: Any) -> None:
    await conn.execute(update(payments).where(payments.c.id == payment_id).values(**values))


async def refund_seen(conn: AsyncConnection, provider_refund_id: str) -> bool:
    found = await conn.execute(
        select(refunds.c.id).where(refunds.c.provider_refund_id == provider_refund_id)
    )
    return found.first() is not None


async def insert_refund(conn: AsyncConnection, row: dict[str, Any]) -> None:
    await conn.execute(insert(refunds), row)


async def payments_of_referral(conn: AsyncConnection, referral_id: str) -> list[PaymentRow]:
    query = select(payments).where(payments.c.referral_id == referral_id).order_by(payments.c.id)
    return list((await conn.execute(query)).all())


async def requests_of_referral(conn: AsyncConnection, referral_id: str) -> list[Row[Any]]:
    """A referral's payment requests with their payment (if any), newest first."""
    query = (
        select(
            requests,
            payments.c.state.label("payment_state"),
            payments.c.hold_reason,
            payments.c.amount_minor.label("paid_minor"),
            payments.c.refunded_minor,
        )
        .outerjoin(payments, payments.c.payment_request_id == requests.c.id)
        .where(requests.c.referral_id == referral_id)
        .order_by(requests.c.id.desc())
    )
    return list((await conn.execute(query)).all())
