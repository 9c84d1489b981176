"""What a WhatsApp Cloud API answer means for the outbox: accepted, retry later, or refused.

Pure: status, headers and body in, ``Outcome`` out. The table of Graph error codes decides
retry vs refuse; a code not in it follows its HTTP status (5xx and 429 retry, other 4xx
refuse). The reason is our own words for the code, never Meta's message text, which can
quote the recipient's number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rehabref.channels.outcome import Accepted, Outcome, Refused, Retry
from rehabref.channels.retry_after import retry_after

# Graph codes that clear on their own: throttling, Meta's own outages.
TEMPORARY: dict[int, str] = {
    1: "api unknown error",
    2: "api service temporarily unavailable",
    4: "application rate limit",
    80007: "business account rate limit",
    130429: "throughput rate limit",
    131000: "something went wrong",
    131016: "service unavailable",
    131048: "spam rate limit",
    131056: "pair rate limit",
    133004: "server temporarily unavailable",
}

# Graph codes that an operator can fix (a new token, a permission); retrying is right.
OPERATOR: dict[int, str] = {
    190: "access token invalid or expired (operator must renew it)",
    10: "permission denied (operator must fix the app's permissions)",
    200: "permission denied (operator must fix the app's permissions)",
}

# Graph codes that will fail again for this message: fall back to another channel.
PERMANENT: dict[int, str] = {
    100: "invalid parameter",
    131008: "required parameter missing",
    131009: "parameter value invalid",
    131021: "recipient is the sender",
    131026: "message undeliverable",
    131030: "recipient not in allowed list",
    131031: "business account locked",
    131042: "payment issue",
    131047: "outside the 24h customer service window",
    131051: "unsupported message type",
    131052: "media download error",
    131053: "media upload error",
    132000: "template parameter count mismatch",
    132001: "template does not exist",
    132005: "template hydrated text too long",
    132007: "template format policy violated",
    132012: "template parameter format mismatch",
    132015: "template paused",
    132016: "template disabled",
    368: "temporarily blocked for policy violations",
}

TEMPLATE_CODES = range(132000, 133000)


def graph_error_code(body: Any) -> int | None:
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def classify(status: int, headers: Mapping[str, str], body: Any) -> Outcome:
    """The outcome of one answered send (``body`` is the parsed JSON, or None)."""
    if 200 <= status < 300:
        return _accepted(body)
    wait = retry_after(headers)
    code = graph_error_code(body)
    label = f"whatsapp {code}" if code is not None else f"whatsapp http {status}"
    if code in TEMPORARY:
        return Retry(f"{label} {TEMPORARY[code]}", wait)
    if status == 401 or code in OPERATOR:
        words = OPERATOR.get(code or 190, OPERATOR[190])
        return Retry(f"{label} {words}", wait)
    if status == 429:
        return Retry(f"{label} rate limited", wait)
    if status >= 500:
        return Retry(f"{label} server error", wait)
    if code in PERMANENT:
        return Refused(f"{label} {PERMANENT[code]}")
    if code is not None and code in TEMPLATE_CODES:
        return Refused(f"{label} template error")
    return Refused(f"{label} refused")


def _accepted(body: Any) -> Outcome:
    messages = body.get("messages") if isinstance(body, dict) else None
    first = messages[0] if isinstance(messages, list) and messages else None
    wamid = first.get("id") if isinstance(first, dict) else None
    if isinstance(wamid, str) and wamid:
        return Accepted(wamid)
    # Not a documented answer: whether it was sent is unknown, and a retry at worst repeats.
    return Retry("whatsapp answered without a message id")
