"""``rehabref worker``: the delivery worker (webhooks, patient messages, jobs) as its own
process."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from rehabref import wiring
from rehabref.db import Database
from rehabref.events.worker import DeliveryWorker, config_from
from rehabref.instance_secret import secret_box


async def run_standalone(settings: Any) -> None:
    """``rehabref worker``: run until SIGTERM/SIGINT, then finish the batch and release."""
    db = Database(settings.database_url, pool_size=4)
    box = secret_box(settings)
    config = config_from(settings)
    channels = wiring.channel_providers(settings)
    wiring.warn_about_missing_channels(channels)
    messages = wiring.message_worker(db, settings, channels, box)
    paystack = wiring.paystack_client(settings)
    worker = DeliveryWorker(
        db,
        box,
        config,
        periodic=wiring.periodic_jobs(
            wiring.coverage_sources(box.ring),
            wiring.roster_sources(),
            messages,
            ring=box.ring,
            settings=settings,
            paystack=paystack,
        ),
        transport=wiring.delivery_transport(db, config, ring=box.ring),
    )
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, worker.stop)
    try:
        await worker.run()
    finally:
        await worker.aclose()
        await channels.aclose()
        if paystack is not None:
            await paystack.aclose()
        await db.dispose()
