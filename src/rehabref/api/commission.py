"""Partner API: the partner's monthly commission statements (docs/payments.md).

Only a partner whose agreement grants commission and shows paid amounts and commission
(``show_payments``) sees statements: for any other, every route here is 404 ``not_found``
(the spec shows them "only when the agreement shows commission").
Reads are scoped to the key's partner and environment (``PartnerScope``); another partner's
statement id is 404 as if it did not exist.
"""

from __future__ import annotations

import asyncio

from litestar import Response

from rehabref.api.authentication import PARTNER_SECRET
from rehabref.billing import commission_store as store
from rehabref.billing.statement_csv import statement_csv
from rehabref.billing.statement_responses import StatementList
from rehabref.cursors import page_params
from rehabref.documents import attachment, document_format
from rehabref.errors import ApiError
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.principal import Principal
from rehabref.responses import json_response
from rehabref.scope import PartnerScope
from rehabref.services import services_of

BASE_PATH = "/api/v1/partners/commission-statements"


def _not_found() -> ApiError:
    return ApiError(404, "not_found", "No commission statement with this id for this key.")


def _require_commission(principal: Principal) -> None:
    """Statements exist for a partner whose agreement grants commission and lets the partner
    see paid amounts and commission (``show_payments``, spec: "which partners see paid
    amounts and commission")."""
    if not (
        principal.show_payments
        and store.has_commission(principal.commission_bps, principal.commission_fixed_minor)
    ):
        raise ApiError(404, "not_found", "This partner's agreement shows no commission.")


async def list_statements(request: PlainRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    _require_commission(principal)
    problems: dict[str, str] = {}
    limit, before_id = page_params(request.query_params, store.decode_cursor, problems)
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    async with services.db.read() as conn:
        rows, has_more = await store.list_statements(
            conn, scope=PartnerScope.of(principal), before_id=before_id, limit=limit
        )
    return json_response(
        StatementList.after(
            [store.record(row) for row in rows],
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=store.encode_cursor,
        )
    )


async def get_statement(
    request: PlainRequest, principal: Principal, statement_id: str
) -> Response[bytes]:
    """JSON with its lines; ``?format=csv`` or ``?format=pdf`` for the documents."""
    services = services_of(request)
    _require_commission(principal)
    kind = document_format(request.query_params)
    async with services.db.read() as conn:
        row = await store.get_statement(
            conn, scope=PartnerScope.of(principal), statement_id=statement_id
        )
        if row is None:
            raise _not_found()
        lines = await store.statement_lines(conn, row.id)
    if kind == "json":
        return json_response(store.detail(row, lines))
    if kind == "csv":
        content = statement_csv(row, lines)
    else:
        # Imported on first use: fpdf2 and matplotlib's font path add to process start.
        from rehabref.billing.statement_pdf import statement_pdf

        content = await asyncio.to_thread(
            statement_pdf, row, lines, partner_name=principal.partner_name
        )
    return attachment(content, kind, f"commission-{row.period}-{row.id}.{kind}")


ROUTES = [
    PlainRoute(
        "GET", BASE_PATH, list_statements, auth=PARTNER_SECRET, audit="commission_statements.listed"
    ),
    PlainRoute(
        "GET",
        BASE_PATH + "/{statement_id}",
        get_statement,
        auth=PARTNER_SECRET,
        audit="commission_statement.read",
    ),
]
