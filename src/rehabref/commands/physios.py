"""``rehabref physios ...``: the physiotherapist registry from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rehabref.csv_imports import run_import_command
from rehabref.matching.csv_import import import_csv

physios_app = typer.Typer(help="The physiotherapist registry.", no_args_is_help=True)


@physios_app.command("import")
def import_command(
    file: Annotated[Path, typer.Argument(help="CSV file (see docs/matching.md for columns).")],
) -> None:
    """Validate and upsert physiotherapists by license number; bad rows are listed by line.

    Exit status 0 when every row was imported, 1 when some rows were rejected (the valid
    rows are still imported), 2 when the file cannot be read.
    """
    run_import_command(
        title="importing physiotherapists",
        file=file,
        run=lambda db, advance: import_csv(db, file, advance=advance),
    )
