"""``POST /webhooks/twilio/sms`` (a patient's SMS) and ``POST /webhooks/twilio/status``
(delivery statuses of our SMS), both signed ``X-Twilio-Signature`` over the public URL and
the form parameters with the auth token. Wrongly signed: 401. Not configured: 404.

The signed URL is the one Twilio was given: ``REHABREF_PUBLIC_BASE_URL`` plus the path (and
query), so the public base URL must be the address Twilio reaches, as behind a proxy.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from litestar import Response

from rehabref.api_request import ApiRequest
from rehabref.channels.inbound import InboundMessage, StatusUpdate
from rehabref.channels.inbox import receive
from rehabref.channels.signatures import twilio_signature_valid
from rehabref.channels.twilio import parse_inbound_sms, parse_status
from rehabref.clock import utcnow
from rehabref.errors import ApiError
from rehabref.plain_asgi import PUBLIC, PlainRoute
from rehabref.services import Services, services_of

# An empty TwiML answer: Twilio sends no automatic reply of its own.
EMPTY_TWIML = b'<?xml version="1.0" encoding="UTF-8"?><Response></Response>'


async def _signed_form(request: ApiRequest, services: Services) -> list[tuple[str, str]]:
    token = services.settings.twilio_auth_token
    if token is None:
        raise ApiError(404, "not_found", "Twilio is not configured on this server.")
    signature = request.headers.get("x-twilio-signature")
    if not signature:  # refused before the body is even read
        raise ApiError(401, "unauthenticated", "The X-Twilio-Signature header is missing.")
    raw = await request.body()
    try:
        form = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise ApiError(400, "malformed_request", "The body is not form-encoded text.") from None
    query = request.scope.get("query_string", b"").decode("latin-1")
    url = services.settings.base_url + request.scope["path"] + (f"?{query}" if query else "")
    if not twilio_signature_valid(token, url, form, signature):
        raise ApiError(401, "unauthenticated", "The X-Twilio-Signature signature is not valid.")
    return form


async def _store(services: Services, item: InboundMessage | StatusUpdate | None) -> None:
    if item is None:
        return
    async with services.db.write() as conn:
        await receive(
            conn,
            services.box.ring,
            [item],
            channel="sms",
            fallback=services.messages.fallback,
            now=utcnow(),
        )


async def inbound_sms(request: ApiRequest) -> Response[bytes]:
    services = services_of(request)
    form = await _signed_form(request, services)
    await _store(services, parse_inbound_sms(dict(form)))
    return Response(content=EMPTY_TWIML, status_code=200, media_type="text/xml")


async def sms_status(request: ApiRequest) -> Response[bytes]:
    services = services_of(request)
    form = await _signed_form(request, services)
    await _store(services, parse_status(dict(form)))
    return Response(content=b"", status_code=204)


ROUTES = [
    PlainRoute("POST", "/webhooks/twilio/sms", inbound_sms, auth=PUBLIC, in_schema=False),
    PlainRoute("POST", "/webhooks/twilio/status", sms_status, auth=PUBLIC, in_schema=False),
]
