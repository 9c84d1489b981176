"""Tests where the application must read its key ring from a key file alone."""

from __future__ import annotations

from pathlib import Path

import pytest


def key_file_only(monkeypatch: pytest.MonkeyPatch, key_file: Path) -> Path:
    """Unset ``REHABREF_SECRET_KEY`` and point ``REHABREF_SECRET_KEY_FILE`` at ``key_file``
    (which need not exist yet); returns ``key_file``."""
    monkeypatch.delenv("REHABREF_SECRET_KEY", raising=False)
    monkeypatch.setenv("REHABREF_SECRET_KEY_FILE", str(key_file))
    return key_file
