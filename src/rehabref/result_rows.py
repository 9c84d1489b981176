"""Result rows read by attribute, the same on every driver (``fastsql`` returns them)."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any


class Record(dict[str, Any]):
    """A result row with attribute access, the same on every driver.

    Rows of a query are made as a subclass for their columns (``record_type``), which reads
    each column through a C-level property; ``__getattr__`` answers for any other key.
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


_record_types: dict[tuple[str, ...], type[Record]] = {}


def record_type(columns: Iterable[str]) -> type[Record]:
    """The ``Record`` subclass for rows of these columns, made once per set of columns.

    Reaching ``__getattr__`` first costs a failed ordinary lookup: eight times the time of a
    property that is ``operator.itemgetter``, and a V1 list reads twenty columns of each of
    its rows. Names ``dict`` itself has (``items``, ``keys``...) stay readable by subscript
    only, as on ``Record``. A key deleted from such a record raises ``KeyError`` on attribute
    access, not ``AttributeError``; rows are not edited that way.
    """
    key = tuple(columns)
    found = _record_types.get(key)
    if found is None:
        attributes: dict[str, Any] = {"__slots__": ()}
        for name in key:
            if name.isidentifier() and not hasattr(Record, name):
                attributes[name] = property(operator.itemgetter(name))
        found = type("Record", (Record,), attributes)
        # Queries have fixed column lists; the bound only guards against unbounded growth.
        if len(_record_types) < 1000:
            _record_types[key] = found
    return found
