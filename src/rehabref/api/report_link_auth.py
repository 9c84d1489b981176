"""The signed report link's credential (``/reports/pdf/{token}``): its expiring token, checked
by the router's authentication step (``REPORT_LINK``) like an API key, after a per-IP limit
(rendering a PDF costs real CPU)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rehabref.care.report_links import read_pdf_token
from rehabref.errors import ApiError
from rehabref.pages.ip_limits import client_ip, limits_of
from rehabref.plain_asgi import Authentication, PlainRequest, RouteAuth
from rehabref.services import services_of


@dataclass(frozen=True)
class ReportLinkHolder:
    """Whoever holds a valid signed link (no account): the audit trail names its referral."""

    referral_id: str

    @property
    def actor(self) -> str:
        return "report_link:signed"


REPORT_LINK: RouteAuth[ReportLinkHolder] = RouteAuth("signed report link")


async def _report_link(request: PlainRequest, params: Mapping[str, str]) -> ReportLinkHolder:
    limits = limits_of(request)
    wait = await limits.blocked(limits.pdf_per_ip, "pdf", client_ip(request))
    if wait is not None:
        raise ApiError(
            429,
            "rate_limited",
            f"Too many report downloads; retry after {wait} seconds.",
            headers={"Retry-After": str(wait)},
        )
    referral_id = read_pdf_token(services_of(request).box, params["token"])
    if referral_id is None:
        raise ApiError(403, "forbidden", "This report link is invalid or has expired.")
    return ReportLinkHolder(referral_id)


AUTHENTICATIONS = (Authentication(REPORT_LINK, _report_link),)
