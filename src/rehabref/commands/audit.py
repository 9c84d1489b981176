"""``rehabref audit verify``: check the audit trail's hash chain (docs/security.md)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from rehabref.audit.verify import Head, Verdict, anchor_problem, heads, verify_chain
from rehabref.config import load_settings
from rehabref.db import Database

audit_app = typer.Typer(help="The audit trail of reads and changes.", no_args_is_help=True)


AnchorOption = Annotated[
    Path | None,
    typer.Option(
        "--anchor",
        help="A file outside the database with the chain heads of the last verification: "
        "checked, then replaced by today's heads (keep it on write-once or separate storage).",
    ),
]


@audit_app.command("verify")
def verify_command(anchor: AnchorOption = None) -> None:
    """Walk the hash chain from the first record; exit 0 when intact, 1 at the first break."""
    anchored = (
        [Head(**head) for head in json.loads(anchor.read_text())]
        if anchor is not None and anchor.exists()
        else []
    )

    async def work() -> tuple[Verdict, str | None, list[Head]]:
        db = Database(load_settings().database_url, pool_size=1)
        try:
            async with db.read() as conn:
                now_heads = await heads(conn)
                return await verify_chain(conn), await anchor_problem(conn, anchored), now_heads
        finally:
            await db.dispose()

    verdict, moved, now_heads = asyncio.run(work())
    if moved is not None:
        typer.echo(f"audit chain BROKEN: {moved}", err=True)
        raise typer.Exit(1)
    if verdict.intact:
        if anchor is not None:
            anchor.write_text(json.dumps([asdict(head) for head in now_heads]) + "\n")
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
