"""Partner commission on a qualifying payment: integer arithmetic only.

Rounding: the basis-point part is floored, ``amount_minor * bps // 10000`` (never in the
partner's favour by a fraction of a minor unit); the fixed part is capped at the amount
paid. When an agreement has both, the sum is capped at the amount. No agreement (both
``None``) or zero rates mean no commission: a hosted-link click alone never makes a
referral eligible; only the partner's commercial agreement does.
"""

from __future__ import annotations

from dataclasses import dataclass

BPS_DENOMINATOR = 10_000
MAX_AMOUNT_MINOR = 2_000_000_000  # fits the 32-bit integer columns
MAX_BPS = 10_000

PENDING_SETTLEMENT = "pending_settlement"
NOT_ELIGIBLE = "not_eligible"


def commission_for(amount_minor: int, *, bps: int | None, fixed_minor: int | None) -> int:
    """The partner's commission in minor units for a payment of ``amount_minor``."""
    if amount_minor < 0:
        raise ValueError("amount_minor must not be negative")
    if bps is not None and not 0 <= bps <= MAX_BPS:
        raise ValueError("bps must be within 0..10000")
    if fixed_minor is not None and fixed_minor < 0:
        raise ValueError("fixed_minor must not be negative")
    by_rate = amount_minor * bps // BPS_DENOMINATOR if bps else 0
    fixed = min(fixed_minor, amount_minor) if fixed_minor else 0
    return min(by_rate + fixed, amount_minor)


@dataclass(frozen=True)
class PaymentRecord:
    currency: str
    amount_minor: int
    commission_minor: int
    commission_status: str


def record_for(
    *, currency: str, amount_minor: int, bps: int | None, fixed_minor: int | None
) -> PaymentRecord:
    # An agreement stored with a negative fixed amount grants nothing (never a 500).
    fixed_minor = fixed_minor if fixed_minor is not None and fixed_minor > 0 else None
    commission = commission_for(amount_minor, bps=bps, fixed_minor=fixed_minor)
    eligible = bool(bps) or bool(fixed_minor)
    return PaymentRecord(
        currency=currency,
        amount_minor=amount_minor,
        commission_minor=commission,
        commission_status=PENDING_SETTLEMENT if eligible else NOT_ELIGIBLE,
    )
