"""Shape G tracking codes: made, normalised and linked to the public tracking page."""

from __future__ import annotations

import re
import secrets

# 12 symbols from a 31-letter alphabet without look-alikes (0/O, 1/I/L): about 59 bits.
_TRACKING_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
TRACKING_LENGTH = 12
TRACKING_PREFIX = "RR"
_TRACKING = re.compile(rf"^{TRACKING_PREFIX}[{_TRACKING_ALPHABET}]{{{TRACKING_LENGTH}}}$")


def new_tracking_code() -> str:
    body = "".join(secrets.choice(_TRACKING_ALPHABET) for _ in range(TRACKING_LENGTH))
    return TRACKING_PREFIX + body


def normalise_tracking_code(value: str) -> str | None:
    candidate = value.strip().upper()
    return candidate if _TRACKING.match(candidate) else None


def tracking_url(base_url: str, code: str) -> str:
    return f"{base_url}/track/{code}"
