"""The typed view of an ``assistant_sessions`` row (the patient's intake link).

The members mirror the table one for one (``tests/test_row_views.py`` compares them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class AssistantSessionRow(Protocol):
    """One row of ``assistant_sessions``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def referral_id(self) -> str: ...

    @property
    def expires_at(self) -> datetime: ...

    @property
    def opened_at(self) -> datetime | None: ...

    @property
    def completed_at(self) -> datetime | None: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def availability(self) -> str | None: ...

    @property
    def care_mode(self) -> str | None: ...

    @property
    def area(self) -> str | None: ...
