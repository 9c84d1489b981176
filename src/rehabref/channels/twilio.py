"""The Twilio SMS provider: sends one text, says what Twilio answered; parses Twilio's
inbound-SMS and status-callback forms.

SMS has no buttons: choices are numbered lines and the patient answers with the number (the
dialogue maps it back). A template is said as its written-out text. ``send`` never raises
for Twilio's or the network's failures, and reasons carry only Twilio's error code.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from rehabref.channels.content import NUMBER_HINT, Channel, Content, Reply, as_reply, numbered
from rehabref.channels.inbound import DeliveryStatus, InboundMessage, StatusUpdate
from rehabref.channels.outcome import Accepted, Outcome, Refused, Retry
from rehabref.channels.retry_after import retry_after

PROVIDER = "twilio"
# Twilio error codes that clear on their own (a 400 that is not about this message).
TEMPORARY: dict[int, str] = {
    20429: "too many requests",
    21611: "sender queue full",
}

PERMANENT: dict[int, str] = {
    21211: "invalid To number",
    21408: "region not enabled",
    21610: "recipient unsubscribed",
    21612: "cannot route to this number",
    21614: "To number is not a mobile number",
    21617: "body too long",
    21635: "To number cannot receive SMS",
}

STATUSES: dict[str, DeliveryStatus] = {
    "queued": "queued",
    "accepted": "queued",
    "scheduled": "queued",
    "sending": "sent",
    "sent": "sent",
    "delivered": "delivered",
    "read": "read",
    "undelivered": "failed",
    "failed": "failed",
}


def sms_body(reply: Reply) -> str:
    """Text, numbered choices with the hint, then the link on its own line."""
    lines = [reply.text]
    if reply.choices:
        lines += [*numbered(reply.choices), NUMBER_HINT]
    if reply.link:
        lines.append(reply.link)
    return "\n".join(lines)


class TwilioSms:
    channel: Channel = "sms"
    name = PROVIDER

    def __init__(
        self,
        api_base: str,
        account_sid: str,
        auth_token: str,
        from_number: str,
        status_callback_url: str | None,
        timeout: float,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self._url = f"{api_base.rstrip('/')}/2010-04-01/Accounts/{account_sid}/Messages.json"
        self._auth = httpx.BasicAuth(account_sid, auth_token)
        self._from = from_number
        self._status_callback = status_callback_url
        self._timeout = timeout
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)

    async def send(self, *, to: str, content: Content, message_id: str) -> Outcome:
        form = {"To": to, "From": self._from, "Body": sms_body(as_reply(content))}
        if self._status_callback:
            form["StatusCallback"] = self._status_callback
        try:
            response = await self._client.post(
                self._url, data=form, auth=self._auth, timeout=self._timeout
            )
        except httpx.TimeoutException:
            return Retry("twilio timeout")
        except httpx.HTTPError as error:
            return Retry(f"twilio network error ({type(error).__name__})")
        try:
            body = response.json()
        except ValueError:
            body = None
        return classify(response.status_code, response.headers, body)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


def classify(status: int, headers: Mapping[str, str], body: Any) -> Outcome:
    """The outcome of one answered send (``body`` is the parsed JSON, or None)."""
    if 200 <= status < 300:
        sid = body.get("sid") if isinstance(body, dict) else None
        if isinstance(sid, str) and sid:
            return Accepted(sid)
        return Retry("twilio answered without a message sid")
    wait = retry_after(headers)
    raw = body.get("code") if isinstance(body, dict) else None
    code = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
    label = f"twilio {code}" if code is not None else f"twilio http {status}"
    if code in TEMPORARY:
        return Retry(f"{label} {TEMPORARY[code]}", wait)
    if status == 401:
        return Retry(f"{label} authentication failed (operator must fix credentials)", wait)
    if status == 429 or status >= 500:
        return Retry(f"{label} {'rate limited' if status == 429 else 'server error'}", wait)
    if code in PERMANENT:
        return Refused(f"{label} {PERMANENT[code]}")
    return Refused(label)


def _field(form: Mapping[str, str], name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) and value else None


def parse_inbound_sms(
    form: Mapping[str, str], *, at: datetime | None = None
) -> InboundMessage | None:
    """An inbound SMS webhook form; None when it lacks MessageSid or From (ignore it).
    Twilio sends no timestamp: ``at`` is when it arrived (now by default)."""
    sid = _field(form, "MessageSid")
    sender = _field(form, "From")
    if sid is None or sender is None:
        return None
    body = form.get("Body")
    text = body if isinstance(body, str) else None
    return InboundMessage(PROVIDER, sid, sender, text, None, at or datetime.now(UTC))


def parse_status(form: Mapping[str, str], *, at: datetime | None = None) -> StatusUpdate | None:
    """A status-callback form; None when it lacks MessageSid or has an unknown status."""
    sid = _field(form, "MessageSid")
    status = STATUSES.get(form.get("MessageStatus") or "")
    if sid is None or status is None:
        return None
    error = _field(form, "ErrorCode")
    return StatusUpdate(PROVIDER, sid, status, error, at or datetime.now(UTC))
