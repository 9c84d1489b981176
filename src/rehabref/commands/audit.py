"""``rehabref audit verify``: check the audit trail's hash chain (docs/security.md)."""

from __future__ import annotations

import asyncio

import typer

from rehabref.audit.verify import Verdict, verify_chain
from rehabref.config import load_settings
from rehabref.db import Database

audit_app = typer.Typer(help="The audit trail of reads and changes.", no_args_is_help=True)


@audit_app.command("verify")
def verify_command() -> None:
    """Walk the hash chain from the first record; exit 0 when intact, 1 at the first break."""

    async def work() -> Verdict:
        db = Database(load_settings().database_url, pool_size=1)
        try:
            async with db.read() as conn:
                return await verify_chain(conn)
        finally:
            await db.dispose()

    verdict = asyncio.run(work())
    if verdict.intact:
        typer.echo(f"audit chain intact: {verdict.checked} records")
        return
    record = f"chain {verdict.broken_chain} record {verdict.broken_seq}"
    if verdict.broken_id is not None:
        record += f" ({verdict.broken_id})"
    typer.echo(
        f"audit chain BROKEN at {record}: {verdict.problem}; "
        f"{verdict.checked} records checked before it are intact",
        err=True,
    )
    raise typer.Exit(1)
