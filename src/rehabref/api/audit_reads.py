"""The audit record of each read of patient data over the JSON API (``PlainRoute.audit``).

Routes declare their read's action; the router calls ``record_read`` after a successful
answer and before sending it, so no patient data leaves unrecorded (a failed record is a 500
instead). Who read is what authentication left in the request state (``actor``); the
referral is the ``referral_id`` path parameter, any other path parameter is the ``subject``.
Records of concurrent reads are committed together (``audit.read_group``), each request
waiting for its own record's commit (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from rehabref.api_request import ApiRequest
from rehabref.audit.trail import entry
from rehabref.principal import ACTOR_STATE, REFERRAL_STATE
from rehabref.services import services_of


async def record_api_read(request: ApiRequest, action: str, params: Mapping[str, str]) -> None:
    actor = request.scope["state"].get(ACTOR_STATE)
    if not isinstance(actor, str):
        raise RuntimeError(f"{action}: an audited route answered without an authenticated actor")
    state = request.scope["state"]
    referral_id = state.get(REFERRAL_STATE) or params.get("referral_id")
    # Path ids other than the referral's are the subject; a token is a credential, never kept.
    subject = next(
        (value for name, value in params.items() if name not in {"referral_id", "token"}), None
    )
    await services_of(request).read_records.record(
        entry(actor, action, referral_id=referral_id, subject=subject)
    )
