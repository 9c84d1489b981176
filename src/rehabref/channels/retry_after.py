"""A provider's Retry-After header as seconds to wait, for the outbox's back-off.

Only the delta-seconds form is read: WhatsApp and Twilio send that, and an HTTP date would
need the clock here. Absurd values are dropped so a provider cannot park a message for days.
"""

from __future__ import annotations

from collections.abc import Mapping

MAX_SECONDS = 86400


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Retry-After in seconds, when the provider gave a number (HTTP dates are ignored)."""
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if 0 <= seconds <= MAX_SECONDS else None
