"""Realistic sample ``data`` for every event type (sandbox trigger, docs).

The samples follow the payload fields documented in docs/webhooks.md. Shape V1 partners get
``external_ref`` and ``care_mode``; Shape G partners get ``partner_reference`` and
``tracking_code``. The data boundary is applied by the outbox, not here.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from rehabref.clock import iso, utcnow
from rehabref.ids import new_id


def sample_data(
    event_type: str, *, contract: str, show_payments: bool = True
) -> tuple[str | None, dict[str, Any]]:
    """(referral_id, data) for a test event of ``event_type``; no referral for
    ``commission.settled``, which is about a month's statement.

    ``payment`` is null when the partner's agreement hides paid amounts, as in real events.
    """
    now = utcnow()
    referral_id = new_id("ref")
    base: dict[str, Any] = {"referral_id": referral_id}
    if contract == "g":
        base["partner_reference"] = "CASE-2041"
        base["tracking_code"] = "TRK7Q2M9X"
    else:
        base["external_ref"] = "sandbox-ext-2041"
        base["care_mode"] = "face_to_face"
    appointment = {
        "status": "booked",
        "scheduled_at": iso(now + timedelta(days=2)),
        "care_mode": base.get("care_mode", "face_to_face"),
    }
    payment = {
        "currency": "NGN",
        "amount_minor": 2000000,
        "partner_commission_minor": 200000,
        "commission_status": "pending_settlement",
    }
    extras: dict[str, dict[str, Any]] = {
        "referral.created": {"status": "received", "route": "assistant"},
        "contact.requested": {
            "status": "contact_pending",
            "route": "contact",
            "contact_task_id": new_id("task"),
            "channel": "messaging",
        },
        "assistant.started": {"status": "assistant_started"},
        "appointment.booked": {
            "status": "booked",
            "appointment": appointment,
            "rescheduled": False,
        },
        "appointment.attended": {
            "status": "attended",
            "appointment": {**appointment, "status": "attended"},
        },
        "payment.completed": {"status": "paid", "payment": payment},
        "payment.refunded": {},
        "commission.settled": {},
        "referral.closed": {"status": "closed", "previous_status": "paid"},
        "patient.intake_completed": {
            "status": "assistant_started",
            "intake_status": "completed",
            "completed_at": iso(now),
        },
        "provider.matched": {
            "status": "assistant_started",
            "matched_at": iso(now),
            "physiotherapist": {
                "name": "Adaeze Okafor",
                "license_number": "MRTB/PT/2019/0421",
                "specialization": "musculoskeletal",
                "rating": 4.8,
            },
        },
        "session.completed": {
            "status": "booked",
            "session_id": new_id("ses"),
            "session_number": 2,
            "session_type": "follow_up",
            "modality": "home_visit",
            "provider_name": "Adaeze Okafor",
            "scheduled_at": iso(now - timedelta(minutes=50)),
            "check_in_at": iso(now - timedelta(minutes=47)),
            "check_out_at": iso(now),
            "completed_at": iso(now),
            "duration_seconds": 2820,
            "duration_minutes": 47.0,
            "gps_check_in": {
                "verified": True,
                "method": "scheduled_location",
                "distance_km": 0.12,
                "radius_km": 0.5,
            },
            "invoice_reference": "INV-2026-11-0042",
            # Removed by the outbox for v1-contract partners (data boundary).
            "clinical_summary": {
                "pain_score_before": 7,
                "pain_score_after": 4,
                "pain_reduction": {"points": 3, "percentage": 42.9},
                "notes_summary": "Improved lumbar flexion; continue home exercise programme.",
            },
        },
        "sandbox.scenario_failed": {
            "status": "assistant_started",
            "scenario": 3,
            "step": "session",
            "attempts": 6,
            "reason": "no physiotherapist assigned yet",
        },
    }
    if contract == "g":
        extras["provider.matched"]["physiotherapist"]["phone"] = "+2348011112222"
        extras["referral.created"] = {
            "status": "received",
            "billing_mode": "patient_self_pay",
            "priority": "standard",
            "intake_status": "pending_messaging_response",
        }
    data = {**base, **extras[event_type]}
    if event_type == "payment.completed":
        # Exactly the spec's field set (6.2 + 2.9), whatever the partner's shape.
        data = {
            "referral_id": referral_id,
            "external_ref": base.get("external_ref", base.get("partner_reference")),
            "status": "paid",
            "care_mode": base.get("care_mode", "face_to_face"),
            "payment": payment if show_payments else None,
        }
    elif event_type == "payment.refunded":
        data = {
            "referral_id": referral_id,
            "external_ref": base.get("external_ref", base.get("partner_reference")),
            "status": "paid",
            "care_mode": base.get("care_mode", "face_to_face"),
            "refund": {"currency": "NGN", "amount_minor": 2000000, "refunded_total_minor": 2000000},
            "payment": {**payment, "commission_status": "reversed"} if show_payments else None,
        }
    elif event_type == "commission.settled":
        # About a month's statement, not one referral: totals only, no patient data.
        data = {
            "statement_id": new_id("cst"),
            "period": "2026-10",
            "currency": "NGN",
            "total_minor": 400000,
            "line_count": 2,
            "settled_at": iso(now),
        }
        return None, data
    return referral_id, data
