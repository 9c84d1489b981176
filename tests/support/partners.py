"""Onboarding partners for tests through the same service the CLI uses."""

from __future__ import annotations

import asyncio
from typing import Any

from rehabref.db import Database
from rehabref.instance_secret import SecretBox
from rehabref.partners.service import create_partner
from rehabref.sandbox.phones import TEST_PHONES

TEST_SECRET_KEY = "test-secret-key-not-for-production"
# The key ring of the suite's servers (blind indexes of rows written by tests themselves).
TEST_RING = SecretBox(TEST_SECRET_KEY).ring


def onboard(database_url: str, **options: Any) -> dict[str, Any]:
    """Create a partner; returns the CLI's JSON shape (partner_id, keys, sandbox)."""

    async def work() -> dict[str, Any]:
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                result = await create_partner(
                    conn,
                    box=SecretBox(TEST_SECRET_KEY),
                    name=options.pop("name", "Test Clinic"),
                    **options,
                )
            return result.as_dict(test_phones=TEST_PHONES)
        finally:
            await db.dispose()

    return asyncio.run(work())
