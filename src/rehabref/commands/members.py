"""``rehabref members import --hmo CODE FILE.csv``: load an HMO's member registry."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from rehabref.config import load_settings
from rehabref.csv_imports import run_import_command
from rehabref.eligibility.codes import HMO_CODES
from rehabref.eligibility.csv_import import import_csv
from rehabref.instance_secret import secret_box

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
    ring = secret_box(load_settings()).ring  # names and phones are stored sealed
    run_import_command(
        title=f"importing {hmo} members",
        file=file,
        run=lambda db, advance: import_csv(db, ring, hmo, file, advance=advance),
    )
