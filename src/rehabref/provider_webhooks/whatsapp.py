"""``GET /webhooks/whatsapp`` (Meta's subscription handshake) and ``POST /webhooks/whatsapp``
(messages and statuses, signed ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body
with the app secret>``). Unsigned or wrongly signed: 401, nothing read. Not configured: 404.
"""

from __future__ import annotations

import json

from litestar import Response

from rehabref.api_request import ApiRequest
from rehabref.channels.inbox import receive
from rehabref.channels.signatures import meta_signature_valid, whatsapp_handshake
from rehabref.channels.whatsapp import parse_webhook
from rehabref.clock import utcnow
from rehabref.errors import ApiError
from rehabref.plain_asgi import PUBLIC, PlainRoute
from rehabref.responses import json_response
from rehabref.services import services_of


def _not_configured() -> ApiError:
    return ApiError(404, "not_found", "WhatsApp is not configured on this server.")


async def verify_subscription(request: ApiRequest) -> Response[bytes]:
    settings = services_of(request).settings
    if settings.whatsapp_verify_token is None:
        raise _not_configured()
    challenge = whatsapp_handshake(request.query_params, settings.whatsapp_verify_token)
    if challenge is None:
        raise ApiError(403, "forbidden", "The verify token does not match.")
    return Response(content=challenge.encode(), status_code=200, media_type="text/plain")


async def receive_events(request: ApiRequest) -> Response[bytes]:
    services = services_of(request)
    secret = services.settings.whatsapp_app_secret
    if secret is None:
        raise _not_configured()
    raw = await request.body()
    if not meta_signature_valid(secret, raw, request.headers.get("x-hub-signature-256")):
        raise ApiError(401, "unauthenticated", "The X-Hub-Signature-256 signature is not valid.")
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ApiError(400, "malformed_request", "The body is not JSON.") from None
    number = services.settings.whatsapp_phone_number_id
    items = parse_webhook(payload, phone_number_id=number) if isinstance(payload, dict) else []
    async with services.db.write() as conn:
        new = await receive(
            conn,
            services.box.ring,
            items,
            channel="whatsapp",
            fallback=services.messages.fallback,
            now=utcnow(),
        )
    return json_response({"received": new})


ROUTES = [
    PlainRoute("GET", "/webhooks/whatsapp", verify_subscription, auth=PUBLIC, in_schema=False),
    PlainRoute("POST", "/webhooks/whatsapp", receive_events, auth=PUBLIC, in_schema=False),
]
