"""``Strict-Transport-Security`` for a service published over https.

Threat: a patient's first visit to a link typed or pasted as ``http://`` (or downgraded by a
hostile network on the way) can be read or rewritten before any redirect to https. With the
header, a browser that has once seen the service over https uses https only, for a year. It
is sent only when ``REHABREF_PUBLIC_BASE_URL`` is https: an http deployment (development,
tests) must not pin browsers to an https that does not exist. Subdomains are not included:
they may be other services of the operator, not all on https.
"""

from __future__ import annotations

from urllib.parse import urlsplit

MAX_AGE_SECONDS = 365 * 24 * 3600
HEADER = (b"strict-transport-security", f"max-age={MAX_AGE_SECONDS}".encode())


def response_headers(public_base_url: str) -> tuple[tuple[bytes, bytes], ...]:
    """The headers every response carries for this public base URL (ASGI form)."""
    if urlsplit(public_base_url).scheme.lower() == "https":
        return (HEADER,)
    return ()
