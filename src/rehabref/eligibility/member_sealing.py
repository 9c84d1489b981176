"""An HMO member's name and phone, sealed at rest.

Threat: the member registry lists every insured person an HMO sends us, most of whom are
never referred; a database copy must not reveal who they are. Members are found by HMO code
and policy number, which stay plain (the HMO's own identifiers, compared by equality); the
name and phone are sealed by the CSV import and opened only where a live eligibility check
reads the member. Values imported before migration 0032 have no envelope and are read as
they are.
"""

from __future__ import annotations

from typing import Any

from rehabref.crypto import KeyRing, open_stored, seal

NAME = "hmo_member.name"
PHONE = "hmo_member.phone"
SEALED_COLUMNS: dict[str, str] = {"name": NAME, "phone": PHONE}


def stored_member(ring: KeyRing, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (columns of ``hmo_members``) with the name and phone sealed."""
    stored = dict(values)
    for column, purpose in SEALED_COLUMNS.items():
        if stored.get(column) is not None:
            stored[column] = seal(ring, purpose, stored[column])
    return stored


def opened_name(ring: KeyRing, stored: str) -> str:
    return open_stored(ring, NAME, stored) or ""


def opened_phone(ring: KeyRing, stored: str) -> str:
    return open_stored(ring, PHONE, stored) or ""
