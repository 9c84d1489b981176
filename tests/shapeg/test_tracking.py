"""The public tracking page: first name and stage only; unknown codes get a safe 404."""

from __future__ import annotations

from sqlalchemy import update

from rehabref.tables import metadata
from tests.conftest import auth
from tests.shapeg.bodies import g_referral

PATH = "/api/v1/partners/referrals"


def test_tracking_page_shows_first_name_and_stage_only(client, partner, sql):
    created = client.post(PATH, json=g_referral(), headers=auth(partner["keys"]["sk_test"])).json()
    base = str(client.base_url).rstrip("/")
    page = client.get(created["tracking_url"].removeprefix(base))
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]
    assert "Chidi" in page.text
    assert 'aria-current="step"' in page.text
    assert "Referral received" in page.text
    for private in ("Okafor", "+234", "8031234567", "knee", "ACL", "Bello", "Surulere", "chidi@"):
        assert private not in page.text
    assert page.headers["cache-control"] == "no-store"
    assert page.headers["x-robots-tag"] == "noindex"
    with sql.begin() as conn:
        assistant = metadata.tables["assistant_sessions"]
        conn.execute(
            update(assistant)
            .where(assistant.c.referral_id == created["referral_id"])
            .values(completed_at=assistant.c.created_at)
        )
    page = client.get(f"/track/{created['tracking_code'].lower()}")
    assert "finding your physiotherapist" in page.text


def test_unknown_and_malformed_codes_get_the_same_safe_404(client):
    for code in ("RR222222222222", "nope", "ref_01jd3k7v5n8q2w4e6r8t0y2u4i", "%3Cscript%3E"):
        page = client.get(f"/track/{code}")
        assert page.status_code == 404
        assert "Tracking code not recognised" in page.text
        assert "<script>" not in page.text
