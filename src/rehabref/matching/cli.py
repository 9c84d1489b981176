"""``rehabref physios ...``: the physiotherapist registry from the command line."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rehabref.config import load_settings
from rehabref.db import Database
from rehabref.matching.csv_import import CsvFormatError, ImportReport, count_rows, import_csv

physios_app = typer.Typer(help="The physiotherapist registry.", no_args_is_help=True)


@physios_app.command("import")
def import_command(
    file: Annotated[Path, typer.Argument(help="CSV file (see docs/matching.md for columns).")],
) -> None:
    """Validate and upsert physiotherapists by license number; bad rows are listed by line.

    Exit status 0 when every row was imported, 1 when some rows were rejected (the valid
    rows are still imported), 2 when the file cannot be read.
    """
    err = Console(stderr=True)
    if not file.is_file():
        err.print(f"error: no such file: {file}")
        raise typer.Exit(2)
    settings = load_settings()
    total = count_rows(file)

    async def work() -> ImportReport:
        db = Database(settings.database_url, pool_size=2)
        try:
            with Progress(
                TextColumn("importing physiotherapists"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
            ) as progress:
                task = progress.add_task("import", total=total)
                return await import_csv(db, file, advance=lambda n: progress.advance(task, n))
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
