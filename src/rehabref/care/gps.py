"""GPS check-in verification: is the check-in point near where the visit should be?

Reference point, best first: the session's scheduled location (radius 1 km), the patient's
area centroid (5 km), the patient's city centroid (25 km). Remote sessions are not
verified (``not_applicable``); an unknown city gives ``unverifiable``.
"""

from __future__ import annotations

import math
from typing import Any

from rehabref.places import area_from_city_field, centroid

RADIUS_KM = {"scheduled_location": 1.0, "area_centroid": 5.0, "city_centroid": 25.0}
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
) -> dict[str, Any]:
    """``{verified, method, distance_km, radius_km}``; verified is None when not checkable."""
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
    return {
        "verified": distance <= radius,
        "method": method,
        "distance_km": distance,
        "radius_km": radius,
    }
