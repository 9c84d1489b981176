"""Who is calling the partner API: the subject every partner-facing query is scoped to."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    """Who is calling: one partner, in one environment, with one kind of key."""

    key_id: str
    partner_id: str
    partner_name: str
    environment: str  # test | live
    kind: str  # secret | public
    contract: str  # v1 | g
    show_payments: bool
    commission_bps: int | None
    commission_fixed_minor: int | None

    @property
    def is_sandbox(self) -> bool:
        return self.environment == "test"

    @property
    def actor(self) -> str:
        """How this caller appears in a referral's history."""
        return f"partner:{self.partner_id}:{self.key_id}"
