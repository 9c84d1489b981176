"""The issue's other yardstick: Starlette + msgspec + one asyncpg INSERT per request.

The issue measured it at 0.16 of the bare Starlette endpoint on its reference machine; run
in the same benchmark, it shows what one insert costs on this machine and with this
PostgreSQL, which a rehabref create (six rows, validation, idempotency) can be read against.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import asyncpg
import msgspec
import psycopg
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


class Item(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    city: str
    note: str


_pool: asyncpg.Pool | None = None


async def create_item(request: Request) -> Response:
    try:
        item = msgspec.json.decode(await request.body(), type=Item)
    except msgspec.ValidationError as exc:
        return Response(msgspec.json.encode({"error": str(exc)}), 422)
    item_id = "itm_" + secrets.token_hex(13)
    assert _pool is not None
    async with _pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO bench_reference_items (id, name, city, note, created_at)"
            " VALUES ($1, $2, $3, $4, $5)",
            item_id,
            item.name,
            item.city,
            item.note,
            datetime.now(UTC),
        )
    body = msgspec.json.encode({"id": item_id, "name": item.name})
    return Response(body, 201, media_type="application/json")


TABLE = (
    "CREATE TABLE bench_reference_items (id text PRIMARY KEY, name text NOT NULL,"
    " city text NOT NULL, note text NOT NULL, created_at timestamptz NOT NULL)"
)


def create_table(url: str) -> None:
    """Run once before the server starts: its workers racing ``CREATE TABLE IF NOT EXISTS``
    failed one worker's start-up now and then (a unique violation in ``pg_type``), and the
    run then measured a server that was gone."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(TABLE)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    global _pool
    _pool = await asyncpg.create_pool(os.environ["BENCH_DATABASE_URL"], min_size=10, max_size=10)
    yield
    await _pool.close()


app = Starlette(routes=[Route("/items", create_item, methods=["POST"])], lifespan=lifespan)
