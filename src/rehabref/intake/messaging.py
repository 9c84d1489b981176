"""Outbound patient messages (the assistant deep link) behind one small adapter.

No real provider is wired in: ``SandboxMessaging`` records that a message was requested
(recipient fingerprint, template name, time; never the text or the link, which carries a
patient token) and sends nothing. ``ConsoleMessaging`` (``REHABREF_MESSAGING=console``)
does the same and prints one redacted line to standard output.
"""

from __future__ import annotations

import hashlib
import sys
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import utcnow
from rehabref.config import Settings
from rehabref.db import Database, table
from rehabref.ids import new_id
from rehabref.tables.intake import OutboundMessage

_messages = table(OutboundMessage)


class MessagingAdapter(Protocol):
    async def accept(
        self,
        *,
        to: str,
        text: str,
        link: str,
        template: str,
        referral_id: str | None,
        now: datetime,
    ) -> dict[str, Any]:
        """Take a message to send; returns its ``outbound_messages`` row, which the caller
        writes in its own transaction (a create's plan). Raises when it cannot be taken now.
        """
        ...

    async def send(
        self,
        *,
        to: str,
        text: str,
        link: str,
        template: str = "assistant_link",
        referral_id: str | None = None,
        conn: AsyncConnection | None = None,
    ) -> str:
        """Send ``text`` and ``link`` to ``to`` (E.164 phone or e-mail); returns a message id.

        Pass ``conn`` to record the message in the caller's transaction; without it the
        adapter opens its own (never call it without ``conn`` inside an open write block).
        """
        ...


def recipient_ref(to: str) -> str:
    return hashlib.sha256(to.encode()).hexdigest()[:16]


class SandboxMessaging:
    provider = "sandbox"

    def __init__(self, db: Database | None = None) -> None:
        self._db = db
        self.sent_count = 0

    async def accept(
        self,
        *,
        to: str,
        text: str,
        link: str,
        template: str,
        referral_id: str | None,
        now: datetime,
    ) -> dict[str, Any]:
        row: dict[str, Any] = {
            "id": new_id("msg"),
            "referral_id": referral_id,
            "recipient_ref": recipient_ref(to),
            "template": template,
            "provider": self.provider,
            "created_at": now,
        }
        self.sent_count += 1
        self._announce(row["id"], row)
        return row

    async def send(
        self,
        *,
        to: str,
        text: str,
        link: str,
        template: str = "assistant_link",
        referral_id: str | None = None,
        conn: AsyncConnection | None = None,
    ) -> str:
        row = await self.accept(
            to=to, text=text, link=link, template=template, referral_id=referral_id, now=utcnow()
        )
        if conn is not None:
            await conn.execute(insert(_messages), row)
        elif self._db is not None:
            async with self._db.write() as own:
                await own.execute(insert(_messages), row)
        return str(row["id"])

    def _announce(self, message_id: str, row: dict[str, Any]) -> None:
        return None


class ConsoleMessaging(SandboxMessaging):
    provider = "console"

    def _announce(self, message_id: str, row: dict[str, Any]) -> None:
        # Ids only: no phone, no text, no link.
        print(
            f"messaging[console] {message_id} template={row['template']} "
            f"referral={row['referral_id']} recipient={row['recipient_ref']}",
            file=sys.stdout,
            flush=True,
        )


def messaging_for(db: Database, settings: Settings) -> MessagingAdapter:
    """``REHABREF_MESSAGING``: ``sandbox`` (default) or ``console``."""
    if settings.messaging == "console":
        return ConsoleMessaging(db)
    return SandboxMessaging(db)
