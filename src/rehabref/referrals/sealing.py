"""The referral's patient identifiers and clinical text, sealed at rest.

Threat: a database copy or backup must not reveal who was referred nor why. Every writer of
a referral stores ``stored_referral(ring, values)`` (sealed names, phone, e-mail, reason and
diagnosis, plus the blind indexes of phone and e-mail); every reader opens them with
``patient_identity`` or ``clinical_text`` (``open_text`` for a single selected column).
Values without the ``s1.`` envelope (rows from before migration 0025, the erasure marker)
are read as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, overload

from rehabref.crypto import KeyRing, open_stored, seal
from rehabref.referrals.partner_metadata import sealed_metadata
from rehabref.referrals.rows import PatientColumns, ReferralRow
from rehabref.referrals.store import with_person_indexes

REASON = "referral.reason"
DIAGNOSIS = "referral.diagnosis"
FIRST_NAME = "referral.patient_first_name"
LAST_NAME = "referral.patient_last_name"
PHONE = "referral.patient_phone"
EMAIL = "referral.patient_email"
CLINICAL_COLUMNS: dict[str, str] = {"reason": REASON, "diagnosis": DIAGNOSIS}
PATIENT_COLUMNS: dict[str, str] = {
    "patient_first_name": FIRST_NAME,
    "patient_last_name": LAST_NAME,
    "patient_phone": PHONE,
    "patient_email": EMAIL,
}
SEALED_COLUMNS: dict[str, str] = {**CLINICAL_COLUMNS, **PATIENT_COLUMNS}


def seal_referral_values(ring: KeyRing, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (columns of ``referrals``) with the patient identifiers and clinical text
    sealed: one AES-GCM call per present field."""
    sealed = dict(values)
    for column, purpose in SEALED_COLUMNS.items():
        text = sealed.get(column)
        if text is not None:
            sealed[column] = seal(ring, purpose, text)
    return sealed


def stored_referral(ring: KeyRing, referral: dict[str, Any]) -> dict[str, Any]:
    """A new referral row as it is stored: phone and e-mail indexed (from the plain values),
    then identifiers, clinical text and the partner's metadata sealed."""
    stored = seal_referral_values(ring, with_person_indexes(ring, referral))
    if "partner_metadata" in stored:
        stored["partner_metadata"] = sealed_metadata(ring, stored["partner_metadata"])
    return stored


@overload
def open_text(ring: KeyRing, purpose: str, stored: str) -> str: ...
@overload
def open_text(ring: KeyRing, purpose: str, stored: None) -> None: ...
@overload
def open_text(ring: KeyRing, purpose: str, stored: str | None) -> str | None: ...
def open_text(ring: KeyRing, purpose: str, stored: str | None) -> str | None:
    """A stored value's text; a value written before sealing is plain and read as it is."""
    return open_stored(ring, purpose, stored)


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


@dataclass(frozen=True, slots=True)
class PatientIdentity:
    first_name: str
    last_name: str | None
    phone: str | None
    email: str | None

    @property
    def full_name(self) -> str:
        return " ".join(part for part in (self.first_name, self.last_name) if part)


def patient_identity(ring: KeyRing, row: PatientColumns) -> PatientIdentity:
    """The referral's patient names, phone and e-mail, opened."""
    return PatientIdentity(
        first_name=open_text(ring, FIRST_NAME, row.patient_first_name) or "",
        last_name=open_text(ring, LAST_NAME, row.patient_last_name),
        phone=open_text(ring, PHONE, row.patient_phone),
        email=open_text(ring, EMAIL, row.patient_email),
    )


def opened_row(ring: KeyRing, columns: Mapping[str, Any]) -> SimpleNamespace:
    """A selected row's columns (``row._mapping``, joined columns too) with each sealed
    referral column it holds opened, read by attribute: for list views and templates."""
    values = dict(columns)
    for column, purpose in SEALED_COLUMNS.items():
        if column in values:
            values[column] = open_text(ring, purpose, values[column])
    return SimpleNamespace(**values)
