"""The referral page's physiotherapist actions: run matching now, assign or reassign.

Both go through ``workflows.assignment`` (the ops API's ``match`` endpoint calls the same
``match_now``), inside one write transaction with their audit record; the forms are
CSRF-guarded like every console form.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, post
from litestar.response import Redirect, Template

from rehabref.clock import utcnow
from rehabref.console.referral_view import render_referral
from rehabref.console.render import Posted, form_text, guarded_form, see_other
from rehabref.errors import ApiError
from rehabref.services import services_of
from rehabref.workflows.assignment import REASON_MAX, assign_physio, match_now


@post("/console/referrals/{referral_id:str}/match", include_in_schema=False, status_code=200)
async def match(request: Request[Any, Any, Any], referral_id: str) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    services = services_of(request)
    try:
        async with services.db.write() as conn:
            physio_id = await match_now(
                conn,
                roster=services.roster,
                ring=services.box.ring,
                referral_id=referral_id,
                actor=posted.signed.operator.actor,
                now=utcnow(),
            )
    except ApiError as exc:
        return await render_referral(
            request, posted.signed, referral_id, error=exc.message, status=exc.status
        )
    notice = "matched" if physio_id is not None else "unmatched"
    return see_other(f"/console/referrals/{referral_id}?notice={notice}")


@post("/console/referrals/{referral_id:str}/assign", include_in_schema=False, status_code=200)
async def assign(request: Request[Any, Any, Any], referral_id: str) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    services = services_of(request)
    form = posted.form
    try:
        reason = form_text(form, "reason", REASON_MAX)
        async with services.db.write() as conn:
            await assign_physio(
                conn,
                ring=services.box.ring,
                referral_id=referral_id,
                physio_id=str(form.get("physio_id") or ""),
                reason=reason,
                actor=posted.signed.operator.actor,
                now=utcnow(),
            )
    except ApiError as exc:
        return await render_referral(
            request, posted.signed, referral_id, error=exc.message, status=exc.status
        )
    return see_other(f"/console/referrals/{referral_id}?notice=assigned")


ROUTES = [match, assign]
