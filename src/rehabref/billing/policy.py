"""Pure payment decisions: references, expiry, the placeholder e-mail, and what to do with
a verified charge. Time and randomness are passed in.

Threat: a charge that does not match what we asked for (a tampered amount, another
currency) must never mark a referral paid; it is held for a coordinator. A charge that
arrives before the visit was attended is held and applied when it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

# How long a payment link stays payable (the page says expired afterwards).
LINK_LIFETIME = timedelta(days=7)
# Paystack needs an e-mail; a patient without one gets this non-routable address (RFC 2606
# reserves .invalid: mail to it can never be delivered).
PLACEHOLDER_DOMAIN = "patients.rehabref.invalid"
CURRENCIES = ("NGN",)

# Payment states and the reasons a payment is held.
APPLIED = "applied"
HELD = "held"
REFUNDED = "refunded"
AWAITING_ATTENDANCE = "awaiting_attendance"
AMOUNT_MISMATCH = "amount_mismatch"
REFERRAL_STATUS = "referral_status"

# Referral statuses before the visit is attended: a payment then waits for attendance.
BEFORE_ATTENDANCE = frozenset({"received", "contact_pending", "assistant_started", "booked"})
# Referral statuses that cannot take a payment request.
NOT_PAYABLE = frozenset({"paid", "closed", "cancelled"})


def new_reference(token_hex: Callable[[int], str]) -> str:
    """Our unique Paystack transaction reference (``rr_`` + 24 random hex characters)."""
    return "rr_" + token_hex(12)


def new_pay_token(token_urlsafe: Callable[[int], str]) -> str:
    return token_urlsafe(24)


def expires_at(now: datetime) -> datetime:
    return now + LINK_LIFETIME


def is_expired(expires: datetime, now: datetime) -> bool:
    return now >= expires


def payer_email(patient_email: str | None, referral_id: str) -> str:
    """The patient's e-mail, or a placeholder derived from the referral id (no patient data;
    never delivered)."""
    if patient_email:
        return patient_email
    return f"{referral_id}@{PLACEHOLDER_DOMAIN}"


@dataclass(frozen=True)
class Charge:
    """What Paystack's verify said about a transaction."""

    reference: str
    status: str
    amount_minor: int
    currency: str


@dataclass(frozen=True)
class Decision:
    state: str  # APPLIED or HELD
    hold_reason: str | None = None


def decide(*, charge: Charge, amount_minor: int, currency: str, referral_status: str) -> Decision:
    """What a verified, successful charge does to its referral."""
    if charge.amount_minor != amount_minor or charge.currency.upper() != currency:
        return Decision(HELD, AMOUNT_MISMATCH)
    if referral_status == "attended":
        return Decision(APPLIED)
    if referral_status in BEFORE_ATTENDANCE:
        return Decision(HELD, AWAITING_ATTENDANCE)
    return Decision(HELD, REFERRAL_STATUS)  # already paid, closed or cancelled


def naira(amount_minor: int, currency: str) -> str:
    """``NGN 20,000.50`` for a patient message."""
    return f"{currency} {amount_minor // 100:,}.{amount_minor % 100:02d}"


def refund_state(amount_minor: int, refunded_minor: int) -> str | None:
    """The payment's state once ``refunded_minor`` in all was returned: refunded when whole."""
    return REFUNDED if refunded_minor >= amount_minor else None


def next_init_attempt(now: datetime, attempts: int, base_seconds: float) -> datetime:
    """When a failed Paystack initialization is tried again: doubling, at most 5 minutes."""
    return now + timedelta(seconds=min(base_seconds * 2 ** max(attempts - 1, 0), 300.0))
