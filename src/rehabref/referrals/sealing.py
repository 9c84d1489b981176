"""The referral's clinical text (reason, diagnosis), sealed at rest.

Threat: a database copy or backup must not reveal why a patient was referred. Every writer
of a referral stores ``stored_referral(ring, values)`` (sealed text and the blind indexes);
every reader of the text opens it with ``clinical_text``. Rows written before sealing began
hold plain text, which is read as it is (a value without the ``s1.`` envelope).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rehabref.crypto import SEALED_PREFIX, KeyRing, open_sealed, seal
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.store import with_person_indexes

REASON = "referral.reason"
DIAGNOSIS = "referral.diagnosis"
SEALED_COLUMNS: dict[str, str] = {"reason": REASON, "diagnosis": DIAGNOSIS}


def seal_referral_values(ring: KeyRing, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (columns of ``referrals``) with the clinical text sealed."""
    sealed = dict(values)
    for column, purpose in SEALED_COLUMNS.items():
        text = sealed.get(column)
        if text is not None:
            sealed[column] = seal(ring, purpose, text)
    return sealed


def stored_referral(ring: KeyRing, referral: dict[str, Any]) -> dict[str, Any]:
    """A new referral row as it is stored: clinical text sealed, phone and e-mail indexed."""
    return seal_referral_values(ring, with_person_indexes(ring, referral))


def open_text(ring: KeyRing, purpose: str, stored: str | None) -> str | None:
    """A stored value's text; a value written before sealing is plain and read as it is."""
    if stored is None or not stored.startswith(SEALED_PREFIX):
        return stored
    return open_sealed(ring, purpose, stored)


@dataclass(frozen=True, slots=True)
class ClinicalText:
    reason: str | None
    diagnosis: str | None

    @property
    def summary(self) -> str | None:
        """What the referral is for: the diagnosis, else the reason."""
        return self.diagnosis or self.reason


def clinical_text(ring: KeyRing, row: ReferralRow) -> ClinicalText:
    """The referral's reason and diagnosis, opened."""
    return ClinicalText(
        reason=open_text(ring, REASON, row.reason),
        diagnosis=open_text(ring, DIAGNOSIS, row.diagnosis),
    )
