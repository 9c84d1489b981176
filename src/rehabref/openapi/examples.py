"""Example requests and responses of the walkthrough's operations, with the README's values.

Operations not listed here show an example built from their schemas' own field examples
(``schema_text.Examples``). Every example is validated against its schema by the tests, so a
value here that the API would refuse fails the suite.
"""

from __future__ import annotations

from typing import Any

REFERRAL_ID = "ref_01m809eknq9reqrh1q9yd8kast"
CREATED_AT = "2026-11-22T00:10:45.815Z"
ENDPOINT_URL = "http://127.0.0.1:4000/hooks/rehabref"

CREATE_REFERRAL = {
    "external_ref": "CLINIC-2026-0001",
    "patient": {"first_name": "Amaka", "phone": "+2348031234567", "city": "Lagos"},
    "reason": "Lower back pain after lifting; physiotherapy recommended",
    "care_mode": "either",
    "preferred_contact": "messaging",
    "route": "assistant",
    "consent": {
        "accepted": True,
        "accepted_at": "2026-01-15T09:30:00Z",
        "version": "2026-01",
        "source": "clinic_form",
    },
    "metadata": {"campaign": "back-care-week"},
}

REFERRAL_CREATED = {
    "referral_id": REFERRAL_ID,
    "external_ref": "CLINIC-2026-0001",
    "status": "received",
    "care_mode": "either",
    "next_action": "start_assistant",
    "assistant_session_url": "http://127.0.0.1:8000/a/ast_01m809ekntae9ev8bewq7frrgs.1795392645.f5g8",
    "created_at": CREATED_AT,
}

REFERRAL_RECORD = {
    "referral_id": REFERRAL_ID,
    "external_ref": "CLINIC-2026-0001",
    "status": "received",
    "care_mode": "either",
    "route": "assistant",
    "preferred_contact": "messaging",
    "next_action": "start_assistant",
    "patient": {"first_name": "Amaka", "city": "Lagos"},
    "consent": {
        "accepted": True,
        "accepted_at": "2026-01-15T09:30:00.000Z",
        "version": "2026-01",
        "source": "clinic_form",
    },
    "metadata": {"campaign": "back-care-week"},
    "appointment": None,
    "payment": None,
    "created_at": CREATED_AT,
    "updated_at": CREATED_AT,
}

ENDPOINT_RECORD = {
    "endpoint_id": "whe_01m809f0a3k7w2n5q8r1t4v6xz",
    "url": ENDPOINT_URL,
    "environment": "test",
    "enabled_events": None,
    "active": True,
    "status": "enabled",
    "disabled_reason": None,
    "disabled_at": None,
    "health": {
        "circuit": "closed",
        "consecutive_failures": 0,
        "failing_since": None,
        "circuit_open_until": None,
    },
    "created_at": CREATED_AT,
}

# operation id -> {"request": body, "response": body of the success answer}
OPERATION_EXAMPLES: dict[str, dict[str, Any]] = {
    "createReferral": {"request": CREATE_REFERRAL, "response": REFERRAL_CREATED},
    "getReferral": {"response": REFERRAL_RECORD},
    "listReferrals": {
        "response": {"data": [REFERRAL_RECORD], "has_more": False, "next_cursor": None}
    },
    "createWebhookEndpoint": {"request": {"url": ENDPOINT_URL}, "response": ENDPOINT_RECORD},
    "listWebhookEndpoints": {
        "response": {"data": [ENDPOINT_RECORD], "has_more": False, "next_cursor": None}
    },
    "enableWebhookEndpoint": {"response": ENDPOINT_RECORD},
    "opsRecordAssessment": {
        "request": {
            "scale": "psfs",
            "tasks": [
                {"activity": "Climbing stairs", "score": 4},
                {"activity": "Lifting a child", "score": 3},
                {"activity": "Sitting for an hour", "score": 6},
            ],
        }
    },
    "triggerSandboxWebhook": {
        "request": {"event": "referral.created", "target_url": ENDPOINT_URL},
    },
}

# A field error for the 422 example: the README's step 6.
VALIDATION_FIELDS = {
    "patient.phone": "Use E.164 format, e.g. +2348031234567.",
    "care_mode": "Input should be 'remote', 'face_to_face' or 'either'",
}
