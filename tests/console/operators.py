"""Operators for console tests, made through the same service as ``rehabref operators create``."""

from __future__ import annotations

import asyncio
import re
import uuid

import httpx

from rehabref.db import Database
from rehabref.ops.auth import create_operator

_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def make_operator(database_url: str) -> dict[str, str]:
    async def work() -> dict[str, str]:
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                return await create_operator(conn, name=f"Coordinator {uuid.uuid4().hex[:4]}")
        finally:
            await db.dispose()

    return asyncio.run(work())


def csrf(page: httpx.Response) -> str:
    match = _TOKEN.search(page.text)
    assert match, page.text[:500]
    return match.group(1)


def sign_in(client: httpx.Client, token: str) -> httpx.Response:
    page = client.get("/console/login")
    return client.post(
        "/console/login", data={"token": token, "csrf_token": csrf(page)}, follow_redirects=False
    )
