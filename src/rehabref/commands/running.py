"""Running one command's database work: settings read, a small pool opened and always closed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from rehabref.config import Settings, load_settings
from rehabref.db import Database

T = TypeVar("T")


def run_with_database(work: Callable[[Database, Settings], Awaitable[T]]) -> T:
    settings = load_settings()

    async def main() -> T:
        db = Database(settings.database_url, pool_size=2)
        try:
            return await work(db, settings)
        finally:
            await db.dispose()

    return asyncio.run(main())
