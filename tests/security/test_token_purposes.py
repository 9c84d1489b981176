"""Every signed token is bound to its purpose: all are signed with the same instance key, so
each signs a distinct prefix, and a token of one kind never verifies as another kind."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from rehabref.care.report_links import pdf_token, read_pdf_token
from rehabref.console.session import _read_session, new_session_value
from rehabref.instance_secret import SecretBox
from rehabref.intake.service import assistant_token, form_token, read_assistant_token
from rehabref.pages import form_tokens

BOX = SecretBox("purpose-binding-test")
# An id that fits every reader's shape, so only the purpose prefix can tell them apart.
REF = "ref_" + "a" * 26


def test_each_token_verifies_only_for_its_own_purpose() -> None:
    expires = datetime.now(UTC) + timedelta(hours=1)
    assistant = assistant_token(BOX, session_id=REF, expires_at=expires)
    report = pdf_token(BOX, referral_id=REF)
    # Genuine tokens work for their own purpose ...
    assert read_assistant_token(BOX, assistant) == (REF, True)
    assert read_pdf_token(BOX, report) == REF
    # ... and never for another one.
    assert read_pdf_token(BOX, assistant) is None
    assert read_assistant_token(BOX, report) is None
    session = new_session_value(BOX, REF)
    assert _read_session(BOX, session) is not None
    operator_id, expiry, nonce, signature = session.split(".")
    assert read_pdf_token(BOX, f"{operator_id}.{expiry}.{signature}") is None
    assert read_assistant_token(BOX, f"{operator_id}.{expiry}.{signature}") is None
    # A report or assistant signature cannot be turned into a console session.
    for token in (assistant, report):
        body_id, body_expiry, body_signature = token.split(".")
        assert _read_session(BOX, f"{body_id}.{body_expiry}.{nonce}.{body_signature}") is None
    # The intake form's CSRF value is not a valid signature for anything else.
    intake_csrf = form_token(BOX, REF)
    assert read_pdf_token(BOX, f"{REF}.{int(time.time()) + 60}.{intake_csrf}") is None


def test_csrf_tokens_are_bound_to_purpose_and_cookie() -> None:
    token = form_tokens.issue(BOX, purpose="link:abc", binding="cookie-1")
    check = form_tokens.check
    assert check(BOX, purpose="link:abc", binding="cookie-1", token=token, max_age=60)
    assert check(BOX, purpose="link:abd", binding="cookie-1", token=token, max_age=60) is None
    assert check(BOX, purpose="console", binding="cookie-1", token=token, max_age=60) is None
    assert check(BOX, purpose="link:abc", binding="cookie-2", token=token, max_age=60) is None
    old = form_tokens.issue(BOX, purpose="console", binding="n")
    issued, nonce, signature = old.split(".")
    future = f"{int(issued) + 3600}.{nonce}.{signature}"
    assert check(BOX, purpose="console", binding="n", token=future, max_age=60) is None
