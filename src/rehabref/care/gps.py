"""GPS check-in verification: is the check-in point near where the visit should be?

Reference point, best first: the session's scheduled location (radius 1 km), the patient's
area centroid (5 km), the patient's city centroid (25 km). Remote sessions are not
verified (``not_applicable``); an unknown city gives ``unverifiable``.

The tolerance is the radius plus the device's reported accuracy (at most
``MAX_ACCURACY_CREDIT_KM``): a phone that says "within 300 m" is given those 300 m, but a
fix vaguer than that cap cannot stretch a 1 km radius into a town. A check-in the device
refused (location permission denied, no fix) is ``verified: false`` with method
``location_refused``: recorded as unverified, never given a made-up point.
"""

from __future__ import annotations

import math
from typing import Any

from rehabref.places import area_from_city_field, centroid

RADIUS_KM = {"scheduled_location": 1.0, "area_centroid": 5.0, "city_centroid": 25.0}
MAX_ACCURACY_CREDIT_KM = 0.5
EARTH_RADIUS_KM = 6371.0088


def distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle (haversine) distance between two (lat, lng) points."""
    lat1, lng1 = map(math.radians, a)
    lat2, lng2 = map(math.radians, b)
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    )
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def verify_check_in(
    *,
    modality: str,
    check_in: tuple[float, float] | None,
    scheduled_location: tuple[float, float] | None,
    city: str,
    area: str | None,
    accuracy_m: float | None = None,
    refused: bool = False,
) -> dict[str, Any]:
    """``{verified, method, distance_km, radius_km}``; verified is None when not checkable."""
    if modality != "remote" and check_in is None and refused:
        return {
            "verified": False,
            "method": "location_refused",
            "distance_km": None,
            "radius_km": None,
        }
    if modality == "remote" or check_in is None:
        return {
            "verified": None,
            "method": "not_applicable",
            "distance_km": None,
            "radius_km": None,
        }
    if scheduled_location is not None:
        reference, method = scheduled_location, "scheduled_location"
    else:
        found = centroid(city, area or area_from_city_field(city))
        if found is None:
            return {
                "verified": None,
                "method": "unverifiable",
                "distance_km": None,
                "radius_km": None,
            }
        reference, method = found
    distance = round(distance_km(check_in, reference), 2)
    radius = RADIUS_KM[method]
    credit = min((accuracy_m or 0.0) / 1000, MAX_ACCURACY_CREDIT_KM)
    return {
        "verified": distance <= radius + credit,
        "method": method,
        "distance_km": distance,
        "radius_km": radius,
    }
