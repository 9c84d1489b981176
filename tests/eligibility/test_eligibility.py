"""Eligibility checks: the member registry (CSV import), every reason, sandbox, pre-auth."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid

import pytest

from rehabref import wiring
from rehabref.db import Database
from rehabref.eligibility.member_sealing import opened_name, opened_phone
from rehabref.eligibility.service import consume_session
from tests.conftest import auth
from tests.shapeg.bodies import g_referral, one
from tests.support.partners import TEST_RING, TEST_SECRET_KEY
from tests.support.server import isolated_environ

PATH = "/api/v1/partners/eligibility"
PHONE = "+2348031112222"
HEADER = (
    "policy_number,name,phone,plan_tier,policy_status,expiry_date,annual_session_limit,"
    "sessions_used,co_pay_kobo,post_surgical_covered,pre_auth_required,physiotherapy_covered"
)


@pytest.fixture(scope="module")
def members(database_url, tmp_path_factory):
    """Import one HMO's registry through the CLI; returns the policy numbers by case."""
    tag = uuid.uuid4().hex[:6].upper()
    cases = {
        "ok": f"OK-{tag},Amina Bello,{PHONE},Gold,active,2099-12-31,10,2,250000,true,true,true",
        "inactive": f"IN-{tag},B,{PHONE},Gold,inactive,2099-12-31,10,0,0,true,false,true",
        "expired": f"EX-{tag},C,{PHONE},Gold,active,2020-01-31,10,0,0,true,false,true",
        "no_physio": f"NP-{tag},D,{PHONE},Basic,active,2099-12-31,10,0,0,false,false,no",
        "no_surgery": f"NS-{tag},E,{PHONE},Silver,active,2099-12-31,10,0,0,no,false,yes",
        "limit": f"LI-{tag},F,{PHONE},Silver,active,2099-12-31,8,8,0,true,false,1",
    }
    path = tmp_path_factory.mktemp("members") / "axa.csv"
    bad = f"BAD-{tag},G,08031234567,Gold,active,2099-12-31,10,0,0,true,true,true"
    path.write_text("\n".join([HEADER, *cases.values(), bad]) + "\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "rehabref.cli",
            "members",
            "import",
            "--hmo",
            "AXA_MANSARD",
            str(path),
        ],
        env={
            **isolated_environ(),
            "REHABREF_DATABASE_URL": database_url,
            "REHABREF_SECRET_KEY": TEST_SECRET_KEY,  # the server's key: names are sealed
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr  # one row rejected, the others imported
    assert "created 6, updated 0, rejected 1" in result.stdout
    assert "line 8: phone" in result.stderr
    assert "08031234567" not in result.stderr  # values are never echoed
    return {name: line.split(",", 1)[0] for name, line in cases.items()}


def _check(client, key, policy, phone=PHONE, **extra):
    body = {"policy_number": policy, "member_phone": phone, "hmo_code": "AXA_MANSARD", **extra}
    return client.post(PATH, json=body, headers=auth(key))


def test_live_eligible_member(client, partner, members):
    response = _check(client, partner["keys"]["sk_live"], members["ok"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "eligible"
    assert body["member"] == {
        "name": "Amina Bello",
        "plan_tier": "Gold",
        "policy_status": "active",
        "expiry_date": "2099-12-31",
    }
    assert body["coverage"] == {
        "physiotherapy_covered": True,
        "annual_session_limit": 10,
        "sessions_remaining": 8,
        "co_pay_amount_kobo": 250000,
        "pre_auth_required": True,
    }
    assert body["pre_auth_token"].startswith("pa_")


@pytest.mark.parametrize(
    ("case", "procedure", "reason"),
    [
        ("inactive", "PHYSIO_STD_SESSION", "policy_inactive"),
        ("expired", "PHYSIO_STD_SESSION", "policy_expired"),
        ("no_physio", "PHYSIO_STD_SESSION", "not_covered"),
        ("no_surgery", "PHYSIO_POST_SURGICAL", "not_covered"),
        ("limit", "PHYSIO_STD_SESSION", "annual_limit_exceeded"),
    ],
)
def test_live_ineligible_reasons_are_200(client, partner, members, case, procedure, reason):
    response = _check(client, partner["keys"]["sk_live"], members[case], procedure_code=procedure)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ineligible"
    assert body["reason"] == reason
    assert body["message"]
    rate = 2_500_000 if procedure == "PHYSIO_POST_SURGICAL" else 1_500_000
    assert body["fallback_option"] == {"can_self_pay": True, "negotiated_rate_kobo": rate}


def test_post_surgical_plan_gap_still_covers_standard_sessions(client, partner, members):
    response = _check(client, partner["keys"]["sk_live"], members["no_surgery"])
    assert response.json()["status"] == "eligible"


@pytest.mark.parametrize("mismatch", ["unknown policy", "other phone"])
def test_live_member_not_found(client, partner, members, mismatch):
    if mismatch == "unknown policy":
        response = _check(client, partner["keys"]["sk_live"], "NO-SUCH-POLICY")
    else:
        response = _check(client, partner["keys"]["sk_live"], members["ok"], phone="+2348039999999")
    assert response.status_code == 200
    assert response.json()["reason"] == "member_not_found"


def test_sandbox_never_reads_the_live_registry(client, partner, members):
    # The same policy number on a test key is a synthetic member, not Amina Bello.
    body = _check(client, partner["keys"]["sk_test"], members["limit"]).json()
    assert body["status"] == "eligible"
    assert body["member"]["name"] != "F"


def test_sandbox_ineligible_test_phone_is_400(client, partner):
    phone_4 = partner["sandbox"]["test_phones"][3]
    response = _check(client, partner["keys"]["sk_test"], "ANY-123", phone=phone_4)
    assert response.status_code == 400
    body = response.json()
    assert body["status"] == "ineligible"
    assert body["reason"] == "annual_limit_exceeded"
    assert body["fallback_option"]["can_self_pay"] is True


def test_sandbox_synthetic_coverage_is_deterministic(client, partner, make_partner):
    first = _check(client, partner["keys"]["sk_test"], "SYN-0001").json()
    again = _check(client, make_partner(name="Another")["keys"]["sk_test"], "SYN-0001").json()
    assert first["status"] == "eligible"
    assert first["member"] == again["member"]
    assert first["coverage"] == again["coverage"]
    other = _check(client, partner["keys"]["sk_test"], "SYN-0002").json()
    assert other["status"] == "eligible"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("hmo_code", "NHIS"),
        ("hmo_code", "axa_mansard"),
        ("procedure_code", "MASSAGE"),
        ("member_phone", "0803123"),
        ("policy_number", ""),
    ],
)
def test_invalid_requests_are_422(client, partner, field, value):
    body = {"policy_number": "P-1", "member_phone": PHONE, "hmo_code": "AXA_MANSARD"}
    body[field] = value
    response = client.post(PATH, json=body, headers=auth(partner["keys"]["sk_test"]))
    assert response.status_code == 422
    assert field in response.json()["error"]["fields"]


def test_pre_auth_token_links_the_referral_and_sessions_consume_the_allowance(
    client, partner, members, sql, database_url
):
    live = partner["keys"]["sk_live"]
    token = _check(client, live, members["ok"]).json()["pre_auth_token"]
    # Bound to partner and environment: the test key may not use a live token.
    refused = client.post(
        "/api/v1/partners/referrals",
        json=g_referral(billing_mode="hmo_direct_billing", pre_auth_token=token),
        headers=auth(partner["keys"]["sk_test"]),
    )
    assert refused.status_code == 422
    # Bound to the member checked: another patient may not be billed on this token.
    other_patient = g_referral(billing_mode="hmo_direct_billing", pre_auth_token=token)
    other = client.post("/api/v1/partners/referrals", json=other_patient, headers=auth(live))
    assert other.status_code == 422
    assert "another member" in other.json()["error"]["fields"]["pre_auth_token"]
    body = g_referral(billing_mode="hmo_direct_billing", pre_auth_token=token)
    body["patient"]["phone"] = PHONE
    created = client.post("/api/v1/partners/referrals", json=body, headers=auth(live))
    assert created.status_code == 201, created.text
    referral_id = created.json()["referral_id"]
    assert one(
        sql,
        "SELECT hmo_code, policy_number FROM referral_coverage WHERE referral_id = :r",
        r=referral_id,
    ) == ("AXA_MANSARD", members["ok"])

    async def consume(session_id):
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                return await consume_session(
                    conn,
                    referral_id=referral_id,
                    coverage=wiring.coverage_sources(TEST_RING),
                    session_id=session_id,
                )
        finally:
            await db.dispose()

    assert asyncio.run(consume("ses_test_1")) is True
    assert asyncio.run(consume("ses_test_1")) is False  # the same session is charged once
    body = _check(client, live, members["ok"]).json()
    assert body["coverage"]["sessions_remaining"] == 7


def test_members_names_and_phones_are_sealed_in_the_registry(members, sql):
    name, phone = one(
        sql, "SELECT name, phone FROM hmo_members WHERE policy_number = :p", p=members["ok"]
    )
    assert name.startswith("s1.k0.") and phone.startswith("s1.k0.")
    assert (opened_name(TEST_RING, name), opened_phone(TEST_RING, phone)) == ("Amina Bello", PHONE)
