"""The public tracking page ``/track/<tracking_code>``.

Shows the patient's first name and the referral's stage, nothing else: no surname, contact
details, diagnosis, physiotherapist or session content. Unknown or malformed codes get the
same safe 404 page. Pages are not cached or indexed and send no referrer. Views count against
the per-IP page limit (REHABREF_PAGE_RATE_LIMIT_IP), so codes cannot be guessed at speed.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Template

from rehabref.pages.assistant import PRIVATE_PAGE_HEADERS, message_page, over_page_limit
from rehabref.referrals import store
from rehabref.referrals.records_g import current_status, progress_of
from rehabref.referrals.sealing import FIRST_NAME, open_text
from rehabref.referrals.tracking import normalise_tracking_code
from rehabref.referrals.withdrawal_links import withdrawal_url
from rehabref.scope import PartnerScope
from rehabref.services import services_of

STAGES: tuple[tuple[str, str], ...] = (
    ("pending_intake", "Referral received: we have sent you a message to get started"),
    ("intake_completed", "Your details are in: we are finding your physiotherapist"),
    ("matched", "Physiotherapist assigned"),
    ("in_treatment", "Treatment in progress"),
    ("completed", "Treatment completed"),
)
_ORDER = [name for name, _ in STAGES]


def steps_for(status: str) -> list[dict[str, str]]:
    position = _ORDER.index(status) if status in _ORDER else 0
    steps = []
    for index, (_name, label) in enumerate(STAGES):
        if index < position or (index == position and status == "completed"):
            state = "done"
        elif index == position:
            state = "current"
        else:
            state = "todo"
        steps.append({"label": label, "state": state})
    return steps


@get("/track/{code:str}", include_in_schema=False)
async def tracking_page(request: Request[Any, Any, Any], code: str) -> Template:
    limited = await over_page_limit(request)
    if limited is not None:
        return limited
    normalised = normalise_tracking_code(code)
    if normalised is None:
        return _unknown()
    services = services_of(request)
    async with services.db.read() as conn:
        row = await store.unscoped_by_tracking_code(conn, tracking_code=normalised)
        if row is None:
            return _unknown()
        # Everything read after the code stays inside the data of the referral's partner.
        progress = await progress_of(conn, PartnerScope.owning(row), [row])
        status = current_status(row, progress[row.id])
    labels = dict(STAGES)
    return Template(
        template_name="tracking.html",
        context={
            "first_name": open_text(services.box.ring, FIRST_NAME, row.patient_first_name),
            "code": normalised,
            "cancelled": status == "cancelled",
            "stage_label": labels.get(status, ""),
            "steps": steps_for(status),
            "withdraw_url": None
            if status == "cancelled"
            else withdrawal_url(services.box, services.settings.base_url, row.id),
        },
        headers=PRIVATE_PAGE_HEADERS,
    )


def _unknown() -> Template:
    return message_page(
        "Tracking code not recognised",
        "Check the link you were sent. If it still does not work, ask your care team.",
        404,
    )


ROUTES = [tracking_page]
