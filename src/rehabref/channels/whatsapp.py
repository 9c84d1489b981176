"""The WhatsApp Cloud API provider: sends one message, says what Meta answered.

Rendering (``whatsapp_render``) and the meaning of answers (``whatsapp_errors``) are pure
modules; this one only does the HTTP call. ``send`` never raises for Meta's or the
network's failures: the outbox worker decides from the ``Outcome``. Nothing here logs the
recipient, the text or the token.
"""

from __future__ import annotations

from typing import Any

import httpx

from rehabref.channels.content import Channel, Content
from rehabref.channels.outcome import Outcome, Retry
from rehabref.channels.whatsapp_errors import classify
from rehabref.channels.whatsapp_render import render
from rehabref.channels.whatsapp_webhook import parse_webhook

__all__ = ["WhatsAppCloud", "parse_webhook"]

# Meta echoes this back in status webhooks (at most 512 characters).
CALLBACK_DATA_MAX = 512


class WhatsAppCloud:
    channel: Channel = "whatsapp"
    name = "whatsapp"

    def __init__(
        self,
        api_base: str,
        access_token: str,
        phone_number_id: str,
        timeout: float,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self._url = f"{api_base.rstrip('/')}/{phone_number_id}/messages"
        self._headers = {"Authorization": f"Bearer {access_token}"}
        self._timeout = timeout
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)

    async def send(self, *, to: str, content: Content, message_id: str) -> Outcome:
        body = render(to.removeprefix("+"), content)
        if len(message_id) <= CALLBACK_DATA_MAX:
            body["biz_opaque_callback_data"] = message_id
        try:
            response = await self._client.post(
                self._url, json=body, headers=self._headers, timeout=self._timeout
            )
        except httpx.TimeoutException:
            return Retry("whatsapp timeout")
        except httpx.HTTPError as error:
            return Retry(f"whatsapp network error ({type(error).__name__})")
        return classify(response.status_code, response.headers, _json(response))

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
