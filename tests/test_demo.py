"""`rehabref partners demo` (what `make run` runs before serving): on a new database it creates
a sandbox partner and a console operator and prints their secrets once; on every later run it
prints the console's address and no secret."""

from __future__ import annotations

import hashlib
import json
import re

from sqlalchemy import create_engine, text

from rehabref.db import sync_url
from tests.support.databases import fresh_database
from tests.test_cli import all_stored_text, rehabref

SECRET = re.compile(r"\b(?:sk|pk|whsec)_(?:test|live)_\w+|\bop_\w+")


def json_documents(output: str) -> list[dict]:
    """The pretty-printed JSON objects of the demo's output, in order."""
    decoder = json.JSONDecoder()
    found, at = [], 0
    while (start := output.find("{", at)) != -1:
        document, at = decoder.raw_decode(output, start)
        found.append(document)
    return found


def test_the_demo_prints_keys_and_an_operator_token_once_then_only_the_console_address(
    tmp_path,
):
    with fresh_database(tmp_path) as database_url:
        first = rehabref(database_url, "partners", "demo", REHABREF_PORT="8123")
        assert first.returncode == 0, first.stderr
        partner, operator = json_documents(first.stdout)
        assert partner["keys"]["sk_test"].startswith("sk_test_")
        assert operator["operator_id"].startswith("opr_")
        assert operator["token"].startswith("op_")
        assert "Sign in to the console at http://127.0.0.1:8123/console" in first.stdout
        assert "shown once" in first.stderr

        stored = all_stored_text(database_url)
        assert operator["token"] not in stored
        assert partner["keys"]["sk_test"] not in stored
        engine = create_engine(sync_url(database_url))
        try:
            with engine.connect() as conn:
                row = conn.execute(
                    text("SELECT name, role, revoked_at FROM operators WHERE token_hash = :h"),
                    {"h": hashlib.sha256(operator["token"].encode()).hexdigest()},
                ).one()
        finally:
            engine.dispose()
        assert tuple(row) == ("Demo coordinator", "coordinator", None)

        # A revoked demo operator is not silently replaced by a new token on the next run.
        revoked = rehabref(
            database_url, "operators", "revoke", "--operator-id", operator["operator_id"]
        )
        assert revoked.returncode == 0, revoked.stderr
        for _ in range(2):
            again = rehabref(database_url, "partners", "demo", REHABREF_PORT="8123")
            assert again.returncode == 0, again.stderr
            assert SECRET.search(again.stdout + again.stderr) is None
            assert "Console: http://127.0.0.1:8123/console" in again.stdout
            assert "rehabref operators create --name NAME" in again.stdout
        assert all_stored_text(database_url).count("Demo coordinator") == 1
