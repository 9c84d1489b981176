"""The work queues page (``/console/queues``): unmatched, awaiting booking, no-show,
overdue outcome measures and failed deliveries, each with its count, oldest work first.

Every item links to its referral, where the action that clears it is (match or assign,
book, attend, record measures, redeliver). Viewing is audited like the board.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Redirect, Template

from rehabref.clock import utcnow
from rehabref.console import queries, queue_queries
from rehabref.console.audit_page import viewed
from rehabref.console.render import page, to_login
from rehabref.console.session import signed_in
from rehabref.scope import OperatorScope
from rehabref.services import services_of


@get("/console/queues", include_in_schema=False)
async def queues_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    query = request.query_params
    names = dict(queue_queries.QUEUES)
    asked = query.get("queue") or ""
    chosen = asked if asked in names else "unmatched"
    environment = query.get("env") if query.get("env") in {"live", "test"} else None
    scope = OperatorScope(environment=environment)
    city = " ".join((query.get("city") or "").split())[:80] or None
    now = utcnow()
    async with services_of(request).db.read() as conn:
        work: dict[str, list[Any]] = {
            "unmatched": await queue_queries.unmatched(conn, scope, city),
            "awaiting_booking": await queue_queries.awaiting_booking(conn, scope, city),
            "no_show": await queue_queries.no_show(conn, scope, now, city),
            "outcomes_overdue": await queue_queries.outcomes_overdue(conn, scope, now, city),
            "failed_deliveries": await queue_queries.failed_deliveries(conn, scope),
        }
        ring = services_of(request).box.ring
        for name in ("unmatched", "awaiting_booking", "no_show", "outcomes_overdue"):
            work[name] = [item.opened(ring) for item in work[name]]
        partners = await queries.partner_names(
            conn, {item["partner_id"] for item in work["failed_deliveries"]}
        )
    await viewed(request, signed, "queues.listed")
    return page(
        "queues",
        {
            "queues": queue_queries.QUEUES,
            "counts": {name: len(items) for name, items in work.items()},
            "limit": queue_queries.QUEUE_LIMIT,
            "chosen": chosen,
            "title": names[chosen],
            "items": work[chosen],
            "partners": partners,
            "environment": environment,
            "city": city,
        },
        signed=signed,
        notice=query.get("notice"),
    )


ROUTES = [queues_page]
