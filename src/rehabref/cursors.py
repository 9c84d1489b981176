"""Opaque keyset cursors for every list: the last id of a page, base64url-encoded.

Ids sort by creation time (``ids.py``), so "the page after this id" is a keyset query.
Decoding checks the id's shape against the list's own id pattern, so a cursor from another
list, or a hand-made one, is refused instead of reaching SQL.
"""

from __future__ import annotations

import base64
import binascii
import re

_VERSION = "c1"


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
