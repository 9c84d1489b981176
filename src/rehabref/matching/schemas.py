"""Request and response models of the physiotherapist registry (ops API and CSV import)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from rehabref import fields

Specialization = Literal[
    "musculoskeletal",
    "orthopaedic",
    "sports",
    "neurological",
    "paediatric",
    "geriatric",
    "cardiopulmonary",
    "womens_health",
    "general",
]
Modality = Literal["home_visit", "in_clinic", "remote"]
LicenseNumber = Annotated[
    str,
    Field(min_length=3, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9/\-.]*$"),
]
Rating = Annotated[float, Field(ge=0, le=5, allow_inf_nan=False)]
Capacity = Annotated[int, Field(ge=0, le=200, strict=True)]
AreaName = fields.text(100)

_strict = ConfigDict(extra="forbid", str_strip_whitespace=True)


def _unique(values: list[str]) -> list[str]:
    seen: list[str] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen


class PhysioCreate(BaseModel):
    model_config = _strict

    name: fields.text(200)  # type: ignore[valid-type]
    license_number: LicenseNumber
    specializations: list[Specialization] = Field(
        min_length=1, max_length=5, description="The first is the primary specialization."
    )
    rating: Rating
    phone: fields.Phone
    city: fields.text(100)  # type: ignore[valid-type]
    areas: list[AreaName] = Field(default_factory=list, max_length=30)  # type: ignore[valid-type]
    modalities: list[Modality] = Field(min_length=1, max_length=3)
    weekly_capacity: Capacity
    active: StrictBool = True

    @field_validator("specializations", "modalities", "areas")
    @classmethod
    def _dedupe(cls, value: list[str]) -> list[str]:
        return _unique(value)


class PhysioUpdate(BaseModel):
    """PATCH body: only the fields sent change; the license number is the identity."""

    model_config = _strict

    name: fields.text(200) | None = None  # type: ignore[valid-type]
    specializations: list[Specialization] | None = Field(default=None, min_length=1, max_length=5)
    rating: Rating | None = None
    phone: fields.Phone | None = None
    city: fields.text(100) | None = None  # type: ignore[valid-type]
    areas: list[AreaName] | None = Field(default=None, max_length=30)  # type: ignore[valid-type]
    modalities: list[Modality] | None = Field(default=None, min_length=1, max_length=3)
    weekly_capacity: Capacity | None = None
    active: StrictBool | None = None

    @field_validator("specializations", "modalities", "areas")
    @classmethod
    def _dedupe(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _unique(value)

    @model_validator(mode="after")
    def _something(self) -> PhysioUpdate:
        if not self.model_fields_set:
            raise ValueError("Send at least one field to change.")
        for name in self.model_fields_set:
            if getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null.")
        return self


class PhysioRecord(BaseModel):
    physio_id: str
    name: str
    license_number: str
    specialization: Specialization = Field(description="Primary specialization.")
    specializations: list[Specialization]
    rating: float
    phone: str
    city: str
    areas: list[str]
    modalities: list[Modality]
    weekly_capacity: int
    active: bool
    created_at: str
    updated_at: str


class PhysioList(BaseModel):
    data: list[PhysioRecord]
    has_more: bool
    next_cursor: str | None


class MatchResult(BaseModel):
    referral_id: str
    matched: bool
    physio_id: str | None
    matched_at: str | None
