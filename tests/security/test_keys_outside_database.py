"""The instance keys live in a key file, not the database: a copy of the database alone signs
nothing, and a rotated ring keeps what the old key signed valid while the new key signs.

Real servers on the suite's database (SQLite or PostgreSQL), a real key file per server.
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy import inspect
from sqlalchemy.engine import Engine

from rehabref.crypto import new_key
from tests.support.api import created
from tests.support.server import ServerProcess


def _serve(database_url: str, tmp_path: Path, key_file: Path, name: str) -> ServerProcess:
    # An empty REHABREF_SECRET_KEY: the key file is the ring.
    return ServerProcess(
        database_url,
        tmp_path / f"{name}.log",
        REHABREF_SECRET_KEY="",
        REHABREF_SECRET_KEY_FILE=str(key_file),
    ).start("--no-worker")


def stored_bytes(sql: Engine, backend: str) -> bytes:
    """Everything the database holds: the SQLite file, or a plain ``pg_dump``."""
    if backend == "sqlite":
        return Path(sql.url.database or "").read_bytes()
    dsn = sql.url.set(drivername="postgresql").render_as_string(hide_password=False)
    return subprocess.run(["pg_dump", "--no-owner", dsn], capture_output=True, check=True).stdout


def _page_status(server: ServerProcess, url: str) -> int:
    parts = urlsplit(url)
    return httpx.get(f"{server.base_url}{parts.path}", timeout=10).status_code


def _assistant_url(server: ServerProcess, partner: dict[str, Any]) -> str:
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        return str(created(client, partner["keys"]["sk_test"])["assistant_session_url"])


def test_keys_are_made_in_a_private_file_and_never_stored_in_the_database(
    database_url: str, partner: dict[str, Any], sql: Engine, backend: str, tmp_path: Path
) -> None:
    key_file = tmp_path / "keys" / "rehabref.key"
    server = _serve(database_url, tmp_path, key_file, "first")
    try:
        url = _assistant_url(server, partner)
        assert _page_status(server, url) == 200
    finally:
        server.stop()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key_text = key_file.read_text()
    key = next(line for line in key_text.splitlines() if not line.startswith("#"))
    assert key.startswith("k1:") and len(key) > 40
    assert "instance_settings" not in inspect(sql).get_table_names()
    assert key.split(":", 1)[1].encode() not in stored_bytes(sql, backend)

    # The same database with any other key (all a thief of the database has) forges nothing:
    # the link it issued does not open.
    stranger = _serve(database_url, tmp_path, tmp_path / "stranger.key", "stranger")
    try:
        assert _page_status(stranger, url) == 404
    finally:
        stranger.stop()

    # The first key file again: the key was kept, and the link still opens.
    again = _serve(database_url, tmp_path, key_file, "again")
    try:
        assert _page_status(again, url) == 200
    finally:
        again.stop()
    assert key_file.read_text() == key_text


def test_a_rotated_ring_verifies_old_links_and_signs_new_ones_with_the_new_key(
    database_url: str, partner: dict[str, Any], tmp_path: Path
) -> None:
    old_key, new = new_key(), new_key()
    key_file = tmp_path / "ring.key"
    key_file.write_text(f"k1:{old_key}\n")
    key_file.chmod(0o600)
    before = _serve(database_url, tmp_path, key_file, "before")
    try:
        old_link = _assistant_url(before, partner)
    finally:
        before.stop()

    # Rotation: the new key appended; every process restarted with the ring.
    key_file.write_text(f"k1:{old_key}\nk2:{new}\n")
    rotated = _serve(database_url, tmp_path, key_file, "rotated")
    try:
        assert _page_status(rotated, old_link) == 200
        new_link = _assistant_url(rotated, partner)
        assert _page_status(rotated, new_link) == 200
    finally:
        rotated.stop()

    # The new link was signed by k2 alone: a ring of only k2 opens it and not the old one.
    only_new = tmp_path / "only-new.key"
    only_new.write_text(f"k2:{new}\n")
    retired = _serve(database_url, tmp_path, only_new, "retired")
    try:
        assert _page_status(retired, new_link) == 200
        assert _page_status(retired, old_link) == 404
    finally:
        retired.stop()
