"""Pydantic description of the error body, for the OpenAPI document."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ErrorDetail(BaseModel):
    code: str = Field(examples=["validation_error"])
    message: str
    fields: dict[str, str] = Field(examples=[{"patient.phone": "Use E.164 format."}])
    request_id: str


class ErrorBody(BaseModel):
    error: ErrorDetail
