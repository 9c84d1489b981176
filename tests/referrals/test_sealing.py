"""The referral's clinical text at rest (referrals/sealing.py): sealed per column, opened
with the ring, legacy plain text read as it is."""

from __future__ import annotations

import pytest

from rehabref.crypto import SealedValueError, parse_key_ring
from rehabref.referrals.sealing import (
    DIAGNOSIS,
    REASON,
    ClinicalText,
    clinical_text,
    open_text,
    stored_referral,
)
from rehabref.result_rows import Record
from tests.support.partners import TEST_RING


def test_stored_referral_seals_reason_and_diagnosis_and_indexes_contacts():
    values = {"reason": "Knee pain", "diagnosis": None, "patient_phone": "+2348031234567"}
    stored = stored_referral(TEST_RING, values)
    assert stored["reason"].startswith("s1.") and "Knee" not in stored["reason"]
    assert stored["diagnosis"] is None
    assert stored["patient_phone_index"] is not None
    assert values["reason"] == "Knee pain"  # the plan's own values are left as they were
    # Two seals of one text differ (random nonce).
    assert stored_referral(TEST_RING, values)["reason"] != stored["reason"]
    row = Record({**stored, "diagnosis": None})
    assert clinical_text(TEST_RING, row) == ClinicalText(reason="Knee pain", diagnosis=None)
    assert clinical_text(TEST_RING, row).summary == "Knee pain"


def test_plain_values_from_before_sealing_are_read_as_they_are():
    assert open_text(TEST_RING, REASON, "Back pain") == "Back pain"
    assert open_text(TEST_RING, REASON, None) is None


def test_a_value_opens_only_for_its_column_and_under_a_ring_that_holds_its_key():
    sealed = stored_referral(TEST_RING, {"reason": "Back pain"})["reason"]
    with pytest.raises(SealedValueError):
        open_text(TEST_RING, DIAGNOSIS, sealed)
    with pytest.raises(SealedValueError):
        open_text(parse_key_ring(f"k9:{'y' * 43}"), REASON, sealed)
