"""Typed views of ``referral_links`` rows as the links service returns them (read-only)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class LinkColumns(Protocol):
    """The columns of ``referral_links`` (``tables.links.ReferralLink``)."""

    @property
    def id(self) -> str: ...

    @property
    def partner_id(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def campaign(self) -> str: ...

    @property
    def public_code(self) -> str: ...

    @property
    def active(self) -> bool: ...

    @property
    def expires_at(self) -> datetime | None: ...

    @property
    def click_count(self) -> int: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def deactivated_at(self) -> datetime | None: ...


class LinkRow(LinkColumns, Protocol):
    """A link as its partner sees it: with the number of referrals it brought."""

    @property
    def referral_count(self) -> int: ...


class PublicLinkRow(LinkColumns, Protocol):
    """A link found by its public code, with the name of the partner behind the form."""

    @property
    def partner_name(self) -> str: ...
