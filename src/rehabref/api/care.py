"""Partner API: session list (spec 4.5), outcome report (4.6) and the signed PDF link."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar import Response
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import fields
from rehabref.api.authentication import PARTNER_SECRET
from rehabref.api.report_link_auth import REPORT_LINK, ReportLinkHolder
from rehabref.care import store as care_store
from rehabref.care.outcomes import load_outcome, report_body
from rehabref.care.report_links import pdf_url
from rehabref.care.responses import SessionList
from rehabref.care.views import partner_session_item
from rehabref.clock import utcnow
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.matching.rows import PhysioRow
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.principal import Principal
from rehabref.referrals import store as referral_store
from rehabref.referrals.rows import ReferralRow
from rehabref.responses import json_response
from rehabref.scope import PartnerScope
from rehabref.services import services_of
from rehabref.tables.care import CareSession
from rehabref.tables.matching import Physiotherapist

STATUSES = ("scheduled", "in_progress", "completed", "cancelled")
_sessions = table(CareSession)
_physios = table(Physiotherapist)


def _bound(raw: str | None, name: str, *, end: bool, problems: dict[str, str]) -> Any:
    """A date (whole UTC day: from its start, to its end) or an ISO 8601 UTC timestamp."""
    if raw is None:
        return None
    if len(raw) == 10:
        try:
            day = fields.calendar_date(raw)
        except ValueError as exc:
            text = str(exc)
            problems[name] = _BOUND_FORMAT if text.startswith("Use a date") else text
            return None
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        return (start + timedelta(days=1), False) if end else (start, True)
    try:
        return fields.utc_timestamp_any(raw), True
    except ValueError as exc:
        text = str(exc)
        problems[name] = _BOUND_FORMAT if text.startswith("Use an ISO 8601") else text
        return None


_BOUND_FORMAT = "Use a date (2026-01-31) or an ISO 8601 UTC timestamp (2026-01-31T09:30:00Z)."


async def list_sessions(request: PlainRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    query = request.query_params
    problems: dict[str, str] = {}
    status = query.get("status")
    if status is not None and status not in STATUSES:
        problems["status"] = f"Must be one of: {', '.join(STATUSES)}."
    phone = query.get("patient_phone")
    if phone is not None:
        try:
            fields.e164(phone)
        except ValueError as exc:
            problems["patient_phone"] = str(exc)
    lower = _bound(query.get("from_date"), "from_date", end=False, problems=problems)
    upper = _bound(query.get("to_date"), "to_date", end=True, problems=problems)
    if lower and upper and lower[0] > upper[0]:
        problems["to_date"] = "Must not be before from_date."
    referral_id = query.get("referral_id")
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    where = care_store.SessionFilter(
        referral_id=referral_id,
        patient_phone=phone,
        status=status,
        scheduled_from=lower[0] if lower is not None else None,
        scheduled_to=upper[0] if upper is not None else None,
        scheduled_to_inclusive=upper[1] if upper is not None else True,
    )
    async with services.db.read() as conn:
        rows = await care_store.list_sessions(
            conn, scope=PartnerScope.of(principal), where=where, ring=services.box.ring
        )
    clinical = principal.contract == "g"
    items = [
        partner_session_item(
            row, provider_name=row.provider_name, clinical=clinical, ring=services.box.ring
        )
        for row in rows
    ]
    return json_response(SessionList(total_sessions=len(items), sessions=items))


def _forbid_v1(principal: Principal) -> None:
    if principal.contract != "g":
        raise ApiError(
            403,
            "forbidden",
            "Clinical outcome reports are available to clinical (contract g) partners only.",
        )


async def outcome_report(
    request: PlainRequest, principal: Principal, referral_id: str
) -> Response[bytes]:
    services = services_of(request)
    _forbid_v1(principal)
    async with services.db.read() as conn:
        referral = await referral_store.get_referral(
            conn, scope=PartnerScope.of(principal), referral_id=referral_id
        )
        if referral is None:
            raise ApiError(404, "not_found", "No referral with this identifier.")
        outcome = await load_outcome(conn, services.box.ring, referral)
    url = pdf_url(services.box, base_url=services.settings.base_url, referral_id=referral.id)
    return json_response(report_body(services.box.ring, referral, outcome, pdf_url=url))


async def _physio_of(conn: AsyncConnection, referral: ReferralRow) -> PhysioRow | None:
    physio_id = referral.assigned_physio_id
    if physio_id is None:
        physio_id = (
            await conn.execute(
                select(func.max(_sessions.c.physio_id)).where(
                    _sessions.c.referral_id == referral.id
                )
            )
        ).scalar_one_or_none()
    if physio_id is None:
        return None
    return (await conn.execute(select(_physios).where(_physios.c.id == physio_id))).first()


async def discharge_pdf(
    request: PlainRequest, link: ReportLinkHolder, token: str
) -> Response[bytes]:
    """No API key: the signed, expiring token is the credential (``REPORT_LINK``)."""
    services = services_of(request)
    referral_id = link.referral_id
    async with services.db.read() as conn:
        referral = await referral_store.unscoped_get_referral(conn, referral_id=referral_id)
        if referral is None:
            raise ApiError(404, "not_found", "This report no longer exists.")
        outcome = await load_outcome(conn, services.box.ring, referral)
        physio = await _physio_of(conn, referral)
    # Imported on first use: matplotlib and fpdf2 add ~0.5 s to process start otherwise.
    from rehabref.care.discharge_pdf import render_pdf

    content = await asyncio.to_thread(
        render_pdf,
        ring=services.box.ring,
        referral=referral,
        outcome=outcome,
        physio=physio,
        generated_at=utcnow(),
    )
    return Response(
        content=content,
        media_type="application/pdf",
        headers={
            "Cache-Control": "no-store",
            "Content-Disposition": f'inline; filename="discharge-summary-{referral_id}.pdf"',
            "Referrer-Policy": "no-referrer",
            "X-Robots-Tag": "noindex",
        },
    )


ROUTES = [
    PlainRoute(
        "GET",
        "/api/v1/partners/sessions",
        list_sessions,
        auth=PARTNER_SECRET,
        audit="sessions.listed",
    ),
    PlainRoute(
        "GET",
        "/api/v1/partners/reports/{referral_id}",
        outcome_report,
        auth=PARTNER_SECRET,
        audit="report.read",
    ),
    # The signed PDF link of the report (its token is the credential; not an API operation).
    PlainRoute(
        "GET",
        "/reports/pdf/{token}",
        discharge_pdf,
        auth=REPORT_LINK,
        in_schema=False,
        audit="report.downloaded",
    ),
]
