"""``rehabref invoices import-remittance FILE --by NAME``: mark issued payer invoices paid from
an HMO's or employer's remittance CSV (docs/payments.md). All rows or none: any bad row is
reported with its line and nothing is applied (exit 1); an unreadable file exits 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from rehabref.audit.trail import entry, record
from rehabref.billing import payer_invoice_store as store
from rehabref.billing import remittance
from rehabref.clock import utcnow
from rehabref.commands.running import run_with_database
from rehabref.config import Settings
from rehabref.db import Database
from rehabref.errors import ApiError

invoices_app = typer.Typer(help="HMO and employer invoices.", no_args_is_help=True)


@invoices_app.command("import-remittance")
def import_remittance(
    file: Annotated[Path, typer.Argument(help="The remittance CSV.")],
    by: Annotated[str, typer.Option("--by", help="Who imports it (recorded in the audit).")],
) -> None:
    """Mark the file's invoices paid, or none of them."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        typer.echo(f"error: cannot read {file}: {type(exc).__name__}", err=True)
        raise typer.Exit(2) from None
    actor = f"cli:{by.strip()[:60] or 'unknown'}"

    async def work(db: Database, settings: Settings) -> list[dict[str, Any]]:
        now = utcnow()
        rows = remittance.parse(text, today=now.date())
        async with db.write() as conn:
            paid = await remittance.apply(conn, rows, actor=actor, now=now)
            for row in paid:
                await record(conn, entry(actor, "payer_invoice.paid", subject=row.id))
        return [store.record(row) for row in paid]

    try:
        paid = run_with_database(work)
    except ApiError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        for where, problem in (exc.fields or {}).items():
            typer.echo(f"{where}: {problem}", err=True)
        raise typer.Exit(1) from None
    for invoice in paid:
        typer.echo(f"paid {invoice['number']} ({invoice['payable_total_minor']} kobo)")
    typer.echo(f"{len(paid)} invoice(s) marked paid")
