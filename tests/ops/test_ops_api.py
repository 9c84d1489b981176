"""The coordinator API over HTTP: auth, transitions, lookup and history."""

from __future__ import annotations

import pytest

from rehabref.events.sealing import event_data
from tests.conftest import auth, count
from tests.support.api import created, error_of
from tests.support.operators import OPS, move, moved, op_headers
from tests.support.partners import TEST_RING

BOOKING = {"scheduled_at": "2026-11-02T09:00:00Z", "care_mode": "remote"}

OPS_CALLS = [
    ("get", f"{OPS}/referrals", None),
    ("get", f"{OPS}/referrals/ref_00000000000000000000000000", None),
    ("post", f"{OPS}/referrals/ref_00000000000000000000000000/transitions", {"to": "cancelled"}),
    ("get", f"{OPS}/contact-tasks?status=open", None),
    ("post", f"{OPS}/contact-tasks/task_00000000000000000000000000/claim", None),
    (
        "post",
        f"{OPS}/contact-tasks/task_00000000000000000000000000/complete",
        {"outcome": "reached"},
    ),
]


@pytest.mark.parametrize(("method", "path", "body"), OPS_CALLS)
def test_partner_keys_and_missing_tokens_get_401(client, partner, method, path, body):
    for key in (partner["keys"]["sk_test"], partner["keys"]["sk_live"], partner["keys"]["pk_test"]):
        response = client.request(method, path, json=body, headers=auth(key))
        error_of(response, 401, "unauthenticated")
    error_of(client.request(method, path, json=body), 401, "unauthenticated")
    garbage = {"Authorization": "Bearer op_" + "x" * 43}
    error_of(client.request(method, path, json=body, headers=garbage), 401, "unauthenticated")


def test_partner_key_cannot_move_its_own_referral(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    response = move(client, partner["keys"]["sk_test"], referral["referral_id"], "cancelled")
    error_of(response, 401, "unauthenticated")
    status = count(
        sql,
        "SELECT count(*) FROM referrals WHERE id = :r AND status = 'received'",
        r=referral["referral_id"],
    )
    assert status == 1


def test_illegal_moves_are_409_and_change_nothing(client, partner, operator_token, sql):
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]
    for target in ("attended", "paid", "closed", "received"):
        error = error_of(
            move(client, operator_token, referral_id, target), 409, "invalid_transition"
        )
        assert "received" in error["message"]
    moved(client, operator_token, referral_id, "cancelled", reason="duplicate of another")
    for target in ("received", "booked", "cancelled", "closed"):
        error_of(move(client, operator_token, referral_id, target), 409, "invalid_transition")
    assert (
        count(
            sql, "SELECT count(*) FROM referral_transitions WHERE referral_id = :r", r=referral_id
        )
        == 2
    )  # received (create) + cancelled
    types = count(sql, "SELECT count(*) FROM events WHERE referral_id = :r", r=referral_id)
    assert types == 2  # referral.created + referral.closed


def test_required_sub_objects_and_field_errors(client, partner, operator_token):
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]
    moved(client, operator_token, referral_id, "assistant_started")
    error = error_of(move(client, operator_token, referral_id, "booked"), 422, "validation_error")
    assert "appointment" in error["fields"]
    bad = move(
        client,
        operator_token,
        referral_id,
        "booked",
        appointment={"scheduled_at": "tomorrow", "care_mode": "by_pigeon"},
    )
    error = error_of(bad, 422, "validation_error")
    assert {"appointment.scheduled_at", "appointment.care_mode"} <= set(error["fields"])
    unknown = move(client, operator_token, referral_id, "teleported")
    assert "to" in error_of(unknown, 422, "validation_error")["fields"]
    wrong = move(
        client,
        operator_token,
        referral_id,
        "cancelled",
        payment={"amount_minor": 5, "currency": "NGN"},
    )
    assert "payment" in error_of(wrong, 422, "validation_error")["fields"]
    error_of(
        client.post(
            f"{OPS}/referrals/{referral_id}/transitions",
            content=b"{",
            headers={**op_headers(operator_token), "Content-Type": "application/json"},
        ),
        400,
        "malformed_request",
    )
    error_of(
        move(client, operator_token, "ref_00000000000000000000000000", "cancelled"),
        404,
        "not_found",
    )


def test_appointment_care_mode_follows_the_referral(client, partner, operator_token):
    referral_id = created(client, partner["keys"]["sk_test"], care_mode="remote")["referral_id"]
    moved(client, operator_token, referral_id, "assistant_started")
    response = move(
        client,
        operator_token,
        referral_id,
        "booked",
        appointment={**BOOKING, "care_mode": "face_to_face"},
    )
    assert "appointment.care_mode" in error_of(response, 422, "validation_error")["fields"]
    booked = moved(client, operator_token, referral_id, "booked", appointment=BOOKING)
    assert booked["appointment"] == {
        "status": "booked",
        "scheduled_at": "2026-11-02T09:00:00.000Z",
        "care_mode": "remote",
    }


def test_reschedule_emits_appointment_booked_again(client, partner, operator_token, sql):
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]
    moved(client, operator_token, referral_id, "assistant_started")
    moved(client, operator_token, referral_id, "booked", appointment=BOOKING)
    later = {"scheduled_at": "2026-12-03T15:30:00Z", "care_mode": "face_to_face"}
    body = moved(
        client,
        operator_token,
        referral_id,
        "booked",
        appointment=later,
        reason="patient asked for Thursday",
    )
    assert body["appointment"]["scheduled_at"] == "2026-12-03T15:30:00.000Z"
    with sql.connect() as conn:
        from sqlalchemy import text

        rows = (
            conn.execute(
                text(
                    "SELECT data FROM events WHERE referral_id = :r AND "
                    "type = 'appointment.booked' ORDER BY occurred_at"
                ),
                {"r": referral_id},
            )
            .scalars()
            .all()
        )

    datas = [event_data(TEST_RING, r) for r in rows]
    assert [d["rescheduled"] for d in datas] == [False, True]
    assert datas[1]["appointment"]["care_mode"] == "face_to_face"


def test_detail_has_history_and_list_filters_and_search(client, make_partner, operator_token):
    partner = make_partner(name="Search Clinic")
    key = partner["keys"]["sk_test"]
    first = created(client, key)
    second = created(client, key)
    moved(client, operator_token, second["referral_id"], "assistant_started", reason="walk-in")
    detail = client.get(
        f"{OPS}/referrals/{second['referral_id']}", headers=op_headers(operator_token)
    )
    assert detail.status_code == 200, detail.text
    body = detail.json()
    assert body["patient"]["phone"] == "+2348031234567"
    assert body["allowed_transitions"] == ["booked", "cancelled"]
    assert [(t["from_status"], t["to_status"]) for t in body["transitions"]] == [
        (None, "received"),
        ("received", "assistant_started"),
    ]
    assert body["transitions"][1]["actor"].startswith("operator:opr_")
    assert body["transitions"][1]["reason"] == "walk-in"
    assert body["intake"]["opened_at"] is None and body["intake"]["availability"] == []

    found = client.get(
        f"{OPS}/referrals", params={"q": first["external_ref"]}, headers=op_headers(operator_token)
    ).json()
    assert [r["referral_id"] for r in found["data"]] == [first["referral_id"]]
    by_status = client.get(
        f"{OPS}/referrals",
        params={"status": "assistant_started", "partner_id": partner["partner_id"]},
        headers=op_headers(operator_token),
    ).json()
    assert [r["referral_id"] for r in by_status["data"]] == [second["referral_id"]]
    page1 = client.get(
        f"{OPS}/referrals",
        params={"limit": 1, "partner_id": partner["partner_id"]},
        headers=op_headers(operator_token),
    ).json()
    assert page1["has_more"] is True and page1["data"][0]["referral_id"] == second["referral_id"]
    page2 = client.get(
        f"{OPS}/referrals",
        params={"limit": 1, "cursor": page1["next_cursor"], "partner_id": partner["partner_id"]},
        headers=op_headers(operator_token),
    ).json()
    assert [r["referral_id"] for r in page2["data"]] == [first["referral_id"]]
    assert page2["has_more"] is False and page2["next_cursor"] is None
    bad = client.get(
        f"{OPS}/referrals",
        params={"status": "lost", "limit": 0, "cursor": "zz"},
        headers=op_headers(operator_token),
    )
    assert set(error_of(bad, 422, "validation_error")["fields"]) == {"status", "limit", "cursor"}
    error_of(
        client.get(
            f"{OPS}/referrals/ref_00000000000000000000000000", headers=op_headers(operator_token)
        ),
        404,
        "not_found",
    )
