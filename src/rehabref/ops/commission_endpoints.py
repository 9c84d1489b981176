"""Ops API for partner commission statements (docs/payments.md, "Commission statements").

``POST /api/v1/ops/commission-statements`` makes a partner's statement for an ended month:
201 when made, 200 with the same statement on every repeat (idempotent per partner,
environment and month, also under concurrent calls). ``POST .../{id}/settle`` (admin
operators only: it records that money was paid out) settles it once; a second settle is 409.
"""

from __future__ import annotations

from litestar import Response
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.billing import commission_store as store
from rehabref.billing.statement_schemas import StatementGenerateIn
from rehabref.clock import utcnow
from rehabref.ops.auth import ADMIN, OPERATOR, OperatorPrincipal
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.services import services_of

BASE_PATH = "/api/v1/ops/commission-statements"


async def generate_statement(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    payload = validate(StatementGenerateIn, await json_object(request))
    async with services_of(request).db.write() as conn:
        row, created = await store.generate(
            conn,
            partner_id=payload.partner_id,
            environment=payload.environment,
            period=payload.period,
            actor=operator.actor,
            now=utcnow(),
        )
        if created:
            await _audit(conn, operator.actor, "commission_statement.generated", row.id)
    return json_response(store.record(row), status=201 if created else 200)


async def settle_statement(
    request: PlainRequest, operator: OperatorPrincipal, statement_id: str
) -> Response[bytes]:
    services = services_of(request)
    async with services.db.write() as conn:
        row = await store.settle(
            conn, services.box.ring, statement_id=statement_id, actor=operator.actor, now=utcnow()
        )
        await _audit(conn, operator.actor, "commission_statement.settled", row.id)
    return json_response(store.record(row))


async def _audit(conn: AsyncConnection, actor: str, action: str, statement_id: str) -> None:
    await record(conn, entry(actor, action, subject=statement_id))


ROUTES = [
    PlainRoute("POST", BASE_PATH, generate_statement, auth=OPERATOR),
    PlainRoute("POST", BASE_PATH + "/{statement_id}/settle", settle_statement, auth=ADMIN),
]
