"""The initialization worker: asks Paystack for each live payment request's checkout.

Creating a payment request writes a row with ``init_state`` pending in the coordinator's
transaction; this worker (a periodic job of the delivery worker) claims due rows with a
lease (``FOR UPDATE SKIP LOCKED`` on PostgreSQL), calls ``POST /transaction/initialize``
outside any transaction, and records the outcome only while it still holds the lease. A
worker killed mid-call leaves the row ``sending``; after the lease any worker claims it
again. Retryable failures back off (``policy.next_init_attempt``); a refusal, or too many
failures, marks it ``failed`` (the pay page then tells the patient to contact the clinic,
and the coordinator makes a new request).

Threat: the patient's e-mail and our secret key never reach the logs; only the request id
and Paystack's error reason do.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import and_, or_, select, update

from rehabref.billing.paystack import Initialized, PaystackError
from rehabref.billing.policy import next_init_attempt, payer_email
from rehabref.billing.schemas import pay_url
from rehabref.billing.store import requests
from rehabref.clock import utcnow
from rehabref.crypto import KeyRing
from rehabref.db import Database, table
from rehabref.referrals.sealing import EMAIL, open_text
from rehabref.tables.referrals import Referral

log = logging.getLogger("rehabref.payments")
_referrals = table(Referral)

MAX_INIT_ATTEMPTS = 6


class Initializer(Protocol):
    async def initialize(
        self,
        *,
        email: str,
        amount_minor: int,
        currency: str,
        reference: str,
        callback_url: str,
        metadata: dict[str, str],
    ) -> Initialized: ...


@dataclass(frozen=True)
class InitializerConfig:
    base_url: str
    lease_seconds: float = 60.0
    retry_base_seconds: float = 5.0
    batch_size: int = 16


@dataclass(frozen=True)
class _Claimed:
    id: str
    referral_id: str
    reference: str
    pay_token: str
    amount_minor: int
    currency: str
    email: str
    attempts: int
    lease_until: datetime


async def _claim(
    db: Database, config: InitializerConfig, ring: KeyRing, now: datetime
) -> list[_Claimed]:
    r = requests
    due = or_(
        and_(r.c.init_state == "pending", r.c.init_next_at <= now),
        and_(r.c.init_state == "sending", r.c.claimed_until < now),
    )
    query = select(r.c.id).where(due).order_by(r.c.init_next_at).limit(config.batch_size)
    if db.is_sqlite:
        async with db.read() as conn:  # an idle poll never takes the SQLite write lock
            if (await conn.execute(query.limit(1))).first() is None:
                return []
    else:
        query = query.with_for_update(skip_locked=True)
    lease_until = now + timedelta(seconds=config.lease_seconds)
    async with db.write() as conn:
        ids = list((await conn.execute(query)).scalars())
        if not ids:
            return []
        await conn.execute(
            update(r)
            .where(r.c.id.in_(ids))
            .values(
                init_state="sending",
                claimed_until=lease_until,
                init_attempts=r.c.init_attempts + 1,
                updated_at=now,
            )
        )
        rows = (
            await conn.execute(
                select(r, _referrals.c.patient_email)
                .join(_referrals, _referrals.c.id == r.c.referral_id)
                .where(r.c.id.in_(ids))
            )
        ).all()
    return [
        _Claimed(
            id=row.id,
            referral_id=row.referral_id,
            reference=row.reference,
            pay_token=row.pay_token,
            amount_minor=row.amount_minor,
            currency=row.currency,
            email=payer_email(open_text(ring, EMAIL, row.patient_email), row.referral_id),
            attempts=row.init_attempts,
            lease_until=lease_until,
        )
        for row in rows
    ]


async def _record(db: Database, claimed: _Claimed, values: dict[str, Any]) -> None:
    r = requests
    async with db.write() as conn:
        await conn.execute(
            update(r)
            .where(
                r.c.id == claimed.id,
                r.c.init_state == "sending",
                r.c.claimed_until == claimed.lease_until,
            )
            .values(claimed_until=None, **values)
        )


async def initialize_due(
    db: Database,
    client: Initializer,
    config: InitializerConfig,
    *,
    ring: KeyRing,
    now: datetime | None = None,
) -> int:
    """One round: initialize every due request; returns how many were tried."""
    claimed = await _claim(db, config, ring, now or utcnow())
    for item in claimed:
        try:
            done = await client.initialize(
                email=item.email,
                amount_minor=item.amount_minor,
                currency=item.currency,
                reference=item.reference,
                callback_url=pay_url(config.base_url, item.pay_token),
                metadata={"referral_id": item.referral_id, "payment_request_id": item.id},
            )
        except PaystackError as exc:
            final = not exc.retryable or item.attempts >= MAX_INIT_ATTEMPTS
            at = utcnow()
            await _record(
                db,
                item,
                {
                    "init_state": "failed" if final else "pending",
                    "init_next_at": next_init_attempt(at, item.attempts, config.retry_base_seconds),
                    "last_error": exc.reason,
                    "updated_at": at,
                },
            )
            log.warning(
                "paystack initialize failed",
                extra={"payment_request_id": item.id, "reason": exc.reason, "final": final},
            )
            continue
        await _record(
            db,
            item,
            {
                "init_state": "done",
                "authorization_url": done.authorization_url[:2048],
                "last_error": None,
                "updated_at": utcnow(),
            },
        )
        log.info("paystack transaction initialized", extra={"payment_request_id": item.id})
    return len(claimed)
