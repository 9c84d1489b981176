"""The partner's metadata of a referral, sealed at rest.

Threat: partners attach free-form JSON to a referral (``metadata``) and it may carry patient
data (their own patient numbers, names, notes), so a database copy or backup must not reveal
it. It is stored as sealed JSON text by ``stored_referral`` (``referrals.sealing``) on both
create paths and opened by ``partner_metadata`` wherever it is shown (the V1 record, the
data-subject export). A value without the ``s1.`` envelope (rows from before migration 0031)
is read as it is.
"""

from __future__ import annotations

from typing import Any

import msgspec

from rehabref.crypto import KeyRing, open_stored, seal

METADATA = "referral.partner_metadata"


def sealed_metadata(ring: KeyRing, metadata: dict[str, Any] | None) -> str | None:
    """The metadata as stored: its JSON text sealed (None stays None)."""
    if metadata is None:
        return None
    return seal(ring, METADATA, msgspec.json.encode(metadata).decode())


def partner_metadata(ring: KeyRing, stored: str | None) -> dict[str, Any] | None:
    """The partner's metadata as it sent it; a value stored before sealing is plain JSON."""
    if stored is None:
        return None
    text = open_stored(ring, METADATA, stored)
    metadata: dict[str, Any] | None = msgspec.json.decode(text)
    return metadata
