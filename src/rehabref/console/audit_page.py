"""The console's audit trail page (admins), and the audit record of each console view.

A console page that shows patient data records its view with ``viewed`` (its own short
transaction, like the API's reads); console changes record theirs in their transaction.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Redirect, Template

from rehabref.audit.listing import AuditQuery, encode, list_events
from rehabref.audit.trail import entry, record_read
from rehabref.console.render import page, to_login
from rehabref.console.session import Signed, signed_in
from rehabref.services import services_of


async def viewed(
    request: Request[Any, Any, Any], signed: Signed, action: str, referral_id: str | None = None
) -> None:
    item = entry(signed.operator.actor, action, referral_id=referral_id)
    await record_read(services_of(request).db, item)


@get("/console/audit", include_in_schema=False)
async def audit_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    if not signed.operator.is_admin:
        return page(
            "message",
            {"title": "Admins only", "message": "Only an admin operator can read the audit trail."},
            signed=signed,
            status=403,
        )
    query = request.query_params
    filters = {
        name: (query.get(name) or "").strip() for name in ("referral_id", "actor_id", "since")
    }
    problems: dict[str, str] = {}
    given = {name: value for name, value in filters.items() if value}
    where = AuditQuery({**given, **_page(query)}, problems)
    rows: list[Any] = []
    has_more = False
    if not problems:
        async with services_of(request).db.read() as conn:
            found, has_more = await list_events(conn, where)
        rows = list(found)
        await viewed(request, signed, "audit_events.listed", where.referral_id)
    return page(
        "audit",
        {
            "filters": filters,
            "problems": problems,
            "rows": rows,
            "next_cursor": encode(rows[-1].id) if has_more and rows else None,
        },
        signed=signed,
        status=422 if problems else 200,
    )


def _page(query: Any) -> dict[str, str]:
    cursor = query.get("cursor")
    return {"cursor": cursor} if cursor else {}


ROUTES = [audit_page]
