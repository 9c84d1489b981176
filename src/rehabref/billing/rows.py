"""The typed views of payment requests and payments, as ``billing.store`` returns them.

The members mirror their tables one for one (``tests/test_row_views.py`` compares them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class PaymentRequestRow(Protocol):
    """One row of ``payment_requests``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def referral_id(self) -> str: ...

    @property
    def partner_id(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def reference(self) -> str: ...

    @property
    def pay_token(self) -> str: ...

    @property
    def amount_minor(self) -> int: ...

    @property
    def currency(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def init_state(self) -> str: ...

    @property
    def init_attempts(self) -> int: ...

    @property
    def init_next_at(self) -> datetime: ...

    @property
    def claimed_until(self) -> datetime | None: ...

    @property
    def authorization_url(self) -> str | None: ...

    @property
    def last_error(self) -> str | None: ...

    @property
    def created_by(self) -> str: ...

    @property
    def expires_at(self) -> datetime: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def updated_at(self) -> datetime: ...


class PaymentRow(Protocol):
    """One row of ``payments``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def payment_request_id(self) -> str: ...

    @property
    def referral_id(self) -> str: ...

    @property
    def reference(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def amount_minor(self) -> int: ...

    @property
    def currency(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def hold_reason(self) -> str | None: ...

    @property
    def refunded_minor(self) -> int: ...

    @property
    def paid_at(self) -> datetime: ...

    @property
    def applied_at(self) -> datetime | None: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def updated_at(self) -> datetime: ...
