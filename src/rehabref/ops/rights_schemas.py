"""Request and response models of the patients'-rights operations (ops API)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from rehabref import fields

_strict = ConfigDict(extra="forbid", str_strip_whitespace=True)


class DataSubjectRequestIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={"examples": [{"kind": "export", "phone": "+2348031234567"}]},
    )

    kind: Literal["export", "erasure"] = Field(
        description="export: everything held about the person (JSON and a PDF); erasure: "
        "scrub their personal and clinical data, keeping ids, dates, statuses and amounts."
    )
    phone: Annotated[str, StringConstraints(max_length=32)] | None = Field(
        None, description="E.164, e.g. +2348031234567."
    )
    email: Annotated[str, StringConstraints(max_length=254)] | None = None


class DataSubjectRequestOut(BaseModel):
    request_id: str
    kind: Literal["export", "erasure"]
    created_at: str
    result: dict[str, int] = Field(description="Rows found (export) or scrubbed (erasure).")
    export: dict[str, Any] | None = Field(
        description="The export document (kind export), else null."
    )
    pdf_base64: str | None = Field(
        description="The export as a PDF for the patient, base64 (kind export), else null."
    )


class ConsentWithdrawalIn(BaseModel):
    model_config = _strict

    note: fields.text(1000) = Field(  # type: ignore[valid-type]
        description="What the patient said on the call (kept with the transition; erased "
        "with the patient's data)."
    )
