"""What every CSV registry import shares: its report, its errors, and its CLI run.

Imports (physiotherapists, HMO members) validate each row, upsert the valid ones and
report the rejected ones by line number; the command shows a progress bar and exits 0 when
every row was imported, 1 when some were rejected, 2 when the file cannot be read.
"""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rehabref.config import load_settings
from rehabref.db import Database


class CsvFormatError(ValueError):
    """The file as a whole cannot be read (not CSV, no header, missing columns)."""


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.created + self.updated + len(self.rejected)


def count_rows(path: Path) -> int:
    """Data rows (quoted fields may span lines, so count records, not lines)."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return max(sum(1 for _ in csv.reader(handle)) - 1, 0)


Advance = Callable[[int], None]


def run_import_command(
    *, title: str, file: Path, run: Callable[[Database, Advance], Awaitable[ImportReport]]
) -> None:
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
                TextColumn(title),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
            ) as progress:
                task = progress.add_task("import", total=total)
                return await run(db, lambda n: progress.advance(task, n))
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
