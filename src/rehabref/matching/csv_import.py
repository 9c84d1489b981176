"""Importing the physiotherapist registry from CSV (``rehabref physios import FILE.csv``).

Columns (header row required, order free): name, license_number, specializations,
rating, phone, city, areas, modalities, weekly_capacity, active. List columns separate
items with ``;``. ``active`` is optional (true/false/yes/no/1/0, default true). Rows are
validated like the ops API; valid rows are upserted by license number, invalid rows are
reported with their line number and nothing of them is written.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rehabref.clock import utcnow
from rehabref.csv_imports import CsvFormatError, ImportReport
from rehabref.db import Database
from rehabref.matching.registry import upsert_by_license
from rehabref.matching.schemas import PhysioCreate
from rehabref.request_body import field_errors

REQUIRED_COLUMNS = (
    "name",
    "license_number",
    "specializations",
    "rating",
    "phone",
    "city",
    "areas",
    "modalities",
    "weekly_capacity",
)
_LIST_COLUMNS = ("specializations", "areas", "modalities")
_TRUE = {"true", "yes", "1", "y"}
_FALSE = {"false", "no", "0", "n"}
BATCH = 200


def _split(value: str) -> list[str]:
    return [item.strip() for item in value.split(";") if item.strip()]


def _number(value: str, kind: type[int] | type[float]) -> Any:
    text = value.strip()
    try:
        return kind(text)
    except ValueError:
        return text  # let validation name the field


def row_to_body(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row as the ops API create body (types converted where they parse)."""
    body: dict[str, Any] = {}
    for name in REQUIRED_COLUMNS:
        raw = (row.get(name) or "").strip()
        if name in _LIST_COLUMNS:
            body[name] = _split(raw)
        elif name == "rating":
            body[name] = _number(raw, float)
        elif name == "weekly_capacity":
            body[name] = _number(raw, int)
        else:
            body[name] = raw
    active = (row.get("active") or "").strip().lower()
    if active:
        body["active"] = True if active in _TRUE else False if active in _FALSE else active
    return body


def parse_rows(path: Path) -> Iterator[tuple[int, PhysioCreate | str]]:
    """(line number, valid row or error text) for every data row."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        columns = [name.strip() for name in reader.fieldnames or []]
        missing = [name for name in REQUIRED_COLUMNS if name not in columns]
        if missing:
            raise CsvFormatError(f"missing columns: {', '.join(missing)}")
        reader.fieldnames = columns
        seen: dict[str, int] = {}
        for row in reader:
            line = reader.line_num
            if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
                continue  # blank line
            try:
                item = PhysioCreate.model_validate(row_to_body(row))
            except ValidationError as exc:
                problems = field_errors(exc)
                yield line, "; ".join(f"{name}: {text}" for name, text in problems.items())
                continue
            if item.license_number in seen:
                yield line, f"license_number: duplicate of line {seen[item.license_number]}"
                continue
            seen[item.license_number] = line
            yield line, item


async def import_csv(
    db: Database, path: Path, *, advance: Callable[[int], None] = lambda n: None
) -> ImportReport:
    """Validate every row and upsert the valid ones, committing every ``BATCH`` rows."""
    report = ImportReport()
    batch: list[PhysioCreate] = []

    async def flush() -> None:
        if not batch:
            return
        async with db.write() as conn:
            now = utcnow()
            for item in batch:
                _, created = await upsert_by_license(conn, data=item, now=now)
                if created:
                    report.created += 1
                else:
                    report.updated += 1
        advance(len(batch))
        batch.clear()

    for line, item in parse_rows(path):
        if isinstance(item, str):
            report.rejected.append((line, item))
            advance(1)
            continue
        batch.append(item)
        if len(batch) >= BATCH:
            await flush()
    await flush()
    return report
