"""GET /api/v1/partners/reports/{referral_id} and the signed discharge summary PDF."""

from __future__ import annotations

import io
import time

import httpx
import pytest
from pypdf import PdfReader
from sqlalchemy import text

from rehabref.care.report_links import pdf_token
from rehabref.instance_secret import SecretBox
from tests.conftest import auth
from tests.support.care import insert_referral
from tests.support.partners import TEST_SECRET_KEY


def _session(client, op_headers, referral_id, physio_id, day, pain):
    response = client.post(
        f"/api/v1/ops/referrals/{referral_id}/sessions",
        json={
            "scheduled_at": f"2026-11-{day:02d}T09:00:00Z",
            "modality": "home_visit",
            "physio_id": physio_id,
        },
        headers=op_headers,
    )
    session_id = response.json()["session_id"]
    client.post(
        f"/api/v1/ops/sessions/{session_id}/start",
        json={
            "check_in_at": f"2026-11-{day:02d}T09:00:00Z",
            "check_in_lat": 6.6,
            "check_in_lng": 3.35,
        },
        headers=op_headers,
    ).raise_for_status()
    client.post(
        f"/api/v1/ops/sessions/{session_id}/complete",
        json={
            "pain_before": pain[0],
            "pain_after": pain[1],
            "notes_summary": "Progressing",
            "check_out_at": f"2026-11-{day:02d}T09:45:00Z",
            "check_out_lat": 6.6,
            "check_out_lng": 3.35,
        },
        headers=op_headers,
    ).raise_for_status()


def _assess(client, op_headers, referral_id, body):
    response = client.post(
        f"/api/v1/ops/referrals/{referral_id}/assessments", json=body, headers=op_headers
    )
    assert response.status_code == 201, response.text
    return response.json()


@pytest.fixture
def treated(client, make_partner, op_headers, physio, sql):
    partner = make_partner(name="Lagoon Hospital", contract="g")
    referral_id = insert_referral(
        sql,
        environment="live",
        partner_id=partner["partner_id"],
        first_name="Ọlábísí",
        last_name="Ògúnlèye",
        area="Ikeja",
        diagnosis="Lumbar disc herniation L4-L5",
        referring_doctor="Dr. Funmi Adeyemi, Lagoon Hospital",
        recommended_sessions=6,
    )
    physio_id = physio["physio_id"]
    _assess(
        client,
        op_headers,
        referral_id,
        {
            "scale": "psfs",
            "recorded_at": "2026-11-02T08:50:00Z",
            "tasks": [
                {"activity": "Sitting 30 min", "score": 3},
                {"activity": "Bending", "score": 2},
                {"activity": "Walking 1 km", "score": 4},
            ],
        },
    )
    _session(client, op_headers, referral_id, physio_id, 2, (7, 5))
    _session(client, op_headers, referral_id, physio_id, 9, (5, 4))
    _session(client, op_headers, referral_id, physio_id, 16, (4, 2))
    _assess(
        client,
        op_headers,
        referral_id,
        {
            "scale": "psfs",
            "recorded_at": "2026-11-16T10:00:00Z",
            "tasks": [
                {"activity": "Sitting 30 min", "score": 7},
                {"activity": "Bending", "score": 6},
                {"activity": "Walking 1 km", "score": 8},
            ],
        },
    )
    _assess(
        client,
        op_headers,
        referral_id,
        {
            "scale": "rom",
            "recorded_at": "2026-11-16T10:05:00Z",
            "joint": "lumbar spine",
            "movement": "flexion",
            "degrees": 55,
        },
    )
    return {"partner": partner, "referral_id": referral_id}


def test_report_metrics_from_sessions_and_assessments(client, treated):
    key = treated["partner"]["keys"]["sk_live"]
    response = client.get(f"/api/v1/partners/reports/{treated['referral_id']}", headers=auth(key))
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["referral_id"] == treated["referral_id"]
    assert report["patient_name"] == "Ọlábísí Ògúnlèye"
    assert report["referring_doctor"] == "Dr. Funmi Adeyemi, Lagoon Hospital"
    assert report["diagnosis"] == "Lumbar disc herniation L4-L5"
    assert report["treatment_period"] == {
        "start_date": "2026-11-02",
        "discharge_date": "2026-11-16",
    }
    assert report["metrics"] == {
        "initial_pain_score": 7.0,
        "final_pain_score": 2.0,
        "pain_reduction_percentage": 71.4,
        "functional_score_initial": 3.0,
        "functional_score_final": 7.0,
        "scale_used": "PSFS",
    }
    assert report["sessions_summary"] == {"prescribed": 6, "completed": 3, "adherence_rate": "50%"}
    assert "3 of 6 prescribed sessions" in report["clinical_conclusion"]
    assert "71.4% reduction" in report["clinical_conclusion"]
    assert "/reports/pdf/" in report["discharge_summary_pdf_url"]


def test_discharge_pdf_downloads_without_a_key_and_holds_the_summary(client, treated):
    key = treated["partner"]["keys"]["sk_live"]
    report = client.get(f"/api/v1/partners/reports/{treated['referral_id']}", headers=auth(key))
    url = report.json()["discharge_summary_pdf_url"]
    assert url.startswith(str(client.base_url))
    response = httpx.get(url, timeout=30)  # no Authorization header
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["cache-control"] == "no-store"
    assert response.content.startswith(b"%PDF")
    reader = PdfReader(io.BytesIO(response.content))
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert "Ọlábísí Ògúnlèye" in text
    assert "Lumbar disc herniation L4-L5" in text
    assert "Dr. Funmi Adeyemi" in text
    assert "2026-11-02 to 2026-11-16" in text
    assert "Pain score chart" in text and "Conclusion" in text
    images = [image for page in reader.pages for image in page.images]
    assert images, "the pain chart is embedded as an image"


def test_report_reads_and_pdf_downloads_are_audited_without_the_token(client, treated, sql):
    key = treated["partner"]["keys"]["sk_live"]
    report = client.get(f"/api/v1/partners/reports/{treated['referral_id']}", headers=auth(key))
    url = report.json()["discharge_summary_pdf_url"]
    download = httpx.get(url, timeout=30)
    assert download.status_code == 200
    token = url.rsplit("/", 1)[1]
    with sql.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT actor_kind, action, referral_id, subject FROM audit_events "
                "WHERE request_id IN (:read, :download) ORDER BY at, id"
            ),
            {"read": report.headers["x-request-id"], "download": download.headers["x-request-id"]},
        ).all()
    assert [tuple(row) for row in rows] == [
        ("partner", "report.read", treated["referral_id"], None),
        ("report_link", "report.downloaded", treated["referral_id"], None),
    ]
    assert all(token not in str(value) for row in rows for value in row)


def test_forged_altered_and_expired_pdf_links_are_refused(client, treated):
    referral_id = treated["referral_id"]
    box = SecretBox(TEST_SECRET_KEY)
    expired = pdf_token(box, referral_id=referral_id, now=time.time() - 7200)
    forged = pdf_token(SecretBox("another-secret"), referral_id=referral_id)
    good = pdf_token(box, referral_id=referral_id)
    body, expiry, signature = good.split(".")
    extended = f"{body}.{int(expiry) + 86400}.{signature}"
    for token in (expired, forged, extended, "garbage", f"{body}.{expiry}"):
        response = client.get(f"/reports/pdf/{token}")
        assert response.status_code == 403, token
        assert response.json()["error"]["code"] == "forbidden"
    assert client.get(f"/reports/pdf/{good}").status_code == 200


def test_v1_partners_get_403_and_other_partners_404(client, make_partner, treated, sql):
    v1 = make_partner(name="Employer", contract="v1")
    v1_referral = insert_referral(
        sql, environment="live", partner_id=v1["partner_id"], shape="v1", reason="Back"
    )
    response = client.get(
        f"/api/v1/partners/reports/{v1_referral}", headers=auth(v1["keys"]["sk_live"])
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    other_g = make_partner(name="Other clinic", contract="g")
    response = client.get(
        f"/api/v1/partners/reports/{treated['referral_id']}",
        headers=auth(other_g["keys"]["sk_live"]),
    )
    assert response.status_code == 404
    other_environment = client.get(
        f"/api/v1/partners/reports/{treated['referral_id']}",
        headers=auth(treated["partner"]["keys"]["sk_test"]),
    )
    assert other_environment.status_code == 404


def test_report_without_treatment_yet(client, make_partner, sql):
    partner = make_partner(name="New clinic", contract="g")
    referral_id = insert_referral(
        sql, partner_id=partner["partner_id"], diagnosis="Frozen shoulder"
    )
    report = client.get(
        f"/api/v1/partners/reports/{referral_id}", headers=auth(partner["keys"]["sk_test"])
    ).json()
    assert report["metrics"]["initial_pain_score"] is None
    assert report["metrics"]["pain_reduction_percentage"] is None
    assert report["sessions_summary"] == {"prescribed": 4, "completed": 0, "adherence_rate": "0%"}
    assert report["treatment_period"] == {"start_date": None, "discharge_date": None}
    assert report["clinical_conclusion"].startswith("No treatment sessions")
    pdf = httpx.get(report["discharge_summary_pdf_url"], timeout=30)
    assert pdf.status_code == 200
    assert "Frozen shoulder" in PdfReader(io.BytesIO(pdf.content)).pages[0].extract_text()
