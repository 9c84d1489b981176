"""The one idempotent-create flow every POST that creates something goes through.

The caller hands over ``persist``: it writes the request's effect and, given a claim, the
claim's record with the answer, all or nothing, and returns the answer's body. With a key:
a request already answered is replayed, a different body under the key is refused (422),
and a concurrent one still running is a 409. Losing a unique-index race ends as if we had
come second: a replay, a 422, or the caller's conflict error. Without a key, a unique
violation is that conflict.

Two kinds of ``persist``: a referral create writes its plan through the create store
(``workflows/create_store.py``) and lets the record's primary key find a key seen before;
other creates run their service function in one transaction (``in_transaction``), which
looks the key up first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from litestar import Response
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.crypto import KeyRing
from rehabref.db import Database
from rehabref.errors import ApiError
from rehabref.idempotency.in_flight import KeysInFlight
from rehabref.idempotency.service import (
    KeyClaim,
    KeyOwner,
    StoredResponse,
    fingerprint,
    forget_expired,
    key_reused,
    lookup,
    read_committed,
    remember,
)
from rehabref.responses import JSON

# Writes the effect (and the claim's record, when given) at once; returns the answer's body.
Persist = Callable[[KeyClaim | None], Awaitable[bytes]]
# A service call in the caller's transaction; returns the answer's body.
Create = Callable[[AsyncConnection], Awaitable[bytes]]


class AnsweredBefore(Exception):
    """Raised by a ``persist`` that found the key's stored answer before writing anything."""

    def __init__(self, stored: StoredResponse) -> None:
        super().__init__("answered before")
        self.stored = stored


def replay(stored: StoredResponse) -> Response[bytes]:
    return Response(
        content=stored.body,
        status_code=stored.status,
        media_type=JSON,
        headers={"Idempotent-Replayed": "true"},
    )


class IdempotentCreates:
    """The flow, with what every create shares: the database, the ring that seals stored
    answers (they hold patient data and links), how long answers are kept, and this
    process's keys in flight. One per app (``Services.idempotency``)."""

    def __init__(self, db: Database, ring: KeyRing, *, ttl_seconds: int) -> None:
        self._db = db
        self._ring = ring
        self._ttl_seconds = ttl_seconds
        self._in_flight = KeysInFlight()

    async def create(
        self,
        *,
        owner: KeyOwner,
        key: str | None,
        operation: str,
        body: dict[str, Any],
        persist: Persist,
        conflict: Callable[[], ApiError],
        status: int = 201,
    ) -> Response[bytes]:
        if key is None:
            try:
                content = await persist(None)
            except IntegrityError:
                raise conflict() from None
            return Response(content=content, status_code=status, media_type=JSON)
        claim = KeyClaim(
            partner_id=owner.owner_id,
            environment=owner.environment,
            key=key,
            fingerprint=fingerprint(operation, body),
            status=status,
            ttl_seconds=self._ttl_seconds,
            ring=self._ring,
        )
        with self._in_flight.claim(owner, key):
            for attempt in (1, 2):
                try:
                    content = await persist(claim)
                except AnsweredBefore as answered:
                    return replay(answered.stored)
                except IntegrityError:
                    async with self._db.read() as conn:
                        winner = await read_committed(conn, self._ring, **claim.scope)
                    if winner is not None and winner.expired and attempt == 1:
                        # A record past its 24 h that nobody purged yet blocks the key: drop
                        # it and try once more.
                        async with self._db.write() as conn:
                            if await forget_expired(conn, **claim.scope):
                                continue
                    if winner is None or winner.expired:
                        raise conflict() from None
                    if winner.fingerprint != claim.fingerprint:
                        raise key_reused() from None
                    return replay(winner.response)
                return Response(content=content, status_code=status, media_type=JSON)
        raise conflict()

    def in_transaction(self, create: Create) -> Persist:
        """``persist`` for a service function: one write transaction that first looks the key
        up (locking it on PostgreSQL), then runs ``create`` and stores its answer."""
        db = self._db

        async def persist(claim: KeyClaim | None) -> bytes:
            async with db.write() as conn:
                if claim is not None:
                    stored = await lookup(
                        conn, claim.ring, **claim.scope, request_fingerprint=claim.fingerprint
                    )
                    if stored is not None:
                        raise AnsweredBefore(stored)
                content = await create(conn)
                if claim is not None:
                    await remember(conn, claim.record(content))
            return content

        return persist


async def answered_before(conn: AsyncConnection, claim: KeyClaim) -> None:
    """For a ``persist`` with work that must not be done twice before its write (a message
    to the patient): raise ``AnsweredBefore`` (or the 422 of a reused key) when the key
    already has its answer."""
    stored = await read_committed(conn, claim.ring, **claim.scope)
    if stored is None or stored.expired:
        return
    if stored.fingerprint != claim.fingerprint:
        raise key_reused()
    raise AnsweredBefore(stored.response)
