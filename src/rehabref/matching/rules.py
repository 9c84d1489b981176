"""The matching rules as pure functions: what a referral needs and how a physio scores.

Documented in docs/matching.md; the numbers there are these numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SPECIALIZATIONS: tuple[str, ...] = (
    "musculoskeletal",
    "orthopaedic",
    "sports",
    "neurological",
    "paediatric",
    "geriatric",
    "cardiopulmonary",
    "womens_health",
    "general",
)
MODALITIES: tuple[str, ...] = ("home_visit", "in_clinic", "remote")

# First matching rule wins, so specific conditions come before broad body regions
# ("spinal cord injury" is neurological although "spinal" alone is musculoskeletal).
_KEYWORD_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "neurological",
        (
            "stroke",
            "cva",
            "hemipleg",
            "parkinson",
            "multiple sclerosis",
            "spinal cord",
            "neuropath",
            "bell'?s palsy",
            "head injur",
            "brain injur",
            "guillain",
        ),
    ),
    ("paediatric", ("child", "infant", "p(a)?ediatric", "cerebral palsy", "developmental delay")),
    (
        "cardiopulmonary",
        ("copd", "cardiac", "heart", "pulmonary", "lung", "breathing", "asthma", "post.covid"),
    ),
    (
        "womens_health",
        ("pregnan", "postnatal", "postpartum", "antenatal", "pelvic floor", "incontinence"),
    ),
    (
        "orthopaedic",
        (
            "post.?surg",
            "post.?op",
            "surgery",
            "fracture",
            "replacement",
            "arthroplasty",
            "reconstruction",
            "orif",
            "amputation",
        ),
    ),
    ("sports", ("sport", "acl", "sprain", "ligament", "tendin", "athlete", "hamstring")),
    ("geriatric", ("elderly", "falls?", "frailty", "balance", "geriatric")),
    (
        "musculoskeletal",
        (
            "back",
            "spin",
            "neck",
            "lumbar",
            "cervical",
            r"disc\b",
            "sciatica",
            "shoulder",
            "knee",
            "hip",
            "arthritis",
            "joint",
            "posture",
            "muscle",
        ),
    ),
)
_COMPILED = tuple(
    (name, re.compile(r"\b(?:" + "|".join(words) + ")", re.IGNORECASE))
    for name, words in _KEYWORD_RULES
)
# Close relatives score part of an exact fit.
_RELATED = {
    frozenset({"musculoskeletal", "orthopaedic"}),
    frozenset({"musculoskeletal", "sports"}),
    frozenset({"orthopaedic", "sports"}),
    frozenset({"neurological", "geriatric"}),
}

POINTS_SPECIALIZATION_EXACT = 400
POINTS_SPECIALIZATION_RELATED = 250
POINTS_SPECIALIZATION_GENERAL = 200
POINTS_AREA = 300
POINTS_RATING_PER_STAR = 40  # rating 0-5 -> 0-200
POINTS_CAPACITY = 100  # times the share of weekly capacity still free


def wanted_specialization(text: str | None) -> str | None:
    """The specialization a diagnosis or reason calls for; None when nothing is recognised."""
    if not text:
        return None
    for name, pattern in _COMPILED:
        if pattern.search(text):
            return name
    return None


def acceptable_modalities(care_mode: str | None) -> frozenset[str]:
    """Modalities that satisfy the patient's care mode (a hard requirement)."""
    if care_mode == "remote":
        return frozenset({"remote"})
    if care_mode == "face_to_face":
        return frozenset({"home_visit", "in_clinic"})
    if care_mode in {"home_visit", "in_clinic"}:
        return frozenset({care_mode})
    return frozenset(MODALITIES)  # either, or not stated


def specialization_points(wanted: str | None, offered: list[str]) -> int:
    if wanted is None:
        return POINTS_SPECIALIZATION_GENERAL
    if wanted in offered:
        return POINTS_SPECIALIZATION_EXACT
    if any(frozenset({wanted, item}) in _RELATED for item in offered):
        return POINTS_SPECIALIZATION_RELATED
    if "general" in offered:
        return POINTS_SPECIALIZATION_GENERAL
    return 0


@dataclass(frozen=True)
class Candidate:
    physio_id: str
    license_number: str
    rating: float
    specializations: list[str]
    areas: list[str]  # normalised area keys
    weekly_capacity: int
    assigned_this_week: int

    @property
    def remaining(self) -> int:
        return self.weekly_capacity - self.assigned_this_week


def score(candidate: Candidate, *, wanted: str | None, area: str | None) -> int:
    points = specialization_points(wanted, candidate.specializations)
    if area is not None and area in candidate.areas:
        points += POINTS_AREA
    points += round(candidate.rating * POINTS_RATING_PER_STAR)
    if candidate.weekly_capacity > 0:
        points += POINTS_CAPACITY * max(candidate.remaining, 0) // candidate.weekly_capacity
    return points


def rank(candidates: list[Candidate], *, wanted: str | None, area: str | None) -> list[Candidate]:
    """Candidates with free capacity, best first; ties broken by rating, free slots, license."""
    open_ = [c for c in candidates if c.remaining > 0]
    return sorted(
        open_,
        key=lambda c: (
            -score(c, wanted=wanted, area=area),
            -c.rating,
            -c.remaining,
            c.license_number,
        ),
    )
