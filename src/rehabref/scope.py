"""Tenant scope: the condition every partner-facing statement starts from.

Threat: one query on a partner-owned table (a table with ``partner_id`` and ``environment``
columns) that forgets either condition shows a partner another partner's referrals, or a
test key live data. So the conditions are not written by hand: a partner-facing store takes
a ``PartnerScope`` (made from the authenticated ``Principal``, never from bare ids) and builds
every statement from it (``scope.select(table)``, ``scope.where(table)``, or ``in_scope``
for statements compiled once, bound with ``scope.bind(...)``). Coordinators read across
partners by design; their stores take an ``OperatorScope``, which says so in its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

from sqlalchemy import ColumnElement, Select, Table, Update, bindparam, select, update

from rehabref.principal import Principal

TENANT_COLUMNS = ("partner_id", "environment")
# The bind parameter names of ``in_scope``; ``PartnerScope.bind`` fills them.
_PARTNER_PARAM = "scope_partner_id"
_ENVIRONMENT_PARAM = "scope_environment"


class TenantRow(Protocol):
    """A row of a partner-owned table."""

    @property
    def partner_id(self) -> str: ...

    @property
    def environment(self) -> str: ...


def _tenant_columns(table: Table) -> tuple[Any, Any]:
    columns = table.c
    if "partner_id" not in columns or "environment" not in columns:
        raise TypeError(f"{table.description} has no partner_id and environment to scope by")
    return columns.partner_id, columns.environment


def in_scope(table: Table) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    """The scope as bind parameters, for a statement compiled once (``fastsql.Statement``);
    run it with ``scope.bind(...)``, which fills them."""
    partner, environment = _tenant_columns(table)
    return partner == bindparam(_PARTNER_PARAM), environment == bindparam(_ENVIRONMENT_PARAM)


@dataclass(frozen=True, slots=True)
class PartnerScope:
    """One partner in one environment: all a partner-facing statement may see or change."""

    partner_id: str
    environment: str

    @classmethod
    def of(cls, principal: Principal) -> PartnerScope:
        return cls(principal.partner_id, principal.environment)

    @classmethod
    def owning(cls, row: TenantRow) -> PartnerScope:
        """The scope of a row found by a public credential (a tracking code, a link code):
        reads that follow it stay inside the owner's data."""
        return cls(row.partner_id, row.environment)

    def where(self, table: Table) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
        partner, environment = _tenant_columns(table)
        return partner == self.partner_id, environment == self.environment

    def select(self, table: Table, *columns: Any) -> Select[Any]:
        """``SELECT`` of ``table`` (or of ``columns`` from it) inside the scope."""
        return select(*(columns or (table,))).where(*self.where(table))

    def update(self, table: Table) -> Update:
        return update(table).where(*self.where(table))

    def bind(self, **params: Any) -> dict[str, Any]:
        """Parameters for a statement built with ``in_scope``: the scope's and ``params``."""
        return {_PARTNER_PARAM: self.partner_id, _ENVIRONMENT_PARAM: self.environment, **params}

    def columns(self) -> dict[str, str]:
        """The tenant columns of a row written in this scope."""
        return {"partner_id": self.partner_id, "environment": self.environment}


@dataclass(frozen=True, slots=True)
class OperatorScope:
    """A coordinator: every partner and both environments, unless narrowed by a filter."""

    partner_id: str | None = None
    environment: str | None = None

    def where(self, table: Table) -> tuple[ColumnElement[bool], ...]:
        partner, environment = _tenant_columns(table)
        conditions: list[ColumnElement[bool]] = []
        if self.partner_id is not None:
            conditions.append(partner == self.partner_id)
        if self.environment is not None:
            conditions.append(environment == self.environment)
        return tuple(conditions)

    def select(self, table: Table, *columns: Any) -> Select[Any]:
        return select(*(columns or (table,))).where(*self.where(table))


# Stores that serve partners and coordinators alike (event history) take either.
Scope: TypeAlias = PartnerScope | OperatorScope
