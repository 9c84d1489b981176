"""Idempotency-Key handling for POST requests.

Scope: (partner, environment, key). The first successful response is stored in the same
transaction (or statement) as its business effect and replayed for 24 h; the same key with
another body is a 422; a second request while the first is still running is a 409.
Concurrent duplicates are stopped by the keys in flight in this process
(``in_flight.KeysInFlight``), on PostgreSQL by a transaction-scoped advisory lock (creates run
in a transaction, ``IdempotentCreates.in_transaction``), and finally by the primary key of
the record, which makes the loser's write roll back whole.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import msgspec
from sqlalchemy import and_, bindparam, delete, func, insert, literal, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import as_utc, utcnow
from rehabref.crypto import KeyRing, is_sealed, open_sealed_bytes, seal_bytes
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.fastsql import Connection, Statement, execute, fetch_one
from rehabref.principal import Principal
from rehabref.tables.idempotency import IdempotencyRecord

_records = table(IdempotencyRecord)
# Stored answers hold patient data and live patient links: sealed at rest.
SEALED_RESPONSE = "idempotency.response"
_VALID_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


@dataclass(frozen=True, slots=True)
class KeyOwner:
    """Whose keys these are: a partner in one environment, or one coordinator (whose keys
    are their own, in the environment ``ops``, never a partner's)."""

    owner_id: str
    environment: str

    @classmethod
    def partner(cls, principal: Principal) -> KeyOwner:
        return cls(principal.partner_id, principal.environment)

    @classmethod
    def operator(cls, operator_id: str) -> KeyOwner:
        return cls(operator_id, "ops")


@dataclass(frozen=True)
class StoredResponse:
    status: int
    body: bytes


@dataclass(frozen=True)
class KeyClaim:
    """A first request under a key: what its stored answer will be filed under."""

    partner_id: str
    environment: str
    key: str
    fingerprint: str
    status: int
    ttl_seconds: int
    ring: KeyRing

    @property
    def scope(self) -> dict[str, str]:
        return {"partner_id": self.partner_id, "environment": self.environment, "key": self.key}

    def record(self, body: bytes) -> dict[str, Any]:
        """The ``idempotency_records`` row storing ``body`` as this request's answer, to be
        written in the same transaction (or statement) as the request's effect."""
        return {
            **self.scope,
            "fingerprint": self.fingerprint,
            "response_status": self.status,
            "response_body": seal_bytes(self.ring, SEALED_RESPONSE, body),
            "expires_at": utcnow() + timedelta(seconds=self.ttl_seconds),
        }


def valid_key(value: str | None, *, required: bool) -> str | None:
    if value is None or value == "":
        if required:
            raise ApiError(
                400,
                "idempotency_key_required",
                "Send an Idempotency-Key header (a unique value per logical request).",
                fields={"Idempotency-Key": "Required for POST requests in the V1 contract."},
            )
        return None
    if not _VALID_KEY.match(value):
        raise ApiError(
            400,
            "malformed_request",
            "The Idempotency-Key must be 1 to 255 visible ASCII characters.",
            fields={"Idempotency-Key": "1 to 255 visible ASCII characters."},
        )
    return value


def fingerprint(operation: str, body: Any) -> str:
    """Canonical JSON of the parsed body: whitespace and key order do not matter."""
    canonical = msgspec.json.encode(body, order="sorted")
    return hashlib.sha256(operation.encode() + b"\n" + canonical).hexdigest()


def still_in_flight() -> ApiError:
    return ApiError(
        409,
        "idempotency_in_flight",
        "A request with this Idempotency-Key is still being processed; retry shortly.",
    )


def _lock_id(partner_id: str, environment: str, key: str) -> int:
    digest = hashlib.sha256(f"{partner_id}\x00{environment}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


_record_columns = (
    _records.c.fingerprint,
    _records.c.response_status,
    _records.c.response_body,
    _records.c.expires_at,
)
_scope = and_(
    _records.c.partner_id == bindparam("partner_id"),
    _records.c.environment == bindparam("environment"),
    _records.c.key == bindparam("key"),
)
# PostgreSQL: try the advisory lock and read the record in one round trip.
_LOCK_AND_READ = Statement(
    select(
        func.pg_try_advisory_xact_lock(bindparam("lock_id")).label("locked"), *_record_columns
    ).select_from(select(literal(1).label("one")).subquery().outerjoin(_records, _scope))
)
_READ = Statement(select(literal(True).label("locked"), *_record_columns).where(_scope))
_INSERT = Statement(insert(_records))


def stored_body(ring: KeyRing, stored: bytes) -> bytes:
    """A remembered reply's body as it was answered (opened when sealed)."""
    # An answer stored before release 0014 sealed them is plain JSON; it expires within the
    # idempotency window.
    return open_sealed_bytes(ring, SEALED_RESPONSE, stored) if is_sealed(stored) else stored


async def lookup(
    conn: AsyncConnection,
    ring: KeyRing,
    *,
    partner_id: str,
    environment: str,
    key: str,
    request_fingerprint: str,
) -> StoredResponse | None:
    """Inside the write transaction: lock the key (PostgreSQL), then replay or refuse."""
    scope = {"partner_id": partner_id, "environment": environment, "key": key}
    if conn.dialect.name == "postgresql":
        lock_id = _lock_id(partner_id, environment, key)
        row = await fetch_one(conn, _LOCK_AND_READ, {**scope, "lock_id": lock_id})
    else:
        row = await fetch_one(conn, _READ, scope)
    if row is not None and not row.locked:
        raise still_in_flight()
    if row is None or row.fingerprint is None:
        return None
    if as_utc(row.expires_at) <= utcnow():
        await forget_expired(conn, **scope)
        return None
    if row.fingerprint != request_fingerprint:
        raise key_reused()
    return StoredResponse(
        status=row.response_status, body=stored_body(ring, bytes(row.response_body))
    )


def key_reused() -> ApiError:
    return ApiError(
        422,
        "idempotency_key_reused",
        "This Idempotency-Key was already used with a different request body.",
        fields={"Idempotency-Key": "Use a new key for a different request."},
    )


async def remember(conn: Connection, record: dict[str, Any]) -> None:
    await execute(conn, _INSERT, record)


@dataclass(frozen=True)
class CommittedRecord:
    fingerprint: str
    response: StoredResponse
    # Past its 24 h but not purged yet: it no longer counts, but still holds the key.
    expired: bool


async def read_committed(
    conn: AsyncConnection, ring: KeyRing, *, partner_id: str, environment: str, key: str
) -> CommittedRecord | None:
    """After a failed insert: the key's committed record (the race's winner, or an earlier
    request), expired or not; None when there is none."""
    row = (
        await conn.execute(
            select(
                _records.c.fingerprint,
                _records.c.response_status,
                _records.c.response_body,
                _records.c.expires_at,
            ).where(
                _records.c.partner_id == partner_id,
                _records.c.environment == environment,
                _records.c.key == key,
            )
        )
    ).first()
    if row is None:
        return None
    return CommittedRecord(
        fingerprint=row.fingerprint,
        response=StoredResponse(row.response_status, stored_body(ring, bytes(row.response_body))),
        expired=as_utc(row.expires_at) <= utcnow(),
    )


async def forget_expired(
    conn: AsyncConnection, *, partner_id: str, environment: str, key: str
) -> bool:
    """Delete this key's record if it has expired; True when one was deleted."""
    result = await conn.execute(
        delete(_records).where(
            _records.c.partner_id == partner_id,
            _records.c.environment == environment,
            _records.c.key == key,
            _records.c.expires_at <= utcnow(),
        )
    )
    return bool(result.rowcount)


async def purge_expired(conn: AsyncConnection) -> int:
    result = await conn.execute(delete(_records).where(_records.c.expires_at <= utcnow()))
    return int(result.rowcount or 0)


async def amend_response(
    conn: AsyncConnection,
    ring: KeyRing,
    *,
    partner_id: str,
    environment: str,
    key: str,
    body: bytes,
) -> None:
    """Replace a stored answer with what the same request learnt right after its commit
    (a Shape G create whose message a provider accepted), so replays say the same."""
    await conn.execute(
        update(_records)
        .where(
            _records.c.partner_id == partner_id,
            _records.c.environment == environment,
            _records.c.key == key,
        )
        .values(response_body=seal_bytes(ring, SEALED_RESPONSE, body))
    )
