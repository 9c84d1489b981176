"""Where the sandbox webhook trigger may send, and how often.

Threat: the trigger sends a signed request to a URL the caller names. Open to any public
URL at the API's rate (100/s), it made rehabref a request cannon against third parties and
filled the shared delivery queue ahead of everyone else's webhooks. So a sandbox key may
trigger at most ``REHABREF_SANDBOX_TRIGGER_RATE_LIMIT`` times (10/minute by default), and
only to one of its partner's registered, enabled test endpoints (the exact URL) or to an
origin the operator allows (``REHABREF_SANDBOX_TRIGGER_ORIGINS``).
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit


def origin_of(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port or None) of an http(s) URL; None when it has none."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return parts.scheme.lower(), parts.hostname.lower(), port


def target_allowed(url: str, *, registered: Iterable[str], origins: Iterable[str]) -> bool:
    """A registered endpoint URL exactly, or a URL on an allowed origin (an origin written
    without a port allows every port of that host)."""
    if url in set(registered):
        return True
    target = origin_of(url)
    if target is None:
        return False
    for allowed in origins:
        entry = origin_of(allowed)
        if entry is None:
            continue
        scheme, host, port = entry
        if (scheme, host) == target[:2] and (port is None or port == target[2]):
            return True
    return False
