"""Cities and areas we serve: name normalisation and approximate centroids (WGS 84).

Used by matching (city is required, area is a bonus) and by GPS check-in verification of
sessions (``care/gps.py``). Centroids are approximate district centres, good to a few
hundred metres, which is all a 5 km radius needs.
"""

from __future__ import annotations

import re

LatLng = tuple[float, float]

CITY_CENTROIDS: dict[str, LatLng] = {
    "lagos": (6.5244, 3.3792),
    "abuja": (9.0765, 7.3986),
    "port harcourt": (4.8156, 7.0498),
    "ibadan": (7.3775, 3.9470),
    "kano": (12.0022, 8.5920),
    "enugu": (6.4584, 7.5464),
    "benin city": (6.3350, 5.6037),
    "kaduna": (10.5105, 7.4165),
    "abeokuta": (7.1475, 3.3619),
}

AREA_CENTROIDS: dict[str, dict[str, LatLng]] = {
    "lagos": {
        "ikeja": (6.6018, 3.3515),
        "lekki": (6.4698, 3.5852),
        "victoria island": (6.4281, 3.4219),
        "ikoyi": (6.4549, 3.4346),
        "surulere": (6.4996, 3.3569),
        "yaba": (6.5095, 3.3711),
        "ajah": (6.4667, 3.5667),
        "ikorodu": (6.6194, 3.5105),
        "festac": (6.4667, 3.2833),
        "gbagada": (6.5530, 3.3870),
        "maryland": (6.5710, 3.3670),
        "apapa": (6.4489, 3.3590),
        "magodo": (6.6210, 3.3840),
        "oshodi": (6.5550, 3.3440),
        "agege": (6.6180, 3.3209),
    },
    "abuja": {
        "garki": (9.0333, 7.4833),
        "wuse": (9.0800, 7.4700),
        "maitama": (9.0882, 7.4934),
        "asokoro": (9.0437, 7.5239),
        "gwarinpa": (9.1108, 7.4044),
        "kubwa": (9.1558, 7.3226),
        "jabi": (9.0700, 7.4200),
        "lugbe": (8.9800, 7.3700),
        "utako": (9.0700, 7.4400),
        "lokogoma": (8.9900, 7.4600),
    },
    "port harcourt": {
        "gra": (4.8200, 7.0100),
        "rumuokoro": (4.8660, 6.9980),
        "trans amadi": (4.8150, 7.0400),
        "d line": (4.8080, 7.0050),
        "rumuola": (4.8340, 7.0000),
        "eliozu": (4.8700, 7.0300),
        "choba": (4.8960, 6.9240),
        "woji": (4.8230, 7.0550),
    },
    "ibadan": {
        "bodija": (7.4300, 3.9100),
        "dugbe": (7.3880, 3.8890),
        "challenge": (7.3500, 3.8800),
        "ring road": (7.3650, 3.8650),
        "agodi": (7.4000, 3.9200),
        "mokola": (7.4050, 3.8960),
        "oluyole": (7.3600, 3.8600),
        "akobo": (7.4400, 3.9500),
        "iwo road": (7.4090, 3.9340),
        "samonda": (7.4350, 3.8950),
    },
}

CITY_ALIASES: dict[str, str] = {
    "ph": "port harcourt",
    "portharcourt": "port harcourt",
    "port-harcourt": "port harcourt",
    "fct": "abuja",
    "abuja fct": "abuja",
    "fct abuja": "abuja",
    "federal capital territory": "abuja",
    "benin": "benin city",
    "lagos island": "lagos",
    "lagos mainland": "lagos",
}

_AREA_ALIASES: dict[str, str] = {"vi": "victoria island", "trans-amadi": "trans amadi"}
_SPACES = re.compile(r"[\s\-_.,]+")
_SUFFIX = re.compile(r"\s+(state|city|metropolis)$")

# An area name given as the city ("Ikeja") resolves to its city.
_AREA_TO_CITY: dict[str, str] = {
    area: city for city, areas in AREA_CENTROIDS.items() for area in areas
}


def normalise(value: str) -> str:
    return _SPACES.sub(" ", value.strip().lower()).strip()


def city_key(city: str) -> str:
    """Lower case, punctuation folded, aliases resolved (``Port-Harcourt`` -> ``port harcourt``)."""
    key = normalise(city)
    if key in CITY_ALIASES:
        return CITY_ALIASES[key]
    if key in CITY_CENTROIDS:
        return key
    stripped = _SUFFIX.sub("", key)
    if stripped in CITY_CENTROIDS or stripped in CITY_ALIASES:
        return CITY_ALIASES.get(stripped, stripped)
    return _AREA_TO_CITY.get(key, key)


def area_key(area: str) -> str:
    key = normalise(area)
    return _AREA_ALIASES.get(key, key)


def area_from_city_field(city: str) -> str | None:
    """When a patient wrote an area in the city field (``Ikeja``), that area."""
    key = normalise(city)
    return key if key in _AREA_TO_CITY else None


def centroid(city: str, area: str | None) -> tuple[LatLng, str] | None:
    """The best known reference point: the area's centre, else the city's; with its kind."""
    key = city_key(city)
    if area:
        point = AREA_CENTROIDS.get(key, {}).get(area_key(area))
        if point is not None:
            return point, "area_centroid"
    point = CITY_CENTROIDS.get(key)
    return (point, "city_centroid") if point is not None else None
