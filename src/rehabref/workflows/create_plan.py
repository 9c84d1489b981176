"""A referral create as data: every row it will write, decided before anything is written.

The V1 and Shape G workflows (``referral_created``, ``referral_created_g``) plan what differs
with pure functions, time and the referral id made once at their top, and hand it to
``CreatePlan.for_referral``, which makes what they share (outbox rows, the hooks' jobs, the
audit record). The create store (``create_store``) writes the plan and the idempotency
record in one go. Only the deliveries wait for the store: they depend on the partner's active
webhook endpoints, which the store reads, and ``events.outbox.fan_out`` (the one fan-out,
shared with every other emitter) turns the plan's events and those endpoints into delivery
rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from rehabref.audit.chain import Entry
from rehabref.audit.trail import entry
from rehabref.events.outbox import Endpoint, NewEvent, OutboxEvent, fan_out, outbox_rows
from rehabref.ids import new_id
from rehabref.jobs import JobRow
from rehabref.principal import Principal

Row = dict[str, Any]


class ReferralCreated(Protocol):
    """What a new referral adds to its own create: scheduled jobs, written with it. It
    reads and writes nothing itself, so every create, whoever wired what, is one plan."""

    def __call__(
        self,
        *,
        referral_id: str,
        environment: str,
        phone: str | None,
        now: datetime,
    ) -> Sequence[JobRow]: ...


@dataclass(frozen=True)
class CreatedHooks:
    """The hooks of each environment, wired at start-up."""

    test: Sequence[ReferralCreated] = ()
    live: Sequence[ReferralCreated] = ()

    def of(self, environment: str) -> Sequence[ReferralCreated]:
        if environment == "test":
            return self.test
        if environment == "live":
            return self.live
        raise ValueError(f"no environment {environment!r}")


@dataclass(frozen=True)
class Intake:
    """How the patient's intake starts: an assistant session and the first message with
    the conversation it opens (``workflows/first_contact.py``), or a coordinator's task."""

    assistant_sessions: Sequence[Row] = ()
    contact_tasks: Sequence[Row] = ()
    messages: Sequence[Row] = ()
    conversations: Sequence[Row] = ()


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

    @classmethod
    def for_referral(
        cls,
        principal: Principal,
        *,
        referral: Row,
        transitions: Sequence[Row],
        intake: Intake,
        coverage: Sequence[Row] = (),
        events: Sequence[NewEvent],
        on_created: Sequence[ReferralCreated],
        phone: str | None,
        response: bytes,
        now: datetime,
    ) -> CreatePlan:
        """A create of either shape: what both share is made here, the same way: the
        outbox rows of its events, the jobs of the wired hooks (``phone``: the patient's, as
        given) and the audit record."""
        referral_id = str(referral["id"])
        return cls(
            partner_id=principal.partner_id,
            environment=principal.environment,
            referral=referral,
            transitions=transitions,
            assistant_sessions=intake.assistant_sessions,
            contact_tasks=intake.contact_tasks,
            messages=intake.messages,
            conversations=intake.conversations,
            coverage=coverage,
            events=outbox_rows(
                partner_id=principal.partner_id,
                environment=principal.environment,
                contract=principal.contract,
                events=events,
                now=now,
            ),
            jobs=[
                job
                for hook in on_created
                for job in hook(
                    referral_id=referral_id,
                    environment=principal.environment,
                    phone=phone,
                    now=now,
                )
            ],
            response=response,
            audit=entry(principal.actor, "referral.created", referral_id=referral_id, now=now),
        )


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
