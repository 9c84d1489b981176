"""The public hosted form /r/{public_code}: states, CSRF, validation, attribution, privacy."""

from __future__ import annotations

from rehabref.referrals.sealing import PHONE, open_text
from tests.conftest import auth, count
from tests.links.hosted import create_link, form_token, good_form, path_of, submit
from tests.support.partners import TEST_RING


def _referral(sql, link_id):
    with sql.connect() as conn:
        from sqlalchemy import text

        return (
            conn.execute(text("SELECT * FROM referrals WHERE link_id = :l"), {"l": link_id})
            .mappings()
            .all()
        )


def test_form_is_accessible_and_in_the_partners_name(client, make_partner):
    partner = make_partner(name="Lekki Spine Clinic")
    link = create_link(client, partner["keys"]["sk_live"])
    page = client.get(path_of(link))
    assert page.status_code == 200
    html = page.text
    assert "Lekki Spine Clinic" in html
    assert 'name="viewport"' in html
    for field in ("first_name", "phone", "email", "city", "reason", "consent"):
        assert f'<label for="{field}"' in html or f'for="{field}"' in html
    assert "<legend>" in html
    assert page.headers["cache-control"] == "no-store"
    assert "rr_form" in page.headers["set-cookie"]
    assert "httponly" in page.headers["set-cookie"].lower()
    assert "samesite=strict" in page.headers["set-cookie"].lower()
    assert "Test link" not in html  # live link: no sandbox banner


def test_valid_submission_creates_an_attributed_referral(client, partner, sql):
    key = partner["keys"]["sk_test"]
    link = create_link(client, key, campaign="knee-clinic-week")
    response = submit(client, link)
    assert response.status_code == 200, response.text[:500]
    assert "Thank you, Ngozi" in response.text
    assert "/a/" in response.text  # messaging -> assistant route: the patient may start now
    (row,) = _referral(sql, link["link_id"])
    # The form's promise ("I can withdraw this consent at any time"): the link to do it.
    assert f"/w/{row['id']}." in response.text and "Withdraw my consent" in response.text
    assert row["campaign"] == "knee-clinic-week"
    assert row["partner_id"] == partner["partner_id"]
    assert row["environment"] == "test"
    assert row["route"] == "assistant"
    assert row["patient_phone"] != "+2348031234567"  # sealed at rest
    assert open_text(TEST_RING, PHONE, row["patient_phone"]) == "+2348031234567"
    assert row["consent_accepted"] in (True, 1)
    assert row["consent_version"] == "hosted-link-2026-01"
    assert row["consent_source"] == "hosted_link"
    assert row["external_ref"].startswith(f"link:{link['link_id']}:")
    assert (
        count(sql, "SELECT count(*) FROM assistant_sessions WHERE referral_id = :r", r=row["id"])
        == 1
    )
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'referral.created'",
            r=row["id"],
        )
        == 1
    )
    # The partner sees it through the API like any other referral, with the campaign.
    record = client.get(f"/api/v1/partners/referrals/{row['id']}", headers=auth(key)).json()
    assert record["metadata"] == {"campaign": "knee-clinic-week", "link_id": link["link_id"]}


def test_sms_preference_queues_a_human_contact(client, partner, sql):
    link = create_link(client, partner["keys"]["sk_test"])
    response = submit(client, link, preferred_contact="sms")
    assert response.status_code == 200
    assert "/a/" not in response.text
    (row,) = _referral(sql, link["link_id"])
    assert row["status"] == "contact_pending" and row["route"] == "contact"
    assert count(sql, "SELECT count(*) FROM contact_tasks WHERE referral_id = :r", r=row["id"]) == 1
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'contact.requested'",
            r=row["id"],
        )
        == 1
    )


def test_invalid_fields_are_shown_next_to_the_fields_with_input_kept(client, partner, sql):
    link = create_link(client, partner["keys"]["sk_test"])
    response = submit(
        client, link, first_name="Tunde", phone="0803 123", city="", consent="", care_mode="bogus"
    )
    assert response.status_code == 422
    html = response.text
    assert 'role="alert"' in html and 'id="error-summary"' in html
    assert 'id="phone-error"' in html and 'aria-invalid="true"' in html
    assert (
        'id="city-error"' in html
        and 'id="consent-error"' in html
        and 'id="care_mode-error"' in html
    )
    assert 'value="Tunde"' in html and 'value="0803 123"' in html
    assert "Knee pain after a fall</textarea>" in html
    assert 'id="first_name-error"' not in html
    assert _referral(sql, link["link_id"]) == []


def test_channel_must_be_reachable(client, partner):
    link = create_link(client, partner["keys"]["sk_test"])
    response = submit(client, link, preferred_contact="email")
    assert response.status_code == 422
    assert "Add an e-mail address above" in response.text
    response = submit(client, link, phone="", email="")
    assert "Enter a mobile phone number or an e-mail address." in response.text
    ok = submit(client, link, phone="", email="ngozi@example.com", preferred_contact="email")
    assert ok.status_code == 200


def test_submission_without_the_form_token_is_refused(client, partner, sql):
    link = create_link(client, partner["keys"]["sk_test"])
    client.get(path_of(link))
    response = client.post(path_of(link), data=good_form())  # cookie but no token
    assert response.status_code == 403
    page = client.get(path_of(link))
    token = form_token(page)
    client.cookies.clear()
    response = client.post(path_of(link), data={**good_form(), "csrf_token": token})
    assert response.status_code == 403  # token without its cookie
    other = create_link(client, partner["keys"]["sk_test"])
    page = client.get(path_of(other))
    response = client.post(path_of(link), data={**good_form(), "csrf_token": form_token(page)})
    assert response.status_code == 403  # token of another link
    assert _referral(sql, link["link_id"]) == []


def test_a_double_submission_creates_one_referral(client, partner, sql):
    link = create_link(client, partner["keys"]["sk_test"])
    page = client.get(path_of(link))
    data = {**good_form(), "csrf_token": form_token(page)}
    first = client.post(path_of(link), data=data)
    second = client.post(path_of(link), data=data)
    assert first.status_code == second.status_code == 200
    assert "already have this referral" in second.text
    assert len(_referral(sql, link["link_id"])) == 1


def test_inactive_expired_and_unknown_links_accept_nothing(client, partner, sql):
    key = partner["keys"]["sk_test"]
    link = create_link(client, key)
    page = client.get(path_of(link))
    token = form_token(page)
    client.delete(f"/api/v1/partners/referral-links/{link['link_id']}", headers=auth(key))
    closed = client.get(path_of(link))
    assert closed.status_code == 410
    assert "no longer active" in closed.text and "<form" not in closed.text
    assert client.post(path_of(link), data={**good_form(), "csrf_token": token}).status_code == 410

    expired = create_link(client, key, expires_at="2099-01-01T00:00:00Z")
    token = form_token(client.get(path_of(expired)))
    with sql.begin() as conn:
        from sqlalchemy import text

        conn.execute(
            text("UPDATE referral_links SET expires_at = :t WHERE id = :i"),
            {"t": "2020-01-01 00:00:00+00:00", "i": expired["link_id"]},
        )
    assert client.get(path_of(expired)).status_code == 410
    assert (
        client.post(path_of(expired), data={**good_form(), "csrf_token": token}).status_code == 410
    )
    record = client.get(f"/api/v1/partners/referral-links/{expired['link_id']}", headers=auth(key))
    assert record.json()["active"] is False
    assert record.json()["clicks"] == 1  # views of a closed link are not counted

    for code in ("A" * 30, "short", "x" * 300, "%3Cscript%3E"):
        unknown = client.get(f"/r/{code}")
        assert unknown.status_code == 404
        assert "does not exist" in unknown.text and "<script>" not in unknown.text
        assert client.post(f"/r/{code}", data=good_form()).status_code == 404
    # The same page for a deactivated link whoever owns it: nothing about the partner leaks.
    assert partner["partner_id"] not in closed.text
    assert _referral(sql, link["link_id"]) == [] and _referral(sql, expired["link_id"]) == []


def test_nothing_personal_reaches_the_logs(client, partner, server):
    link = create_link(client, partner["keys"]["sk_test"])
    submit(client, link, first_name="Zainabu", phone="+2348035550199")
    logs = server.logs()
    assert link["public_code"] not in logs
    assert "Zainabu" not in logs and "2348035550199" not in logs
