"""``rehabref members import --hmo CODE FILE.csv``: load an HMO's member registry."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rehabref.config import load_settings
from rehabref.db import Database
from rehabref.eligibility.codes import HMO_CODES
from rehabref.eligibility.csv_import import CsvFormatError, ImportReport, count_rows, import_csv

members_app = typer.Typer(help="HMO member registries (eligibility).", no_args_is_help=True)


@members_app.command("import")
def import_command(
    hmo: Annotated[str, typer.Option("--hmo", help=f"One of: {', '.join(HMO_CODES)}.")],
    file: Annotated[Path, typer.Argument(help="CSV file (columns in docs/eligibility.md).")],
) -> None:
    """Validate and upsert members by policy number; bad rows are listed by line number.

    Exit status 0 when every row was imported, 1 when some rows were rejected (the valid
    rows are still imported), 2 when the HMO code is unknown or the file cannot be read.
    """
    err = Console(stderr=True)
    if hmo not in HMO_CODES:
        err.print(f"error: unknown HMO code {hmo!r}; use one of {', '.join(HMO_CODES)}")
        raise typer.Exit(2)
    if not file.is_file():
        err.print(f"error: no such file: {file}")
        raise typer.Exit(2)
    settings = load_settings()
    total = count_rows(file)

    async def work() -> ImportReport:
        db = Database(settings.database_url, pool_size=2)
        try:
            with Progress(
                TextColumn(f"importing {hmo} members"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
            ) as progress:
                task = progress.add_task("import", total=total)
                return await import_csv(db, hmo, file, advance=lambda n: progress.advance(task, n))
        finally:
            await db.dispose()

    try:
        report = asyncio.run(work())
    except (CsvFormatError, UnicodeDecodeError) as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(2) from None
    for line, problem in report.rejected:
        typer.echo(f"line {line}: {problem}", err=True)
    typer.echo(
        f"created {report.created}, updated {report.updated}, rejected {len(report.rejected)}"
    )
    if report.rejected:
        raise typer.Exit(1)
