"""``rehabref data-subject export|erase`` and ``rehabref retention``: patients' rights from
the command line, the same flows as the ops API (``workflows.data_subject``,
``workflows.retention``), logged with the actor ``cli``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from rehabref.clock import iso, utcnow
from rehabref.commands.running import run_with_database
from rehabref.config import Settings, load_settings
from rehabref.db import Database
from rehabref.instance_secret import secret_box
from rehabref.workflows import data_subject, retention

data_subject_app = typer.Typer(
    help="Export or erase everything held about one person (NDPA).", no_args_is_help=True
)

Phone = Annotated[str | None, typer.Option(help="The person's phone, E.164.")]
Email = Annotated[str | None, typer.Option(help="The person's e-mail address.")]


def _person(phone: str | None, email: str | None) -> data_subject.Person:
    try:
        return data_subject.person(phone, email)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _handle(kind: data_subject.Kind, who: data_subject.Person) -> data_subject.Outcome:
    async def work(db: Database, settings: Settings) -> data_subject.Outcome:
        ring = secret_box(settings).ring
        async with db.write() as conn:
            return await data_subject.handle(
                conn, ring=ring, kind=kind, who=who, actor="cli", now=utcnow()
            )

    return run_with_database(work)


@data_subject_app.command("export")
def export_command(
    phone: Phone = None,
    email: Email = None,
    out: Annotated[Path | None, typer.Option(help="Write the JSON here, not to stdout.")] = None,
    pdf: Annotated[Path | None, typer.Option(help="Also write the patient's PDF here.")] = None,
) -> None:
    """Everything held about the person, as JSON (and a PDF for the patient)."""
    who = _person(phone, email)
    outcome = _handle("export", who)
    document = json.dumps(outcome.export, indent=2, ensure_ascii=False)
    if out is None:
        typer.echo(document)
    else:
        out.write_text(document + "\n", encoding="utf-8")
        out.chmod(0o600)
    if pdf is not None and outcome.export is not None:
        # Imported here, as cli.py does: matplotlib and fpdf cost every command 0.3 s.
        from rehabref.workflows.person_export_pdf import export_pdf

        pdf.write_bytes(export_pdf(outcome.export))
        pdf.chmod(0o600)
    typer.echo(f"request {outcome.request_id}: {json.dumps(outcome.result)}", err=True)


@data_subject_app.command("erase")
def erase_command(
    phone: Phone = None,
    email: Email = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Scrub the person's personal and clinical data (irreversible); open referrals end
    first and their partners are told."""
    who = _person(phone, email)
    if not yes:
        typer.confirm("Erase this person's data everywhere? This cannot be undone", abort=True)
    outcome = _handle("erasure", who)
    typer.echo(json.dumps({"request_id": outcome.request_id, "result": outcome.result}))


def retention_command(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only report what is due; change nothing.")
    ] = False,
) -> None:
    """Apply the retention periods now (the worker does it every hour); prints rows due
    (--dry-run) or removed per data kind."""

    async def work(db: Database, settings: Settings) -> dict[str, int]:
        async with db.write() as conn:
            return await retention.enforce(
                conn,
                retention.periods_of(settings),
                ring=secret_box(settings).ring,
                now=utcnow(),
                dry_run=dry_run,
            )

    settings = load_settings()
    result = run_with_database(work)
    report = {
        "at": iso(utcnow()),
        "dry_run": dry_run,
        "periods_days": {
            "assistant_sessions": settings.retention_assistant_session_days,
            "closed_referrals": settings.retention_closed_referral_days,
        },
        "due" if dry_run else "removed": result,
    }
    typer.echo(json.dumps(report, indent=2))
