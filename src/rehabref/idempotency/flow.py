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
from rehabref.fastsql import batched_inserts
from rehabref.idempotency.service import (
    StoredResponse,
    claim_in_process,
    fingerprint,
    key_reused,
    lookup,
    read_committed,
    remember,
)
from rehabref.partners.auth import Principal
from rehabref.responses import JSON

# Returns the JSON body of the success answer.
Create = Callable[[AsyncConnection], Awaitable[bytes]]


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
) -> Response[bytes]:
    """``batch_inserts``: send the creation's INSERTs and the stored answer as one statement
    (``fastsql.batched_inserts``); only for ``create`` functions written with ``fastsql``."""
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
        try:
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
        except IntegrityError:
            async with db.read() as conn:
                winner = await read_committed(conn, **scope)
            if winner is None:
                raise conflict() from None
            winner_print, stored = winner
            if winner_print != request_print:
                raise key_reused() from None
            return replay(stored)
    return Response(content=response.body, status_code=status, media_type=JSON)
