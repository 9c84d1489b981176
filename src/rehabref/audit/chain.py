"""The hash chain of the audit trail, as pure functions.

Threat: someone with database access edits, deletes or inserts an audit record to hide a
read. Each record's ``hash`` is SHA-256 over its chain and position, its canonical text and
the previous record's hash in that chain, so changing any stored field, or removing, moving
or reordering a record, breaks its chain from that record on (``rehabref audit verify``).
The canonical text holds only the record's own fields (ids, never patient data).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime

from rehabref.clock import as_utc

GENESIS = "0" * 64  # the "previous hash" of record 1


@dataclass(frozen=True)
class Entry:
    """One audit record before it is chained."""

    id: str
    at: datetime
    actor_kind: str
    actor_id: str
    action: str
    referral_id: str | None
    subject: str | None
    request_id: str | None

    def canonical(self) -> str:
        """ASCII JSON of the fields, in a fixed order; the time in epoch microseconds."""
        moment = as_utc(self.at)
        micros = int(moment.timestamp()) * 1_000_000 + moment.microsecond
        fields = [
            self.id,
            micros,
            self.actor_kind,
            self.actor_id,
            self.action,
            self.referral_id,
            self.subject,
            self.request_id,
        ]
        return json.dumps(fields, separators=(",", ":"), ensure_ascii=True)


def link_hash(chain: int, seq: int, canonical: str, prev_hash: str) -> str:
    """The record's hash; PostgreSQL computes the same in ``trail.APPEND`` (keep in step)."""
    return hashlib.sha256(f"{chain}:{seq}\n{canonical}\n{prev_hash}".encode()).hexdigest()


def split_actor(actor: str) -> tuple[str, str]:
    """``"operator:opr_1"`` -> ("operator", "opr_1"); the history's actor strings."""
    kind, _, rest = actor.partition(":")
    return (kind, rest) if rest else ("system", kind)
