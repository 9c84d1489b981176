"""The contact task queue: contact-route referrals, claim, complete, assistant link by message."""

from __future__ import annotations

from sqlalchemy import text

from tests.conftest import count
from tests.support.api import created, error_of
from tests.support.messages import opened_content
from tests.support.operators import OPS, create_operator, move, moved, op_headers


def _queue(client, token, status="open"):
    """Every task of ``status``, through all pages (the suite's database holds many)."""
    params = {"status": status, "limit": 100}
    tasks = []
    while True:
        response = client.get(f"{OPS}/contact-tasks", params=params, headers=op_headers(token))
        assert response.status_code == 200, response.text
        page = response.json()
        tasks += page["data"]
        if not page["has_more"]:
            return {"data": tasks}
        params["cursor"] = page["next_cursor"]


def _task_for(client, token, referral_id, status="open"):
    tasks = [t for t in _queue(client, token, status)["data"] if t["referral_id"] == referral_id]
    assert len(tasks) == 1, tasks
    return tasks[0]


def test_contact_route_task_is_claimed_reached_and_booked(client, partner, operator_token, sql):
    referral = created(client, partner["keys"]["sk_test"], route="contact")
    referral_id = referral["referral_id"]
    task = _task_for(client, operator_token, referral_id)
    assert task["purpose"] == "initial_contact" and task["channel"] == "messaging"
    assert task["patient"]["phone"] == "+2348031234567"
    assert task["referral_status"] == "contact_pending"

    claim = client.post(
        f"{OPS}/contact-tasks/{task['task_id']}/claim", headers=op_headers(operator_token)
    )
    assert claim.status_code == 200, claim.text
    assert claim.json()["status"] == "claimed"
    assert claim.json()["claimed_by"].startswith("operator:opr_")
    # Claiming again as the same coordinator is harmless; the task left the open queue.
    again = client.post(
        f"{OPS}/contact-tasks/{task['task_id']}/claim", headers=op_headers(operator_token)
    )
    assert again.status_code == 200
    assert all(t["task_id"] != task["task_id"] for t in _queue(client, operator_token)["data"])

    done = client.post(
        f"{OPS}/contact-tasks/{task['task_id']}/complete",
        json={"outcome": "reached", "note": "prefers mornings"},
        headers=op_headers(operator_token),
    )
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "done" and done.json()["outcome"] == "reached"
    assert done.json()["completed_at"].endswith("Z")
    error_of(
        client.post(
            f"{OPS}/contact-tasks/{task['task_id']}/complete",
            json={"outcome": "reached"},
            headers=op_headers(operator_token),
        ),
        409,
        "invalid_transition",
    )

    booked = moved(
        client,
        operator_token,
        referral_id,
        "booked",
        appointment={"scheduled_at": "2026-12-02T08:00:00Z", "care_mode": "face_to_face"},
    )
    assert booked["appointment"]["status"] == "booked"
    events = count(
        sql,
        "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'appointment.booked'",
        r=referral_id,
    )
    assert events == 1


def test_another_coordinator_cannot_take_a_claimed_task(
    client, partner, operator_token, database_url
):
    referral_id = created(client, partner["keys"]["sk_test"], route="contact")["referral_id"]
    task = _task_for(client, operator_token, referral_id)
    other = create_operator(database_url, "Bola Coordinator")
    assert (
        client.post(
            f"{OPS}/contact-tasks/{task['task_id']}/claim", headers=op_headers(operator_token)
        ).status_code
        == 200
    )
    error_of(
        client.post(f"{OPS}/contact-tasks/{task['task_id']}/claim", headers=op_headers(other)),
        409,
        "invalid_transition",
    )
    error_of(
        client.post(
            f"{OPS}/contact-tasks/{task['task_id']}/complete",
            json={"outcome": "unreachable"},
            headers=op_headers(other),
        ),
        409,
        "invalid_transition",
    )
    claimed = _task_for(client, operator_token, referral_id, status="claimed")
    assert claimed["claimed_by"].startswith("operator:")
    bad = client.post(
        f"{OPS}/contact-tasks/{task['task_id']}/complete",
        json={"outcome": "shrugged", "extra": 1},
        headers=op_headers(operator_token),
    )
    assert set(error_of(bad, 422, "validation_error")["fields"]) == {"outcome", "extra"}
    error_of(
        client.post(
            f"{OPS}/contact-tasks/task_00000000000000000000000000/claim",
            headers=op_headers(operator_token),
        ),
        404,
        "not_found",
    )
    assert (
        "status"
        in error_of(
            client.get(
                f"{OPS}/contact-tasks",
                params={"status": "lost"},
                headers=op_headers(operator_token),
            ),
            422,
            "validation_error",
        )["fields"]
    )


def test_assistant_link_outcome_sends_the_new_link_on_the_patients_channel(
    client, partner, operator_token, sql
):
    referral_id = created(client, partner["keys"]["sk_test"], route="contact")["referral_id"]
    task = _task_for(client, operator_token, referral_id)
    response = client.post(
        f"{OPS}/contact-tasks/{task['task_id']}/complete",
        json={"outcome": "assistant_link_sent"},
        headers=op_headers(operator_token),
    )
    assert response.status_code == 200, response.text
    with sql.connect() as conn:
        messages = (
            conn.execute(
                text("SELECT * FROM outbound_messages WHERE referral_id = :r"), {"r": referral_id}
            )
            .mappings()
            .all()
        )
    assert len(messages) == 1
    message = dict(messages[0])
    # A test key: recorded by the sandbox as it would have been sent, never sent.
    assert (message["purpose"], message["state"], message["provider"]) == (
        "intake.first_contact",
        "sent",
        "sandbox",
    )
    # The new assistant link is what it carries (sealed at rest).
    assert "/a/" in str(opened_content(message["content"]))
    assert (
        count(sql, "SELECT count(*) FROM assistant_sessions WHERE referral_id = :r", r=referral_id)
        == 1
    )
    # Still contact_pending until the patient opens the link.
    detail = client.get(f"{OPS}/referrals/{referral_id}", headers=op_headers(operator_token)).json()
    assert detail["status"] == "contact_pending" and detail["intake"]["opened_at"] is None


def test_cancelling_closes_the_open_task_and_moving_to_contact_pending_opens_one(
    client, partner, operator_token, sql
):
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]
    moved(client, operator_token, referral_id, "contact_pending", reason="patient asked for a call")
    task = _task_for(client, operator_token, referral_id)
    assert task["channel"] == "messaging"
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'contact.requested'",
            r=referral_id,
        )
        == 1
    )
    moved(client, operator_token, referral_id, "cancelled")
    done = _task_for(client, operator_token, referral_id, status="done")
    assert done["outcome"] == "cancelled"
    error_of(
        move(client, operator_token, referral_id, "contact_pending"), 409, "invalid_transition"
    )
