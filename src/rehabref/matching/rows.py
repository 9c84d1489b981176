"""The typed view of a ``physiotherapists`` row, as the matching stores return it.

The members mirror the table one for one (``tests/test_row_views.py`` compares them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class PhysioRow(Protocol):
    """One row of ``physiotherapists``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def partner_id(self) -> str | None: ...

    @property
    def license_number(self) -> str: ...

    @property
    def specializations(self) -> list[str]: ...

    @property
    def rating(self) -> float: ...

    @property
    def phone(self) -> str: ...

    @property
    def email(self) -> str | None: ...

    @property
    def city(self) -> str: ...

    @property
    def city_key(self) -> str: ...

    @property
    def areas(self) -> list[str]: ...

    @property
    def modalities(self) -> list[str]: ...

    @property
    def weekly_capacity(self) -> int: ...

    @property
    def active(self) -> bool: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def updated_at(self) -> datetime: ...
