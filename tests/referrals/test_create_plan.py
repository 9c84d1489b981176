"""A create is planned as rows without a database: what a V1 plan holds, and its fan-out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec

from rehabref.channels.providers import ChannelProviders
from rehabref.channels.sealing import opened_message
from rehabref.events.outbox import Endpoint
from rehabref.instance_secret import SecretBox
from rehabref.principal import Principal
from rehabref.referrals.schemas_v1 import ReferralCreateV1
from rehabref.sandbox import scenarios
from rehabref.sandbox.messages import SandboxChannel
from rehabref.workflows.referral_created import IntakeSettings, plan_v1
from tests.support.payloads import v1_referral

NOW = datetime(2026, 11, 24, 9, 30, tzinfo=UTC)
PRINCIPAL = Principal(
    key_id="key_test",
    partner_id="ptn_plan",
    partner_name="Clinic",
    environment="test",
    kind="secret",
    contract="v1",
    show_payments=False,
    commission_bps=None,
    commission_fixed_minor=None,
)
INTAKE = IntakeSettings(
    box=SecretBox("x"),
    base_url="http://localhost",
    assistant_ttl_seconds=60,
    channels=ChannelProviders(live={}, test=SandboxChannel()),
)
TEST_PHONE = "+2348099990001"  # sandbox scenario 1


def plan(**overrides):
    request = ReferralCreateV1.model_validate(v1_referral(**overrides))
    return plan_v1(
        principal=PRINCIPAL,
        request=request,
        intake=INTAKE,
        now=NOW,
        on_created=(scenarios.begin,),
    )


def test_an_assistant_route_plan_holds_every_row_and_the_answer():
    planned = plan(route="assistant")
    referral_id = planned.referral["id"]
    assert planned.referral["status"] == "received" and planned.referral["created_at"] == NOW
    assert [row["to_status"] for row in planned.transitions] == ["received"]
    (session,) = planned.assistant_sessions
    assert session["referral_id"] == referral_id
    assert session["expires_at"] == NOW + timedelta(seconds=60)
    assert not planned.contact_tasks and not planned.coverage
    # The first message, recorded by the sandbox (a test key) and never sent, and the
    # conversation it opens.
    (stored,) = planned.messages
    assert stored["content"].startswith("s1.k0.")  # sealed in the plan, as it is stored
    message = opened_message(INTAKE.box.ring, stored)
    assert (message["channel"], message["state"], message["provider"]) == (
        "whatsapp",
        "sent",
        "sandbox",
    )
    assert message["content"]["type"] == "template"
    assert message["content"]["link"].startswith("http://localhost/a/")
    (conversation,) = planned.conversations
    assert conversation["referral_id"] == referral_id
    assert conversation["nudge_at"] == NOW + timedelta(hours=24)
    (event,) = planned.events
    body = msgspec.json.decode(event.row["body"])
    assert (body["event_id"], body["type"]) == (event.row["id"], "referral.created")
    answer = msgspec.json.decode(planned.response)
    assert answer["referral_id"] == referral_id
    assert answer["assistant_session_url"].startswith("http://localhost/a/")
    assert not planned.jobs  # not a test phone


def test_a_contact_route_plan_opens_a_task_and_announces_it():
    planned = plan(route="contact")
    (task,) = planned.contact_tasks
    assert not planned.assistant_sessions
    assert [row["to_status"] for row in planned.transitions] == ["received", "contact_pending"]
    types = [event.row["type"] for event in planned.events]
    assert types == ["referral.created", "contact.requested"]
    assert planned.events[1].row["data"]["contact_task_id"] == task["id"]


def test_hooks_add_their_rows_to_the_plan():
    planned = plan(patient={"first_name": "Test", "phone": TEST_PHONE, "city": "Lagos"})
    (job,) = planned.jobs
    assert job["kind"] == "sandbox.intake" and job["referral_id"] == planned.referral["id"]
    assert job["due_at"] == NOW + scenarios.INTAKE_DELAY


def test_deliveries_go_to_the_subscribed_endpoints_in_event_order():
    planned = plan(route="contact")
    endpoints = [
        Endpoint("whe_every", "http://127.0.0.1:9/every", None),
        Endpoint("whe_contact", "http://127.0.0.1:9/contact", ["contact.requested"]),
        Endpoint("whe_other", "http://127.0.0.1:9/other", ["payment.completed"]),
    ]
    deliveries = planned.deliveries(endpoints)
    created, requested = (event.row["id"] for event in planned.events)
    assert [(row["event_id"], row["endpoint_id"]) for row in deliveries] == [
        (created, "whe_every"),
        (requested, "whe_every"),
        (requested, "whe_contact"),
    ]
    assert [row["id"] for row in deliveries] == sorted(row["id"] for row in deliveries)
    assert planned.deliveries([]) == []
