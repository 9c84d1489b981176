"""The idempotency keys a process is answering right now.

A second request under a key whose first is still running in this process is a 409 at once,
before it reaches the database (where, across processes, the advisory lock and the record's
primary key decide). One ``KeysInFlight`` per app (in production, one per process), held by
the create flow it serves (``flow.IdempotentCreates``), so two apps in one process never see
each other's keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rehabref.idempotency.service import KeyOwner, still_in_flight


class KeysInFlight:
    def __init__(self) -> None:
        self._keys: set[tuple[KeyOwner, str]] = set()

    @contextmanager
    def claim(self, owner: KeyOwner, key: str) -> Iterator[None]:
        """Hold ``key`` of ``owner`` for the block; a 409 when it is already held."""
        held = (owner, key)
        if held in self._keys:
            raise still_in_flight()
        self._keys.add(held)
        try:
            yield
        finally:
            self._keys.discard(held)
