"""Opaque keyset cursors for every list: the last id of a page, base64url-encoded.

Ids sort by creation time (``ids.py``), so "the page after this id" is a keyset query.
Decoding checks the id's shape against the list's own id pattern, so a cursor from another
list, or a hand-made one, is refused instead of reaching SQL.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from typing import Any, Generic, Self, TypeVar

import msgspec

_VERSION = "c1"
Item = TypeVar("Item")


def encode_cursor(last_id: str) -> str:
    return base64.urlsafe_b64encode(f"{_VERSION}:{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str, id_pattern: re.Pattern[str]) -> str | None:
    """The id inside a cursor of this list, or None when it is not one."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    version, _, last_id = text.partition(":")
    return last_id if version == _VERSION and id_pattern.match(last_id) else None


class Page(msgspec.Struct, Generic[Item], frozen=True):
    """Every list's answer: a typed list subclasses ``Page[ItsItem]`` (one name per list in
    the OpenAPI document)."""

    data: list[Item]
    has_more: bool
    next_cursor: str | None

    @classmethod
    def after(
        cls,
        data: list[Item],
        *,
        has_more: bool,
        last_id: str | None,
        encode: Callable[[str], str],
    ) -> Self:
        """The page of ``data``, continued after ``last_id`` (its last item's id) when more
        follows."""
        return cls(
            data=data,
            has_more=has_more,
            next_cursor=next_cursor(has_more=has_more, last_id=last_id, encode=encode),
        )


def next_cursor(*, has_more: bool, last_id: str | None, encode: Callable[[str], str]) -> str | None:
    """The cursor that continues after ``last_id``, the id of the page's last item (null when
    nothing follows)."""
    return encode(last_id) if has_more and last_id is not None else None


def page_envelope(
    data: list[Any], *, has_more: bool, last_id: str | None, encode: Callable[[str], str]
) -> dict[str, Any]:
    """A ``Page`` as a dict, for the lists whose items are still dicts."""
    return {
        "data": data,
        "has_more": has_more,
        "next_cursor": next_cursor(has_more=has_more, last_id=last_id, encode=encode),
    }


DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def page_params(
    query: Mapping[str, str], decode: Callable[[str], str | None], problems: dict[str, str]
) -> tuple[int, str | None]:
    """(limit, last id) from a list's ``limit`` and ``cursor``; problems are added to ``problems``.

    ``limit`` is 1..100 in ASCII digits (at most 10, so no huge-int work), default 20;
    ``decode`` is the list's own cursor decoder.
    """
    limit = DEFAULT_LIMIT
    raw = query.get("limit")
    if raw is not None:
        if raw.isascii() and raw.isdigit() and len(raw) <= 10 and 1 <= int(raw) <= MAX_LIMIT:
            limit = int(raw)
        else:
            problems["limit"] = f"Must be an integer from 1 to {MAX_LIMIT}."
    last_id = None
    cursor = query.get("cursor")
    if cursor:
        last_id = decode(cursor)
        if last_id is None:
            problems["cursor"] = "Not a cursor returned by this API."
    return limit, last_id
