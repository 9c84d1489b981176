"""``POST /webhooks/paystack``: Paystack's events about our card payments.

``x-paystack-signature`` (hex HMAC-SHA512 of the raw body with the secret key) is checked
before the body is parsed: wrong or missing, 401 and nothing recorded. Not configured
(no ``REHABREF_PAYSTACK_SECRET_KEY``): 404. Handled events and their effects:
``workflows/paystack_events.py``; any other event is answered 200 and ignored. A 503 (our
verify call to Paystack failed) makes Paystack deliver the event again later.
"""

from __future__ import annotations

from litestar import Response

from rehabref.api_request import ApiRequest
from rehabref.errors import ApiError
from rehabref.plain_asgi import PUBLIC, PlainRoute
from rehabref.responses import json_response
from rehabref.services import services_of
from rehabref.workflows import paystack_events


async def paystack_webhook(request: ApiRequest) -> Response[bytes]:
    services = services_of(request)
    secret = services.settings.paystack_secret_key
    if secret is None or services.paystack is None:
        raise ApiError(404, "not_found", "Paystack is not configured on this server.")
    signature = request.headers.get("x-paystack-signature")
    if not signature:  # refused before the body is even read
        raise ApiError(401, "unauthenticated", "The x-paystack-signature header is missing.")
    outcome = await paystack_events.receive(
        services.db,
        ring=services.box.ring,
        raw=await request.body(),
        signature=signature,
        secret=secret,
        gateway=services.paystack,
        environment="live",
        provider="paystack",
    )
    return json_response({"received": True, "outcome": outcome})


ROUTES = [PlainRoute("POST", "/webhooks/paystack", paystack_webhook, auth=PUBLIC, in_schema=False)]
