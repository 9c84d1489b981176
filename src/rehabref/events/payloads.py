"""Common parts of event ``data`` payloads."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row


def referral_base(row: Row[Any]) -> dict[str, Any]:
    """Identifiers and status every referral event carries (a ``referrals`` row)."""
    data: dict[str, Any] = {"referral_id": row.id, "status": row.status}
    if row.shape == "v1":
        data["external_ref"] = row.external_ref
        data["care_mode"] = row.care_mode
    else:
        data["partner_reference"] = row.partner_reference
        data["tracking_code"] = row.tracking_code
    return data
