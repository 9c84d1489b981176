"""Shape G request bodies that the tests start from and vary."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine


def g_referral(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "partner_reference": f"CASE-{uuid.uuid4().hex[:12]}",
        "patient": {
            "first_name": "Chidi",
            "last_name": "Okafor",
            "phone": "+2348031234567",
            "email": "chidi@example.com",
            "city": "Lagos",
            "area": "Surulere",
        },
        "clinical_notes": {
            "diagnosis": "Post-operative knee stiffness after ACL repair",
            "recommended_sessions": 6,
            "priority": "urgent",
            "referring_doctor": "Dr. A. Bello",
        },
        "billing_mode": "patient_self_pay",
    }
    body.update(overrides)
    return copy.deepcopy(body)


def minimal_g_referral() -> dict[str, Any]:
    return {
        "patient": {
            "first_name": "Ada",
            "last_name": "Eze",
            "phone": "+2348031234568",
            "city": "Abuja",
        },
        "clinical_notes": {"diagnosis": "Chronic lower back pain"},
        "billing_mode": "corporate_sponsored",
    }


def one(engine: Engine, query: str, **params: Any) -> tuple[Any, ...]:
    with engine.connect() as conn:
        return tuple(conn.execute(text(query), params).one())
