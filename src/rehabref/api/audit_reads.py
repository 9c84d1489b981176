"""The audit record of each read of patient data over the JSON API (``PlainRoute.audit``).

Routes declare their read's action; the router calls ``record_api_read`` after a successful
answer and before sending it, so no patient data leaves unrecorded (a failed record is a 500
instead). Who read is the principal the route's authentication resolved; the referral is the
one the handler found (``name_read_referral``: a Shape G retrieve's path may hold a tracking
code or the partner's own reference, which the append-only trail must not keep), else the
``referral_id`` path parameter (a signed report link's, when the link is the credential); any
other path parameter is the ``subject``. Records of concurrent reads are committed together
(``audit.read_group``), each request waiting for its own record's commit (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from rehabref.api.report_link_auth import ReportLinkHolder
from rehabref.api_request import ApiRequest
from rehabref.audit.trail import entry
from rehabref.plain_asgi import Actor
from rehabref.services import services_of

# Where a handler leaves the id of the referral its answer shows.
_READ_REFERRAL = "audit_read_referral_id"


def name_read_referral(request: ApiRequest, referral_id: str) -> None:
    """The referral this request's answer shows, for its audit record."""
    request.scope["state"][_READ_REFERRAL] = referral_id


async def record_api_read(
    request: ApiRequest, principal: Actor, action: str, params: Mapping[str, str]
) -> None:
    named = request.scope["state"].get(_READ_REFERRAL)
    if isinstance(principal, ReportLinkHolder):
        referral_id: str | None = principal.referral_id
    elif isinstance(named, str):
        referral_id = named
    else:
        referral_id = params.get("referral_id")
    # Path ids other than the referral's are the subject; a token is a credential, never kept.
    subject = next(
        (value for name, value in params.items() if name not in {"referral_id", "token"}), None
    )
    await services_of(request).read_records.record(
        entry(principal.actor, action, referral_id=referral_id, subject=subject),
    )
