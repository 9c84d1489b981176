"""Importing one HMO's member registry from CSV: validate every row, upsert by policy number.

Columns (header row required, order free): ``policy_number, name, phone, plan_tier,
policy_status, expiry_date, annual_session_limit, sessions_used, co_pay_kobo,
post_surgical_covered, pre_auth_required`` and optionally ``physiotherapy_covered``
(default true). Booleans: true/false, yes/no, 1/0. Dates: YYYY-MM-DD. Phones: E.164.
A re-import replaces the member's facts, including ``sessions_used`` (the HMO's own count is
authoritative; sessions completed here between imports are added to it).
Rows are written in batches, each batch in one transaction; names and phones are stored
sealed (``member_sealing``).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from sqlalchemy import insert, select, update

from rehabref import fields
from rehabref.clock import utcnow
from rehabref.crypto import KeyRing
from rehabref.csv_imports import CsvFormatError, ImportReport
from rehabref.db import Database, table
from rehabref.eligibility.member_sealing import stored_member
from rehabref.ids import new_id
from rehabref.request_body import field_errors
from rehabref.tables.eligibility import HmoMember

_members = table(HmoMember)
BATCH = 500
REQUIRED = (
    "policy_number",
    "name",
    "phone",
    "plan_tier",
    "policy_status",
    "expiry_date",
    "annual_session_limit",
    "sessions_used",
    "co_pay_kobo",
    "post_surgical_covered",
    "pre_auth_required",
)
_TRUE = {"true", "yes", "1", "y"}
_FALSE = {"false", "no", "0", "n"}


def _boolean(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError("Use true or false.")
    return value


Flag = Annotated[bool, BeforeValidator(_boolean)]
Count = Annotated[int, Field(ge=0, le=1000)]


class MemberRow(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True, extra="ignore")

    policy_number: fields.text(64)  # type: ignore[valid-type]
    name: fields.text(200)  # type: ignore[valid-type]
    phone: fields.Phone
    plan_tier: fields.text(40)  # type: ignore[valid-type]
    policy_status: Literal["active", "inactive", "suspended"]
    expiry_date: date
    annual_session_limit: Count
    sessions_used: Count
    co_pay_kobo: Annotated[int, Field(ge=0, le=100_000_000)]
    post_surgical_covered: Flag
    pre_auth_required: Flag
    physiotherapy_covered: Flag = True


def _rows(path: Path, report: ImportReport) -> Iterator[tuple[int, MemberRow]]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = [name.strip() for name in (reader.fieldnames or [])]
        missing = [name for name in REQUIRED if name not in header]
        if missing:
            raise CsvFormatError(f"missing columns: {', '.join(missing)}")
        for raw in reader:
            line = reader.line_num
            values = {
                (key or "").strip(): value for key, value in raw.items() if value not in ("", None)
            }
            try:
                yield line, MemberRow.model_validate(values)
            except ValidationError as exc:
                problems = field_errors(exc)
                # Field names and reasons only: never the values (phones, names).
                report.rejected.append(
                    (line, "; ".join(f"{name}: {why}" for name, why in problems.items()))
                )


async def _write_batch(
    db: Database, ring: KeyRing, hmo_code: str, batch: list[MemberRow]
) -> tuple[int, int]:
    now = utcnow()
    by_policy = {row.policy_number: row for row in batch}  # last row wins within a batch
    async with db.write() as conn:
        existing = set(
            (
                await conn.execute(
                    select(_members.c.policy_number).where(
                        _members.c.hmo_code == hmo_code,
                        _members.c.policy_number.in_(list(by_policy)),
                    )
                )
            ).scalars()
        )
        new_rows = []
        for policy, row in by_policy.items():
            values = stored_member(ring, row.model_dump())
            if policy in existing:
                values.pop("policy_number")
                await conn.execute(
                    update(_members)
                    .where(_members.c.hmo_code == hmo_code, _members.c.policy_number == policy)
                    .values(**values, updated_at=now)
                )
            else:
                new_rows.append(
                    {
                        "id": new_id("mbr"),
                        "hmo_code": hmo_code,
                        **values,
                        "imported_at": now,
                        "updated_at": now,
                    }
                )
        if new_rows:
            await conn.execute(insert(_members), new_rows)
    return len(new_rows), len(by_policy) - len(new_rows)


async def import_csv(
    db: Database, ring: KeyRing, hmo_code: str, path: Path, *, advance: Callable[[int], None]
) -> ImportReport:
    report = ImportReport()
    batch: list[MemberRow] = []
    valid = reported = 0

    async def flush() -> None:
        nonlocal batch, reported
        if batch:
            created, updated = await _write_batch(db, ring, hmo_code, batch)
            report.created += created
            report.updated += updated
            batch = []
        processed = valid + len(report.rejected)
        advance(processed - reported)
        reported = processed

    for _line, row in _rows(path, report):
        batch.append(row)
        valid += 1
        if len(batch) >= BATCH:
            await flush()
    await flush()
    return report
