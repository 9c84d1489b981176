"""Assessments through the ops API: each scale, its validation range, listing."""

from __future__ import annotations

import pytest

from tests.support.care import insert_referral


@pytest.fixture
def referral_id(partner, sql):
    return insert_referral(sql, partner_id=partner["partner_id"], diagnosis="Neck pain")


def post(client, op_headers, referral_id, body):
    return client.post(
        f"/api/v1/ops/referrals/{referral_id}/assessments", json=body, headers=op_headers
    )


@pytest.mark.parametrize(
    ("body", "score", "detail"),
    [
        (
            {
                "scale": "psfs",
                "tasks": [
                    {"activity": "Driving", "score": 4},
                    {"activity": "Reading", "score": 5},
                    {"activity": "Lifting", "score": 3},
                ],
            },
            4.0,
            {
                "tasks": [
                    {"activity": "Driving", "score": 4.0},
                    {"activity": "Reading", "score": 5.0},
                    {"activity": "Lifting", "score": 3.0},
                ]
            },
        ),
        ({"scale": "ndi", "raw_score": 17}, 34.0, {"raw_score": 17, "unit": "percent"}),
        ({"scale": "odi", "raw_score": 50}, 100.0, {"raw_score": 50, "unit": "percent"}),
        ({"scale": "nprs", "score": 6}, 6.0, {}),
        ({"scale": "vas", "score": 6.5}, 6.5, {}),
        (
            {"scale": "rom", "joint": "knee", "movement": "flexion", "side": "left", "degrees": 95},
            95.0,
            {"joint": "knee", "movement": "flexion", "side": "left"},
        ),
    ],
)
def test_each_scale_is_recorded(client, op_headers, referral_id, body, score, detail):
    response = post(
        client, op_headers, referral_id, {**body, "recorded_at": "2026-11-20T10:00:00Z"}
    )
    assert response.status_code == 201, response.text
    record = response.json()
    assert record["scale"] == body["scale"]
    assert record["score"] == score
    assert record["detail"] == detail
    assert record["recorded_at"] == "2026-11-20T10:00:00.000Z"
    listed = client.get(f"/api/v1/ops/referrals/{referral_id}/assessments", headers=op_headers)
    assert [item["assessment_id"] for item in listed.json()["data"]] == [record["assessment_id"]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"scale": "psfs", "tasks": [{"activity": "A", "score": 11}] * 3}, "tasks.0.score"),
        ({"scale": "psfs", "tasks": [{"activity": "A", "score": 5}] * 2}, "tasks"),
        ({"scale": "ndi", "raw_score": 51}, "raw_score"),
        ({"scale": "odi", "raw_score": -1}, "raw_score"),
        ({"scale": "nprs", "score": 4.5}, "score"),
        ({"scale": "nprs", "score": 11}, "score"),
        ({"scale": "vas", "score": -0.5}, "score"),
        ({"scale": "rom", "joint": "knee", "movement": "flexion", "degrees": 400}, "degrees"),
        (
            {"scale": "rom", "joint": "knee", "movement": "flexion", "degrees": 90, "side": "up"},
            "side",
        ),
        ({"scale": "womac", "score": 3}, "scale"),
        ({"score": 3}, "scale"),
        ({"scale": "nprs", "score": 3, "extra": 1}, "extra"),
        ({"scale": "nprs", "score": 3, "recorded_at": "2099-01-01T00:00:00Z"}, "recorded_at"),
    ],
)
def test_out_of_range_values_are_422(client, op_headers, referral_id, body, field):
    response = post(client, op_headers, referral_id, body)
    assert response.status_code == 422, response.text
    assert field in response.json()["error"]["fields"]


def test_unknown_referral_and_foreign_session(client, op_headers, referral_id):
    assert post(client, op_headers, "ref_missing", {"scale": "nprs", "score": 3}).status_code == 404
    response = post(
        client, op_headers, referral_id, {"scale": "nprs", "score": 3, "session_id": "ses_other"}
    )
    assert response.status_code == 422
    assert "session_id" in response.json()["error"]["fields"]
