"""Response shapes of the audit trail listing (documentation; the endpoint builds dicts)."""

from __future__ import annotations

from pydantic import BaseModel


class AuditEventRecord(BaseModel):
    id: str
    chain: int
    seq: int
    at: str
    actor_kind: str
    actor_id: str
    action: str
    referral_id: str | None
    subject: str | None
    request_id: str | None
    hash: str


class AuditEventList(BaseModel):
    data: list[AuditEventRecord]
    has_more: bool
    next_cursor: str | None
