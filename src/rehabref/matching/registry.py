"""Physiotherapist registry: create, update, list, deactivate and bulk upsert.

The live registry only (ops API, console, CSV import): every statement is limited to live
rows, so a partner's sandbox roster (``sandbox/roster.py``) is never listed, changed or
found here by id or licence number.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import cursors
from rehabref.clock import iso
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.ids import new_id
from rehabref.matching.roster import LIVE_REGISTRY
from rehabref.matching.rows import PhysioRow
from rehabref.matching.schemas import PhysioCreate, PhysioUpdate
from rehabref.places import area_key, city_key
from rehabref.tables.matching import Physiotherapist

physios = table(Physiotherapist)
_CURSOR_ID = re.compile(r"^phy_[0-9a-z]{26}$")


def record(row: PhysioRow) -> dict[str, Any]:
    """The ops API representation (PhysioRecord)."""
    return {
        "physio_id": row.id,
        "name": row.name,
        "license_number": row.license_number,
        "specialization": row.specializations[0],
        "specializations": list(row.specializations),
        "rating": row.rating,
        "phone": row.phone,
        "city": row.city,
        "areas": list(row.areas),
        "modalities": list(row.modalities),
        "weekly_capacity": row.weekly_capacity,
        "active": bool(row.active),
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
    }


def _values(data: dict[str, Any]) -> dict[str, Any]:
    values = dict(data)
    if "city" in values:
        values["city_key"] = city_key(values["city"])
    if "areas" in values:
        # Stored normalised so matching compares like with like.
        values["areas"] = [area_key(area) for area in values["areas"]]
    if "rating" in values:
        values["rating"] = round(float(values["rating"]), 2)
    return values


async def get_physio(conn: AsyncConnection, *, physio_id: str) -> PhysioRow | None:
    return (
        await conn.execute(select(physios).where(LIVE_REGISTRY, physios.c.id == physio_id))
    ).first()


async def by_license(conn: AsyncConnection, *, license_number: str) -> PhysioRow | None:
    return (
        await conn.execute(
            select(physios).where(LIVE_REGISTRY, physios.c.license_number == license_number)
        )
    ).first()


async def create_physio(conn: AsyncConnection, *, data: PhysioCreate, now: datetime) -> PhysioRow:
    if await by_license(conn, license_number=data.license_number) is not None:
        raise ApiError(
            409,
            "duplicate_license_number",
            "A physiotherapist with this license number exists; update it with PATCH.",
            fields={"license_number": "Already registered."},
        )
    physio_id = new_id("phy")
    await conn.execute(
        insert(physios),
        {
            "id": physio_id,
            "environment": "live",
            "partner_id": None,
            **_values(data.model_dump()),
            "created_at": now,
            "updated_at": now,
        },
    )
    row = await get_physio(conn, physio_id=physio_id)
    assert row is not None
    return row


async def update_physio(
    conn: AsyncConnection, *, physio_id: str, changes: PhysioUpdate, now: datetime
) -> PhysioRow:
    values = _values(changes.model_dump(exclude_unset=True))
    result = await conn.execute(
        update(physios)
        .where(LIVE_REGISTRY, physios.c.id == physio_id)
        .values(**values, updated_at=now)
    )
    if result.rowcount == 0:
        raise ApiError(404, "not_found", "No physiotherapist with this identifier.")
    row = await get_physio(conn, physio_id=physio_id)
    assert row is not None
    return row


async def list_physios(
    conn: AsyncConnection,
    *,
    city: str | None,
    active: bool | None,
    after_id: str | None,
    limit: int,
) -> tuple[list[PhysioRow], bool]:
    query = select(physios).where(LIVE_REGISTRY).order_by(physios.c.id).limit(limit + 1)
    if city is not None:
        query = query.where(physios.c.city_key == city_key(city))
    if active is not None:
        query = query.where(physios.c.active == active)
    if after_id is not None:
        query = query.where(physios.c.id > after_id)
    rows: list[PhysioRow] = list((await conn.execute(query)).all())
    return rows[:limit], len(rows) > limit


async def upsert_by_license(
    conn: AsyncConnection, *, data: PhysioCreate, now: datetime
) -> tuple[str, bool]:
    """Insert or update by license number; returns (physio id, created?)."""
    existing = await by_license(conn, license_number=data.license_number)
    if existing is None:
        row = await create_physio(conn, data=data, now=now)
        return row.id, True
    await conn.execute(
        update(physios)
        .where(physios.c.id == existing.id)
        .values(**_values(data.model_dump()), updated_at=now)
    )
    return existing.id, False


def encode_cursor(last_id: str) -> str:
    return cursors.encode_cursor(last_id)


def decode_cursor(cursor: str) -> str | None:
    return cursors.decode_cursor(cursor, _CURSOR_ID)
