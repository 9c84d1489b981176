"""Coordinator (ops) API for a physiotherapist's calendar feed: a new secret URL (shown once,
the previous one revoked) and revocation. Operator tokens only.

Threat: the URL is a bearer credential. Its token is in the 201 body once and never again;
only its digest is stored (``care.calendar_feeds``); the answer is ``no-store`` like every
API answer.
"""

from __future__ import annotations

from litestar import Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.care import calendar_feeds
from rehabref.clock import iso, utcnow
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.ops.auth import OPERATOR, OperatorPrincipal
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.responses import json_response
from rehabref.services import services_of
from rehabref.tables.matching import Physiotherapist

_physios = table(Physiotherapist)
PATH = "/api/v1/ops/physiotherapists/{physio_id}/calendar-feed"


async def _require_physio(conn: AsyncConnection, physio_id: str) -> None:
    found = (await conn.execute(select(_physios.c.id).where(_physios.c.id == physio_id))).first()
    if found is None:
        raise ApiError(404, "not_found", "No physiotherapist with this identifier.")


async def create_feed(
    request: PlainRequest, operator: OperatorPrincipal, physio_id: str
) -> Response[bytes]:
    services = services_of(request)
    now = utcnow()
    async with services.db.write() as conn:
        await _require_physio(conn, physio_id)
        had_one = await calendar_feeds.has_feed(conn, physio_id)
        token = await calendar_feeds.new_feed(conn, physio_id=physio_id, now=now)
        await record(conn, entry(operator.actor, "calendar_feed.created", subject=physio_id))
    view = {
        "physio_id": physio_id,
        "url": services.settings.base_url + calendar_feeds.feed_path(token),
        "created_at": iso(now),
        "replaced_previous": had_one,
    }
    return json_response(view, 201)


async def revoke_feed(
    request: PlainRequest, operator: OperatorPrincipal, physio_id: str
) -> Response[bytes]:
    async with services_of(request).db.write() as conn:
        await _require_physio(conn, physio_id)
        await calendar_feeds.revoke(conn, physio_id=physio_id, now=utcnow())
        await record(conn, entry(operator.actor, "calendar_feed.revoked", subject=physio_id))
    return Response(content=b"", status_code=204)


ROUTES = [
    PlainRoute("POST", PATH, create_feed, auth=OPERATOR),
    PlainRoute("DELETE", PATH, revoke_feed, auth=OPERATOR),
]
