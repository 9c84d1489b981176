"""Who gets what when no provider is configured (the suite's shared server has none): live
referrals go to a coordinator and say so; test keys are recorded by the sandbox."""

from __future__ import annotations

from sqlalchemy import text

from tests.conftest import auth, count
from tests.shapeg.bodies import g_referral
from tests.support.messages import opened_content
from tests.support.payloads import v1_referral


def test_live_v1_without_a_provider_opens_a_coordinator_task_and_messages_nobody(
    client, partner, sql
):
    created = client.post(
        "/api/v1/partners/referrals",
        json=v1_referral(),
        headers=auth(partner["keys"]["sk_live"], "r1"),
    )
    assert created.status_code == 201
    referral_id = created.json()["referral_id"]
    with sql.connect() as conn:
        purposes = conn.execute(
            text("SELECT purpose FROM contact_tasks WHERE referral_id = :r"), {"r": referral_id}
        ).scalars()
        assert list(purposes) == ["no_channel_configured"]
    assert (
        count(sql, "SELECT count(*) FROM outbound_messages WHERE referral_id = :r", r=referral_id)
        == 0
    )


def test_live_shape_g_without_whatsapp_is_not_dispatched(client, make_partner, sql):
    partner = make_partner(name="G live", contract="g")
    created = client.post(
        "/api/v1/partners/referrals", json=g_referral(), headers=auth(partner["keys"]["sk_live"])
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["messaging_intake"]["dispatched"] is False
    assert body["intake_status"] == "pending_coordinator_contact"
    assert (
        count(
            sql,
            "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND purpose = "
            "'no_channel_configured'",
            r=body["referral_id"],
        )
        == 1
    )


def test_test_keys_are_recorded_by_the_sandbox_and_never_sent(client, make_partner, sql):
    partner = make_partner(name="G test", contract="g")
    created = client.post(
        "/api/v1/partners/referrals", json=g_referral(), headers=auth(partner["keys"]["sk_test"])
    )
    body = created.json()
    assert body["messaging_intake"]["dispatched"] is True
    with sql.connect() as conn:
        message = conn.execute(
            text(
                "SELECT state, provider, channel, content FROM outbound_messages "
                "WHERE referral_id = :r"
            ),
            {"r": body["referral_id"]},
        ).one()
    assert (message.state, message.provider, message.channel) == ("sent", "sandbox", "whatsapp")
    # What would have been sent (sealed at rest).
    assert "rehabref_intake_start" in str(opened_content(message.content))


def test_start_up_warns_once_per_channel_without_a_provider(server):
    logs = server.logs()
    for channel in ("whatsapp", "sms", "email"):
        assert logs.count(f"no {channel} provider configured") == 1, channel
