"""Request models for sessions and assessments, and the ops session and assessment answers
(the partner session list and outcome report: ``responses.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, StringConstraints

from rehabref import fields
from rehabref.clock import utcnow

Modality = Literal["home_visit", "in_clinic", "remote"]
SessionStatus = Literal["scheduled", "in_progress", "completed", "cancelled"]
Latitude = Annotated[float, Field(ge=-90, le=90, allow_inf_nan=False)]
Longitude = Annotated[float, Field(ge=-180, le=180, allow_inf_nan=False)]
PainScore = Annotated[int, Field(ge=0, le=10, strict=True)]


def _bookable(value: str) -> str:
    fields.bookable(fields.utc_timestamp_any(value), now=utcnow())
    return value


BookableUtc = Annotated[str, StringConstraints(max_length=40), AfterValidator(_bookable)]

_strict = ConfigDict(extra="forbid", str_strip_whitespace=True)


def parse_time(value: str) -> datetime:
    return fields.utc_timestamp_any(value)


class Location(BaseModel):
    model_config = _strict
    lat: Latitude
    lng: Longitude


class SessionSchedule(BaseModel):
    model_config = _strict

    scheduled_at: BookableUtc = Field(description="ISO 8601 UTC, at most two years ahead.")
    modality: Modality
    session_type: fields.text(80) = "treatment"  # type: ignore[valid-type]
    physio_id: str | None = Field(
        default=None,
        max_length=40,
        description="Defaults to the referral's assigned physiotherapist.",
    )
    location: Location | None = Field(
        default=None, description="Visit address coordinates for GPS check-in verification."
    )


class SessionStart(BaseModel):
    model_config = _strict

    check_in_at: fields.UtcTimestamp
    check_in_lat: Latitude | None = Field(default=None, description="Required unless remote.")
    check_in_lng: Longitude | None = Field(default=None, description="Required unless remote.")


class SessionComplete(BaseModel):
    model_config = _strict

    pain_before: PainScore
    pain_after: PainScore
    notes_summary: fields.text(1000)  # type: ignore[valid-type]
    check_out_at: fields.UtcTimestamp
    check_out_lat: Latitude | None = Field(default=None, description="Required unless remote.")
    check_out_lng: Longitude | None = Field(default=None, description="Required unless remote.")


class SessionCancel(BaseModel):
    model_config = _strict

    reason: fields.text(500)  # type: ignore[valid-type]


class GpsCheck(BaseModel):
    verified: bool | None
    method: Literal[
        "scheduled_location", "area_centroid", "city_centroid", "not_applicable", "unverifiable"
    ]
    distance_km: float | None
    radius_km: float | None


class OpsSession(BaseModel):
    session_id: str
    referral_id: str
    session_number: int
    session_type: str
    status: SessionStatus
    modality: Modality
    physio_id: str
    provider_name: str
    scheduled_at: str
    location: Location | None
    check_in_at: str | None
    check_out_at: str | None
    completed_at: str | None
    duration_minutes: float | None
    pain_score_before: int | None
    pain_score_after: int | None
    notes_summary: str | None
    gps_check_in: GpsCheck | None
    invoice_reference: str | None
    cancel_reason: str | None


class OpsSessionList(BaseModel):
    data: list[OpsSession]


class PsfsTask(BaseModel):
    model_config = _strict
    activity: fields.text(100)  # type: ignore[valid-type]
    score: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)]


class _AssessmentBase(BaseModel):
    model_config = _strict
    recorded_at: fields.UtcTimestamp | None = Field(default=None, description="Default: now.")
    session_id: str | None = Field(default=None, max_length=40)


class PsfsAssessment(_AssessmentBase):
    """Patient-Specific Functional Scale: three daily tasks, 0 (unable) to 10 (as before)."""

    scale: Literal["psfs"]
    tasks: list[PsfsTask] = Field(min_length=3, max_length=3)


class DisabilityIndexAssessment(_AssessmentBase):
    """Neck Disability Index or Oswestry: raw total of ten sections scored 0-5 (0-50)."""

    scale: Literal["ndi", "odi"]
    raw_score: Annotated[int, Field(ge=0, le=50, strict=True)]


class NprsAssessment(_AssessmentBase):
    """Numeric Pain Rating Scale, whole numbers 0-10."""

    scale: Literal["nprs"]
    score: PainScore


class VasAssessment(_AssessmentBase):
    """Visual Analogue Scale, 0-10 (the 100 mm line divided by 10)."""

    scale: Literal["vas"]
    score: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)]


class RomAssessment(_AssessmentBase):
    """Active range of motion by goniometry, degrees."""

    scale: Literal["rom"]
    joint: fields.text(40)  # type: ignore[valid-type]
    movement: fields.text(40)  # type: ignore[valid-type]
    side: Literal["left", "right", "bilateral", "not_applicable"] = "not_applicable"
    degrees: Annotated[float, Field(ge=0, le=360, allow_inf_nan=False)]


AssessmentCreate = Annotated[
    PsfsAssessment | DisabilityIndexAssessment | NprsAssessment | VasAssessment | RomAssessment,
    Field(discriminator="scale"),
]


class AssessmentBody(RootModel[AssessmentCreate]):
    """One assessment; ``scale`` selects the fields (psfs, ndi, odi, nprs, vas, rom)."""


class AssessmentRecord(BaseModel):
    assessment_id: str
    referral_id: str
    session_id: str | None
    scale: Literal["psfs", "ndi", "odi", "nprs", "vas", "rom"]
    score: float = Field(
        description="PSFS mean 0-10, NDI/ODI percent 0-100, NPRS/VAS 0-10, ROM degrees."
    )
    detail: dict[str, Any]
    recorded_at: str


class AssessmentList(BaseModel):
    data: list[AssessmentRecord]
