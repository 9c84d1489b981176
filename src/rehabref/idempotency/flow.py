"""The one idempotent-create flow every POST that creates something goes through.

With a key: the stored answer is replayed, a different body is refused (422), and a first
request runs ``create`` and stores its answer in the same transaction. Losing a unique-index
race to a concurrent request ends as if we had come second: a replay, a 422, or the caller's
conflict error. Without a key: ``create`` runs once and a unique violation is that conflict.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from typing import Any

from litestar import Response
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import Database
from rehabref.errors import ApiError
from rehabref.fastsql import Connection, batched_inserts
from rehabref.idempotency.service import (
    StoredResponse,
    claim_in_process,
    fingerprint,
    forget_expired,
    key_reused,
    lookup,
    read_committed,
    remember,
)
from rehabref.principal import Principal
from rehabref.responses import JSON

# Returns the JSON body of the success answer.
Create = Callable[[AsyncConnection], Awaitable[bytes]]
# The same, written with ``fastsql`` only, so it also runs on a raw autocommit connection.
FastCreate = Callable[[Connection], Awaitable[bytes]]


def replay(stored: StoredResponse) -> Response[bytes]:
    return Response(
        content=stored.body,
        status_code=stored.status,
        media_type=JSON,
        headers={"Idempotent-Replayed": "true"},
    )


async def create_idempotently(
    db: Database,
    *,
    principal: Principal,
    key: str | None,
    operation: str,
    body: dict[str, Any],
    ttl_seconds: int,
    create: Create,
    conflict: Callable[[], ApiError],
    status: int = 201,
    batch_inserts: bool = False,
    one_statement_create: FastCreate | None = None,
) -> Response[bytes]:
    """``batch_inserts``: send the creation's INSERTs and the stored answer as one statement
    (``fastsql.batched_inserts``); only for ``create`` functions written with ``fastsql``.

    ``one_statement_create``: used instead of ``create`` when given; it only reads and queues
    INSERTs, so on PostgreSQL the whole write, stored answer included, is one autocommit
    statement.
    A key seen before then shows as the record's primary-key violation, and is answered
    from the stored record like a lost race: four round trips fewer on every first request.
    """
    if key is None:
        try:
            async with db.write() as conn:
                content = await create(conn)
        except IntegrityError:
            raise conflict() from None
        return Response(content=content, status_code=status, media_type=JSON)
    scope = {"partner_id": principal.partner_id, "environment": principal.environment, "key": key}
    request_print = fingerprint(operation, body)
    with claim_in_process(principal.partner_id, principal.environment, key):
        for attempt in (1, 2):
            try:
                if one_statement_create is not None:
                    response = await _create_in_one_statement(
                        db, scope, request_print, ttl_seconds, one_statement_create, status
                    )
                    break
                async with db.write() as conn:
                    stored = await lookup(conn, **scope, request_fingerprint=request_print)
                    if stored is not None:
                        return replay(stored)
                    async with batched_inserts(conn) if batch_inserts else nullcontext():
                        response = StoredResponse(status, await create(conn))
                        await remember(
                            conn,
                            **scope,
                            request_fingerprint=request_print,
                            response=response,
                            ttl_seconds=ttl_seconds,
                        )
                break
            except IntegrityError:
                async with db.read() as conn:
                    winner = await read_committed(conn, **scope)
                if winner is not None and winner.expired and attempt == 1:
                    # A record past its 24 h that nobody purged yet blocks the key: drop it
                    # and try once more (the checked path does this before its insert).
                    async with db.write() as conn:
                        if await forget_expired(conn, **scope):
                            continue
                if winner is None or winner.expired:
                    raise conflict() from None
                if winner.fingerprint != request_print:
                    raise key_reused() from None
                return replay(winner.response)
    return Response(content=response.body, status_code=status, media_type=JSON)


async def _create_in_one_statement(
    db: Database,
    scope: dict[str, str],
    request_print: str,
    ttl_seconds: int,
    create: FastCreate,
    status: int,
) -> StoredResponse:
    async with db.autocommit() as conn, batched_inserts(conn, single_statement=True):
        response = StoredResponse(status, await create(conn))
        await remember(
            conn,
            **scope,
            request_fingerprint=request_print,
            response=response,
            ttl_seconds=ttl_seconds,
        )
    return response
