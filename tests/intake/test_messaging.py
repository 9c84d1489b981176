"""The messaging adapter: the sandbox records without the link; console prints ids only."""

from __future__ import annotations

import asyncio

from sqlalchemy import text

from rehabref.config import load_settings
from rehabref.db import Database
from rehabref.intake.messaging import (
    ConsoleMessaging,
    SandboxMessaging,
    messaging_for,
    recipient_ref,
)

LINK = "http://127.0.0.1/a/ast_01abc.1999999999.secret-signature-part"


def _send(adapter, **kwargs):
    return asyncio.run(
        adapter.send(to="+2348031234567", text=f"Hi, open {LINK}", link=LINK, **kwargs)
    )


def test_sandbox_records_the_request_and_nothing_secret(database_url, sql):
    db = Database(database_url, pool_size=1)
    try:
        adapter = SandboxMessaging(db)
        message_id = _send(adapter, template="assistant_link", referral_id="ref_x")
    finally:
        asyncio.run(db.dispose())
    assert message_id.startswith("msg_") and adapter.sent_count == 1
    with sql.connect() as conn:
        row = (
            conn.execute(text("SELECT * FROM outbound_messages WHERE id = :i"), {"i": message_id})
            .mappings()
            .one()
        )
    assert row["template"] == "assistant_link" and row["provider"] == "sandbox"
    assert row["recipient_ref"] == recipient_ref("+2348031234567")
    flat = " ".join(str(v) for v in row.values())
    assert "2348031234567" not in flat and "/a/" not in flat and "secret" not in flat


def test_console_prints_one_redacted_line(database_url, capsys):
    db = Database(database_url, pool_size=1)
    try:
        adapter = messaging_for(db, load_settings({"REHABREF_MESSAGING": "console"}))
        assert isinstance(adapter, ConsoleMessaging)
        _send(adapter, referral_id="ref_y")
    finally:
        asyncio.run(db.dispose())
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "messaging[console]" in out and "ref_y" in out
    assert "2348031234567" not in out and "/a/" not in out and "Hi" not in out


def test_sandbox_is_the_default(database_url):
    db = Database(database_url, pool_size=1)
    try:
        assert type(messaging_for(db, load_settings({}))) is SandboxMessaging
        assert (
            type(messaging_for(db, load_settings({"REHABREF_MESSAGING": "sandbox"})))
            is SandboxMessaging
        )
    finally:
        asyncio.run(db.dispose())
