"""The create store's PostgreSQL adapter: a whole referral create as one statement.

``CREATE_REFERRAL`` below is the statement, one data-modifying CTE per table, run on a raw
pooled asyncpg connection in autocommit (``Database.autocommit``). One statement is atomic on
its own, so a create is one round trip: no BEGIN, no COMMIT, no lock or lookup first. Each
table's rows travel as one JSON parameter (``json_populate_recordset`` turns it into rows of
that table), so the text is the same for V1 and Shape G and for any number of events,
deliveries or jobs.

The deliveries are planned with the partner's active webhook endpoints as last read by this
process; the statement compares their ids with the table in its own snapshot (``planned`` is
one row when they match and none when not: then every INSERT writes nothing and the
statement answers 0), and the store reads the endpoints again and retries. A create's
deliveries therefore go to exactly the endpoints active when it is written, without a read
before every create.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
import msgspec
from sqlalchemy.exc import IntegrityError

from rehabref.audit.trail import append_ctes, columns
from rehabref.crypto import KeyRing
from rehabref.db import Database
from rehabref.errors import ApiError
from rehabref.events.outbox import Endpoint, active_endpoints
from rehabref.events.sealing import sealed_event_row
from rehabref.fastsql import RawConnection
from rehabref.idempotency.service import KeyClaim
from rehabref.referrals.coordinator_notes import stored_transitions
from rehabref.referrals.sealing import stored_referral
from rehabref.workflows.create_plan import CreatePlan

# $1 the referral; $2-$10 arrays of rows; $11 the idempotency record (0 or 1; its body in
# base64); $12-$14 the partner, environment and sorted ids of the endpoints planned with;
# $15-$23 the audit record (``audit.trail.columns``), chained only when the plan is written.
# ``planned`` is the plan as one row, or no row when the endpoints changed since they were
# read: then every INSERT below writes nothing, and the statement answers 0.
_PLAN_CTES = """
WITH planned AS (
    SELECT
        $1::json AS referral, $2::json AS transitions, $3::json AS assistant_sessions,
        $4::json AS contact_tasks, $5::json AS messages, $6::json AS conversations,
        $7::json AS coverage, $8::json AS events, $9::json AS deliveries, $10::json AS jobs,
        $11::json AS idempotency_record
    WHERE $14::text[] = (
        SELECT coalesce(array_agg(id::text ORDER BY id COLLATE "C"), '{}')
        FROM webhook_endpoints
        WHERE partner_id = $12 AND environment = $13 AND active AND disabled_at IS NULL)
),
new_referral AS (
    INSERT INTO referrals (
        id, partner_id, environment, shape, status, external_ref, partner_reference,
        tracking_code, patient_first_name, patient_last_name, patient_phone, patient_email,
        patient_phone_index, patient_email_index, patient_city, patient_area, reason, care_mode,
        preferred_contact, route,
        consent_accepted, consent_accepted_at, consent_version, consent_source,
        partner_metadata, diagnosis, recommended_sessions, priority, referring_doctor,
        billing_mode, callback_url, link_id, campaign, created_at, updated_at)
    SELECT
        id, partner_id, environment, shape, status, external_ref, partner_reference,
        tracking_code, patient_first_name, patient_last_name, patient_phone, patient_email,
        patient_phone_index, patient_email_index, patient_city, patient_area, reason, care_mode,
        preferred_contact, route,
        consent_accepted, consent_accepted_at, consent_version, consent_source,
        partner_metadata, diagnosis, recommended_sessions, priority, referring_doctor,
        billing_mode, callback_url, link_id, campaign, created_at, updated_at
    FROM planned, json_populate_record(NULL::referrals, planned.referral)
),
new_transitions AS (
    INSERT INTO referral_transitions (
        id, referral_id, from_status, to_status, actor, reason, created_at)
    SELECT id, referral_id, from_status, to_status, actor, reason, created_at
    FROM planned, json_populate_recordset(NULL::referral_transitions, planned.transitions)
),
new_assistant_sessions AS (
    INSERT INTO assistant_sessions (
        id, referral_id, expires_at, opened_at, completed_at, created_at)
    SELECT id, referral_id, expires_at, opened_at, completed_at, created_at
    FROM planned, json_populate_recordset(NULL::assistant_sessions, planned.assistant_sessions)
),
new_contact_tasks AS (
    INSERT INTO contact_tasks (
        id, referral_id, partner_id, environment, channel, purpose, status, claimed_by,
        created_at, updated_at)
    SELECT
        id, referral_id, partner_id, environment, channel, purpose, status, claimed_by,
        created_at, updated_at
    FROM planned, json_populate_recordset(NULL::contact_tasks, planned.contact_tasks)
),
new_messages AS (
    INSERT INTO outbound_messages (
        id, referral_id, environment, channel, recipient, recipient_ref, purpose, content,
        state, attempts, next_attempt_at, provider, provider_message_id, created_at,
        updated_at, sent_at, status_at)
    SELECT
        id, referral_id, environment, channel, recipient, recipient_ref, purpose, content,
        state, attempts, next_attempt_at, provider, provider_message_id, created_at,
        updated_at, sent_at, status_at
    FROM planned, json_populate_recordset(NULL::outbound_messages, planned.messages)
),
new_conversations AS (
    INSERT INTO intake_conversations (
        referral_id, environment, channel, recipient_ref, state, nudge_at, created_at,
        updated_at)
    SELECT
        referral_id, environment, channel, recipient_ref, state, nudge_at, created_at,
        updated_at
    FROM planned, json_populate_recordset(NULL::intake_conversations, planned.conversations)
),
new_coverage AS (
    INSERT INTO referral_coverage (
        referral_id, environment, hmo_code, policy_number, procedure_code, pre_auth_token,
        created_at)
    SELECT referral_id, environment, hmo_code, policy_number, procedure_code, pre_auth_token,
        created_at
    FROM planned, json_populate_recordset(NULL::referral_coverage, planned.coverage)
),
new_events AS (
    INSERT INTO events (id, partner_id, environment, type, referral_id, data, body, occurred_at)
    SELECT id, partner_id, environment, type, referral_id, data, body, occurred_at
    FROM planned, json_populate_recordset(NULL::events, planned.events)
),
new_deliveries AS (
    INSERT INTO deliveries (
        id, event_id, endpoint_id, target_url, state, attempt_count, next_attempt_at,
        created_at)
    SELECT
        id, event_id, endpoint_id, target_url, state, attempt_count, next_attempt_at,
        created_at
    FROM planned, json_populate_recordset(NULL::deliveries, planned.deliveries)
),
new_jobs AS (
    INSERT INTO scheduled_jobs (
        id, kind, payload, referral_id, due_at, state, attempts, created_at, updated_at)
    SELECT id, kind, payload, referral_id, due_at, state, attempts, created_at, updated_at
    FROM planned, json_populate_recordset(NULL::scheduled_jobs, planned.jobs)
),
new_idempotency_record AS (
    INSERT INTO idempotency_records (
        partner_id, environment, key, fingerprint, response_status, response_body, expires_at)
    SELECT
        partner_id, environment, key, fingerprint, response_status,
        decode(response_body, 'base64'), expires_at
    FROM planned, json_to_recordset(planned.idempotency_record) AS r(
        partner_id text, environment text, key text, fingerprint text, response_status int,
        response_body text, expires_at timestamptz)
),
"""
_AUDIT_CTES = append_ctes(15, when="EXISTS (SELECT 1 FROM planned)")
CREATE_REFERRAL = _PLAN_CTES + _AUDIT_CTES + "\nSELECT count(*) FROM planned\n"

# Planned with endpoints that changed meanwhile: read them again and retry, this many times.
_ATTEMPTS = 3
_CACHED_SCOPES = 10_000


class PostgresCreateStore:
    def __init__(self, db: Database, ring: KeyRing) -> None:
        self._db = db
        self._ring = ring
        # (partner, environment) -> its active endpoints as last read; checked by every create.
        self._endpoints: dict[tuple[str, str], Sequence[Endpoint]] = {}

    async def persist(self, plan: CreatePlan, claim: KeyClaim | None) -> bytes:
        scope = (plan.partner_id, plan.environment)
        encode = msgspec.json.encode
        rows = [
            encode(stored_referral(self._ring, plan.referral)).decode(),
            encode(stored_transitions(self._ring, plan.transitions)).decode(),
            encode(plan.assistant_sessions).decode(),
            encode(plan.contact_tasks).decode(),
            encode(plan.messages).decode(),
            encode(plan.conversations).decode(),
            encode(plan.coverage).decode(),
            encode([sealed_event_row(self._ring, event.row) for event in plan.events]).decode(),
        ]
        jobs = encode(plan.jobs).decode()
        stored = encode([claim.record(plan.response)] if claim is not None else []).decode()
        audit_columns = columns(plan.audit)
        async with self._db.autocommit() as conn:
            if not isinstance(conn, RawConnection):
                raise TypeError("PostgresCreateStore needs a PostgreSQL database")
            endpoints = self._endpoints.get(scope)
            for _ in range(_ATTEMPTS):
                if endpoints is None:
                    endpoints = await self._read_endpoints(conn, scope)
                deliveries = encode(plan.deliveries(endpoints)).decode()
                planned_with = sorted(endpoint.id for endpoint in endpoints)
                try:
                    written = await conn.driver.fetchval(
                        CREATE_REFERRAL,
                        *rows,
                        deliveries,
                        jobs,
                        stored,
                        *scope,
                        planned_with,
                        *audit_columns,
                    )
                except asyncpg.IntegrityConstraintViolationError as exc:
                    raise IntegrityError("CREATE_REFERRAL", None, exc) from exc
                if written:
                    return plan.response
                endpoints = None
        raise ApiError(
            503,
            "service_unavailable",
            "The webhook endpoints changed while the referral was being created; retry with "
            "the same Idempotency-Key.",
            headers={"Retry-After": "1"},
        )

    async def _read_endpoints(
        self, conn: RawConnection, scope: tuple[str, str]
    ) -> Sequence[Endpoint]:
        partner_id, environment = scope
        endpoints = await active_endpoints(conn, partner_id=partner_id, environment=environment)
        if len(self._endpoints) >= _CACHED_SCOPES:
            self._endpoints.clear()
        self._endpoints[scope] = endpoints
        return endpoints
