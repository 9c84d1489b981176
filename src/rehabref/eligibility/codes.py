"""The fixed insurer and procedure codes, and the self-pay rates offered as a fallback."""

from __future__ import annotations

HMO_CODES: tuple[str, ...] = (
    "AXA_MANSARD",
    "HYGEIA_HMO",
    "RELIANCE_HMO",
    "LEADWAY_HEALTH",
    "AVON_HMO",
)
STANDARD_SESSION = "PHYSIO_STD_SESSION"
POST_SURGICAL = "PHYSIO_POST_SURGICAL"
PROCEDURE_CODES: tuple[str, ...] = (STANDARD_SESSION, POST_SURGICAL)

# Negotiated self-pay rate per session, kobo (NGN 15,000 and NGN 25,000).
NEGOTIATED_RATE_KOBO: dict[str, int] = {STANDARD_SESSION: 1_500_000, POST_SURGICAL: 2_500_000}

POLICY_STATUSES: tuple[str, ...] = ("active", "inactive", "suspended")

INELIGIBLE_REASONS: tuple[str, ...] = (
    "member_not_found",
    "policy_inactive",
    "policy_expired",
    "not_covered",
    "annual_limit_exceeded",
)
