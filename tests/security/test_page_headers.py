"""Every server-rendered page carries the same protective headers, error pages included."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from tests.conftest import auth


def _protected(response: httpx.Response) -> None:
    headers = response.headers
    assert headers["content-type"].startswith("text/html"), response.request.url
    assert headers.get("x-content-type-options") == "nosniff", response.request.url
    assert headers.get("x-frame-options") == "DENY", response.request.url
    assert "frame-ancestors 'none'" in headers.get("content-security-policy", "")
    assert headers.get("cache-control") == "no-store", response.request.url
    assert headers.get("referrer-policy") == "no-referrer", response.request.url


def test_html_pages_send_protective_headers(client: httpx.Client, partner: dict[str, Any]) -> None:
    link = client.post(
        "/api/v1/partners/referral-links",
        json={"campaign": "headers"},
        headers=auth(partner["keys"]["sk_test"], f"sec-hdr-{datetime.now(UTC).timestamp()}"),
    )
    assert link.status_code == 201, link.text
    pages = [
        client.get(f"/r/{link.json()['public_code']}"),
        client.get("/r/unknown-code-0000000000000000"),
        client.get("/console/login"),
        client.get("/track/RRAAAAAAAAAAAA"),
        client.get("/a/ast_x.1.sig"),
    ]
    for page in pages:
        _protected(page)
