"""A referral create as data: every row it will write, decided before anything is written.

The V1 and Shape G workflows (``referral_created``, ``referral_created_g``) build a
``CreatePlan`` with pure functions, time and the referral id made once at their top; the
create store (``create_store``) writes the plan and the idempotency record in one go. Only the
deliveries wait for the store: they depend on the partner's active webhook endpoints, which
the store reads, and ``events.outbox.fan_out`` (the one fan-out, shared with every other
emitter) turns the plan's events and those endpoints into delivery rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rehabref.audit.chain import Entry
from rehabref.events.outbox import Endpoint, OutboxEvent, fan_out
from rehabref.ids import new_id
from rehabref.jobs import JobRow

Row = dict[str, Any]


@dataclass(frozen=True)
class CreatePlan:
    partner_id: str
    environment: str
    referral: Row
    transitions: Sequence[Row]
    # The intake: an assistant session, the first message to the patient and the
    # conversation it starts (``workflows/first_contact.py``), or a coordinator's task.
    assistant_sessions: Sequence[Row]
    contact_tasks: Sequence[Row]
    messages: Sequence[Row]
    conversations: Sequence[Row]
    # Shape G: the pre-authorised HMO coverage the referral is linked to.
    coverage: Sequence[Row]
    events: Sequence[OutboxEvent]
    # Scheduled jobs from the wired referral-created hooks (the sandbox's scenarios).
    jobs: Sequence[JobRow]
    # The success answer's JSON body: sent, and stored for replay, as these bytes.
    response: bytes
    # Who created it, for the audit trail: written with the referral, all or nothing.
    audit: Entry

    def deliveries(self, endpoints: Sequence[Endpoint]) -> list[Row]:
        return fan_out(self.events, endpoints)


def transition(
    referral_id: str,
    from_status: str | None,
    to_status: str,
    actor: str,
    reason: str,
    now: datetime,
) -> Row:
    return {
        "id": new_id("trn"),
        "referral_id": referral_id,
        "from_status": from_status,
        "to_status": to_status,
        "actor": actor,
        "reason": reason,
        "created_at": now,
    }
