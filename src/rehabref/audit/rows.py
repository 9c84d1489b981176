"""The typed view of an ``audit_events`` row, as the audit listing and verifier read it.

The members mirror the table one for one (``tests/test_row_views.py`` compares them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class AuditEventRow(Protocol):
    """One row of ``audit_events``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def chain(self) -> int: ...

    @property
    def seq(self) -> int: ...

    @property
    def at(self) -> datetime: ...

    @property
    def actor_kind(self) -> str: ...

    @property
    def actor_id(self) -> str: ...

    @property
    def action(self) -> str: ...

    @property
    def referral_id(self) -> str | None: ...

    @property
    def subject(self) -> str | None: ...

    @property
    def request_id(self) -> str | None: ...

    @property
    def prev_hash(self) -> str: ...

    @property
    def hash(self) -> str: ...
