"""Discharge-summary PDFs are rendered on request, so each client IP may fetch only
REHABREF_PDF_RATE_LIMIT_IP of them; over it, 429 with Retry-After and the error body."""

from __future__ import annotations

import httpx
import pytest

from tests.support.server import ServerProcess


@pytest.fixture(scope="module")
def limited(database_url, tmp_path_factory):
    process = ServerProcess(
        database_url,
        tmp_path_factory.mktemp("pdf-limited") / "server.log",
        REHABREF_PDF_RATE_LIMIT_IP="2/minute",
    ).start("--no-worker")
    yield process
    process.stop()


def test_pdf_downloads_are_limited_per_client(limited):
    with httpx.Client(base_url=limited.base_url, timeout=30) as client:
        # Counted before the link is checked: guessing links costs the same budget.
        first, second = (client.get("/reports/pdf/not-a-valid-link") for _ in range(2))
        assert first.status_code == second.status_code == 403
        third = client.get("/reports/pdf/not-a-valid-link")
    assert third.status_code == 429
    assert int(third.headers["retry-after"]) >= 1
    assert third.json()["error"]["code"] == "rate_limited"
