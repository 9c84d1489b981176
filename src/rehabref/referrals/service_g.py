"""The names the Shape G create workflow imports (``workflows/referral_created_g.py``).

Tracking codes are ``referrals/tracking.py`` and lookups ``referrals/store.py``; this module
only keeps that workflow's imports working until it imports them from there.
"""

from __future__ import annotations

from rehabref.fastsql import Connection
from rehabref.principal import Principal
from rehabref.referrals import store
from rehabref.referrals.tracking import new_tracking_code, tracking_url
from rehabref.scope import PartnerScope

__all__ = ["find_by_partner_reference", "new_tracking_code", "tracking_url"]


async def find_by_partner_reference(
    conn: Connection, *, principal: Principal, partner_reference: str
) -> str | None:
    """The id of the caller's referral with this partner_reference, if any."""
    return await store.find_id_by_partner_reference(
        conn, scope=PartnerScope.of(principal), partner_reference=partner_reference
    )
