"""Every bearer credential the service issues is redacted if it ever reaches a log line."""

from __future__ import annotations

import pytest

from rehabref.care.report_links import pdf_url
from rehabref.eligibility import tokens as preauth
from rehabref.instance_secret import SecretBox
from rehabref.logging import redact

BOX = SecretBox("log-redaction-test")


def _pdf_link() -> str:
    return pdf_url(BOX, base_url="https://rehabref.example", referral_id="ref_" + "a" * 26)


def _preauth() -> str:
    grant = preauth.new_grant(
        partner_id="ptn_x",
        environment="test",
        hmo_code="AXA",
        policy_number="P-1",
        procedure_code="PT01",
        member_phone="+2348031234567",
    )
    return preauth.issue(BOX, grant)


@pytest.mark.parametrize(
    "credential",
    [
        _pdf_link(),
        "https://rehabref.example/r/LZqoVEJ-dscaxIF70H10BZIeqIit-Q",
        "op_" + "Xy3_-" * 9,
        _preauth(),
    ],
)
def test_bearer_credentials_are_redacted(credential: str) -> None:
    secret = credential.rsplit("/", 1)[-1]
    line = redact(f"failed while handling {credential} for ptn_x")
    assert secret not in line
    assert "ptn_x" in line


@pytest.mark.parametrize(
    "text",
    [
        "operator opr_01m809cstsvpbwj51dg1xwmkzx signed in",
        "route /reports/pdf/{token}",
        "route /r/{public_code}",
        "type pa_required",
    ],
)
def test_ids_and_route_templates_are_kept(text: str) -> None:
    assert redact(text) == text
