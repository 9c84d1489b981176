"""Console work queues: contact tasks, failed webhook deliveries and failing endpoints, the
physiotherapist registry."""

from __future__ import annotations

from typing import Any, get_args

from litestar import Request, get, post
from litestar.response import Redirect, Template
from pydantic import ValidationError

from rehabref.audit.chain import Entry
from rehabref.audit.trail import entry, record
from rehabref.clock import utcnow
from rehabref.console import queries, referral_queries
from rehabref.console.audit_page import viewed
from rehabref.console.render import Posted, form_text, guarded_form, page, see_other, to_login
from rehabref.console.session import Signed, signed_in
from rehabref.errors import ApiError
from rehabref.events import history, subscriptions
from rehabref.matching import registry
from rehabref.matching.schemas import Modality, PhysioCreate, Specialization
from rehabref.ops import service as ops
from rehabref.referrals.sealing import opened_row
from rehabref.request_body import field_errors
from rehabref.scope import OperatorScope
from rehabref.services import services_of

OUTCOMES = (("reached", "Reached the patient"), ("unreachable", "No answer / unreachable"))
SPECIALIZATIONS: tuple[str, ...] = get_args(Specialization)
MODALITIES: tuple[str, ...] = get_args(Modality)
PHYSIO_LIMIT = 200


@get("/console/tasks", include_in_schema=False)
async def tasks_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    status = request.query_params.get("status")
    status = status if status in ops.TASK_STATUSES else "open"
    async with services_of(request).db.read() as conn:
        rows, has_more = await ops.list_tasks(conn, status=status, after_id=None, limit=100)
    await viewed(request, signed, "contact_tasks.listed")
    return page(
        "tasks",
        {
            "rows": [opened_row(services_of(request).box.ring, dict(row._mapping)) for row in rows],
            "has_more": has_more,
            "status": status,
            "statuses": ops.TASK_STATUSES,
            "outcomes": OUTCOMES,
            "me": signed.operator.actor,
        },
        signed=signed,
        notice=request.query_params.get("notice"),
    )


async def _task_error(signed: Signed, exc: ApiError) -> Template:
    return page(
        "message",
        {"title": "Task not updated", "message": exc.message, "back": "/console/tasks"},
        signed=signed,
        status=exc.status,
    )


def _task_entry(signed: Signed, action: str, referral_id: str, task_id: str) -> Entry:
    return entry(signed.operator.actor, action, referral_id=referral_id, subject=task_id)


@post("/console/tasks/{task_id:str}/claim", include_in_schema=False, status_code=200)
async def claim(request: Request[Any, Any, Any], task_id: str) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    signed = posted.signed
    try:
        async with services_of(request).db.write() as conn:
            await ops.claim_task(conn, task_id=task_id, actor=signed.operator.actor, now=utcnow())
            task = await ops.get_task(conn, task_id)
            await record(
                conn, _task_entry(signed, "contact_task.claimed", task.referral_id, task_id)
            )
    except ApiError as exc:
        return await _task_error(signed, exc)
    return see_other("/console/tasks?notice=claimed")


@post("/console/tasks/{task_id:str}/complete", include_in_schema=False, status_code=200)
async def complete(request: Request[Any, Any, Any], task_id: str) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    signed, form = posted.signed, posted.form
    outcome = str(form.get("outcome") or "")
    if outcome not in dict(OUTCOMES):
        return await _task_error(signed, ApiError(422, message="Choose the outcome of the call."))
    try:
        note = form_text(form, "note", 1000) or None
        async with services_of(request).db.write() as conn:
            task = await ops.complete_task(
                conn,
                task_id=task_id,
                actor=signed.operator.actor,
                outcome=outcome,
                note=note,
                now=utcnow(),
                ring=services_of(request).box.ring,
            )
            await record(
                conn, _task_entry(signed, "contact_task.completed", task.referral_id, task_id)
            )
    except ApiError as exc:
        return await _task_error(signed, exc)
    return see_other("/console/tasks?status=claimed&notice=completed")


@get("/console/deliveries", include_in_schema=False)
async def deliveries_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    state = request.query_params.get("state")
    state = state if state in {"failed", "pending", "succeeded", "cancelled"} else "failed"
    async with services_of(request).db.read() as conn:
        items, has_more = await history.list_deliveries(
            conn, scope=OperatorScope(), state=state, before_id=None, limit=100
        )
        endpoints = await subscriptions.needing_attention(conn, scope=OperatorScope())
        owners = {item["partner_id"] for item in [*items, *endpoints]}
        names = await queries.partner_names(conn, owners)
    return page(
        "deliveries",
        {
            "items": items,
            "has_more": has_more,
            "state": state,
            "names": names,
            "endpoints": endpoints,
        },
        signed=signed,
        notice=request.query_params.get("notice"),
    )


async def _physios_page(
    request: Request[Any, Any, Any],
    signed: Signed,
    *,
    values: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    status: int = 200,
) -> Template:
    query = request.query_params
    filters = {
        "q": (query.get("q") or "").strip()[:100],
        "city": (query.get("city") or "").strip()[:100],
        "spec": query.get("spec") if query.get("spec") in SPECIALIZATIONS else "",
        "modality": query.get("modality") if query.get("modality") in MODALITIES else "",
        "active": query.get("active") if query.get("active") in {"yes", "no"} else "",
    }
    async with services_of(request).db.read() as conn:
        rows = await referral_queries.physios_page(
            conn,
            search=filters["q"] or None,
            city=filters["city"] or None,
            specialization=filters["spec"] or None,
            modality=filters["modality"] or None,
            active=None if not filters["active"] else filters["active"] == "yes",
            limit=PHYSIO_LIMIT,
        )
    return page(
        "physios",
        {
            "rows": rows,
            "filters": filters,
            "filtered": any(filters.values()),
            "limit": PHYSIO_LIMIT,
            "values": values or {},
            "errors": errors or {},
            "specializations": SPECIALIZATIONS,
            "modalities": MODALITIES,
        },
        signed=signed,
        status=status,
        notice=request.query_params.get("notice"),
    )


@get("/console/physios", include_in_schema=False)
async def physios_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    return await _physios_page(request, signed)


def _physio_body(form: Any) -> dict[str, Any]:
    def number(name: str, kind: type[int] | type[float]) -> Any:
        raw = str(form.get(name) or "").strip()
        try:
            return kind(raw)
        except ValueError:
            return raw or None

    return {
        "name": str(form.get("name") or ""),
        "license_number": str(form.get("license_number") or "").strip(),
        "specializations": [s for s in form.getall("specializations", []) if s],
        "rating": number("rating", float),
        "phone": str(form.get("phone") or "").replace(" ", ""),
        "city": str(form.get("city") or ""),
        "areas": [a.strip() for a in str(form.get("areas") or "").split(",") if a.strip()],
        "modalities": [m for m in form.getall("modalities", []) if m],
        "weekly_capacity": number("weekly_capacity", int),
        "active": True,
    }


@post("/console/physios", include_in_schema=False, status_code=200)
async def create_physio(request: Request[Any, Any, Any]) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    signed, form = posted.signed, posted.form
    body = _physio_body(form)
    try:
        data = PhysioCreate.model_validate(body)
    except ValidationError as exc:
        errors = {key.split(".")[0]: text for key, text in field_errors(exc).items()}
        return await _physios_page(request, signed, values=body, errors=errors, status=422)
    try:
        async with services_of(request).db.write() as conn:
            await registry.create_physio(conn, data=data, now=utcnow())
    except ApiError as exc:
        errors = dict(exc.fields) or {"name": exc.message}
        return await _physios_page(request, signed, values=body, errors=errors, status=exc.status)
    return see_other("/console/physios?notice=physio_created")


ROUTES = [tasks_page, claim, complete, deliveries_page, physios_page, create_physio]
