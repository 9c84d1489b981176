"""The app's form fields: a device position (or the device's refusal), pain scores, notes.

The position comes from the browser's Geolocation API (``navigator.geolocation``): latitude,
longitude and its accuracy in metres, or the error it gave (permission denied, position
unavailable, timeout), which is recorded as the reason there is no position. A form with
neither is refused: a check-in is never recorded without one or the other.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from rehabref import e164

REFUSALS = {
    "permission_denied": "the device refused location access",
    "position_unavailable": "the device could not find its position",
    "timeout": "the device took too long to find its position",
    "unsupported": "the browser has no location service",
}
MAX_NOTES = 1000


def normalise_phone(raw: str) -> str | None:
    """E.164, accepting a Nigerian national number (0803 123 4567) too."""
    digits = re.sub(r"[\s\-()]", "", raw)
    if re.fullmatch(r"0[789][01][0-9]{8}", digits):
        digits = "+234" + digits[1:]
    try:
        return e164.check(digits)
    except ValueError:
        return None


@dataclass(frozen=True)
class Place:
    point: tuple[float, float] | None
    accuracy_m: float | None
    refusal: str | None


def _number(form: Any, name: str) -> float | None:
    raw = form.get(name)
    if not isinstance(raw, str) or not raw.strip() or len(raw) > 32:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def check_in_fields(form: Any) -> Place | str:
    """The position or the refusal; a message when the form has neither."""
    lat, lng, accuracy = _number(form, "lat"), _number(form, "lng"), _number(form, "accuracy")
    if lat is not None and lng is not None:
        if not (-90 <= lat <= 90 and -180 <= lng <= 180):
            return "The position is not a place on Earth."
        if accuracy is not None and not 0 <= accuracy <= 100_000:
            accuracy = None
        return Place((lat, lng), accuracy, None)
    refusal = REFUSALS.get(str(form.get("refusal") or ""))
    if refusal is None:
        return "No position was received from the device; try again."
    return Place(None, None, refusal)


@dataclass(frozen=True)
class Completion:
    place: Place
    pain_before: int
    pain_after: int
    notes: str


def _pain(form: Any, name: str) -> int | None:
    raw = str(form.get(name) or "")
    return int(raw) if raw.isascii() and raw.isdigit() and 0 <= int(raw) <= 10 else None


def completion_fields(form: Any) -> Completion | str:
    place = check_in_fields(form)
    if isinstance(place, str):
        return place
    before, after = _pain(form, "pain_before"), _pain(form, "pain_after")
    if before is None or after is None:
        return "Enter the pain scores before and after, 0 to 10."
    notes = str(form.get("notes") or "").strip()
    if not notes or len(notes) > MAX_NOTES:
        return f"Write a short summary of the session (1 to {MAX_NOTES} characters)."
    return Completion(place, before, after, notes)
