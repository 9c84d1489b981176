"""The pure parts of patients' rights: withdrawal tokens, the withdrawal line on messages,
scrubbing free-form values, and the export's coverage of every table."""

from __future__ import annotations

from datetime import UTC, datetime

from rehabref.channels.content import Reply, Template, plain_text, to_json
from rehabref.channels.outbox import OPT_OUT_ACK
from rehabref.channels.worker import ClaimedMessage, MessageWorker, MessageWorkerConfig
from rehabref.instance_secret import SecretBox
from rehabref.referrals.withdrawal_links import (
    read_withdrawal_token,
    withdrawal_token,
    withdrawal_url,
)
from rehabref.tables import metadata
from rehabref.workflows.consent import end_status
from rehabref.workflows.person_erasure import ERASED, scrub_value
from rehabref.workflows.person_export import NOT_EXPORTED, PER_REFERRAL

BOX = SecretBox("s" * 48)
REFERRAL = "ref_01JD0000000000000000000000"


def test_withdrawal_tokens_carry_only_the_referral_id_and_cannot_be_forged():
    token = withdrawal_token(BOX, REFERRAL)
    assert read_withdrawal_token(BOX, token) == REFERRAL
    assert read_withdrawal_token(SecretBox("t" * 48), token) is None
    other = "ref_01JD0000000000000000000001"
    assert read_withdrawal_token(BOX, other + token[len(REFERRAL) :]) is None
    for junk in ("", "ref_", token + "x", "é" * 40, token.replace(".", "")):
        assert read_withdrawal_token(BOX, junk) is None
    assert withdrawal_url(BOX, "https://r.example", REFERRAL) == f"https://r.example/w/{token}"


def message(purpose: str, content: Reply | Template, referral_id: str | None) -> ClaimedMessage:
    now = datetime(2026, 11, 24, tzinfo=UTC)
    return ClaimedMessage(
        id="msg_1",
        referral_id=referral_id,
        environment="live",
        channel="sms",
        recipient="+2348031234567",
        recipient_ref="r",
        purpose=purpose,
        content=to_json(content),
        attempts=0,
        created_at=now,
        lease_until=now,
    )


def test_every_sent_referral_message_says_how_to_withdraw():
    worker = MessageWorker(
        None,  # type: ignore[arg-type]  # content_of reads nothing
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        MessageWorkerConfig(),
        withdrawal_link=lambda referral_id: f"https://r.example/w/{referral_id}.sig",
    )
    reply = worker.content_of(message("intake.reply", Reply("Which day?"), REFERRAL))
    assert plain_text(reply).startswith("Which day?\n\nTo withdraw your consent")
    assert f"https://r.example/w/{REFERRAL}.sig" in plain_text(reply)
    template = Template("greeting", "en", ("Ada",), "Hello Ada")
    assert "/w/" in worker.content_of(message("intake.first_contact", template, REFERRAL)).text
    # The STOP confirmation and messages about no referral are left as written.
    assert worker.content_of(message(OPT_OUT_ACK, Reply("Done."), REFERRAL)) == Reply("Done.")
    assert worker.content_of(message("x", Reply("Hi"), None)) == Reply("Hi")


def test_scrubbing_removes_identifiers_and_clinical_keys_at_any_depth():
    data = {
        "referral_id": "ref_1",
        "status": "cancelled",
        "patient": {"name": "Ngozi Obi", "phone": "+2348031234567", "city": "Enugu"},
        "notes": ["called +2348031234567 twice", "fine"],
        "diagnosis": "Rotator cuff tear",
        "amount_minor": 150000,
    }
    scrubbed = scrub_value(data, {"Ngozi", "+2348031234567"})
    assert scrubbed == {
        "referral_id": "ref_1",
        "status": "cancelled",
        "patient": {"name": ERASED, "phone": ERASED, "city": "Enugu"},
        "notes": [ERASED, "fine"],
        "amount_minor": 150000,
    }


def test_withdrawal_closes_once_care_was_given_and_cancels_before():
    assert [end_status(s) for s in ("received", "booked", "attended", "paid")] == [
        "cancelled",
        "cancelled",
        "closed",
        "closed",
    ]


def test_the_export_covers_every_table_holding_a_referral():
    holding = {t.name for t in metadata.sorted_tables if "referral_id" in t.c}
    exported = {t.name for t in PER_REFERRAL.values()}
    assert holding - exported - set(NOT_EXPORTED) == set()
