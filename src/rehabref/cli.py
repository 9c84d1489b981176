"""The ``rehabref`` command: migrate, serve, partners (the operator contract)."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from rehabref.commands.audit import audit_app
from rehabref.commands.invoices import invoices_app
from rehabref.commands.members import members_app
from rehabref.commands.physios import physios_app
from rehabref.commands.rights import data_subject_app, retention_command
from rehabref.commands.running import run_with_database
from rehabref.config import ConfigError, Settings, load_settings
from rehabref.crypto import KeyRingError
from rehabref.db import Database
from rehabref.instance_secret import SecretBox, secret_box
from rehabref.sandbox.phones import TEST_PHONES

app = typer.Typer(
    help="rehabref: partner referral and rehabilitation coordination service.",
    no_args_is_help=True,
    add_completion=False,
)
partners_app = typer.Typer(help="Onboard partners and manage their keys.", no_args_is_help=True)
keys_app = typer.Typer(help="Rotate, revoke and list a partner's API keys.", no_args_is_help=True)
partners_app.add_typer(keys_app, name="keys")
webhook_secret_app = typer.Typer(help="Webhook signing secrets.", no_args_is_help=True)
partners_app.add_typer(webhook_secret_app, name="webhook-secret")
app.add_typer(partners_app, name="partners")
operators_app = typer.Typer(
    help="Coordinator (operator) tokens for the ops API.", no_args_is_help=True
)
app.add_typer(operators_app, name="operators")
app.add_typer(physios_app, name="physios")
app.add_typer(members_app, name="members")
app.add_typer(invoices_app, name="invoices")
app.add_typer(audit_app, name="audit")
app.add_typer(data_subject_app, name="data-subject")
app.command("retention")(retention_command)


async def _box(db: Database, settings: Settings) -> SecretBox:
    return _key_ring(settings)


def _key_ring(settings: Settings) -> SecretBox:
    """The ring, saying so when this command had to create the key file: every process of
    the installation must use that same file (or REHABREF_SECRET_KEY)."""
    key_file = Path(settings.secret_key_file)
    existed = bool(settings.secret_key) or key_file.exists()
    try:
        box = secret_box(settings)
    except KeyRingError as exc:
        _fail(str(exc))
        raise  # unreachable: _fail exits
    if not existed:
        typer.echo(
            f"note: created the key file {key_file.resolve()} (mode 0600); every rehabref "
            "process must use this file or REHABREF_SECRET_KEY, and back it up apart from "
            "the database",
            err=True,
        )
    return box


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@app.callback()
def _check_settings() -> None:
    # Every command reads the settings: a bad REHABREF_* value is one clear line and exit
    # status 2 before any work, not a traceback from deep inside start-up.
    try:
        load_settings()
    except ConfigError as exc:
        _fail(str(exc))


def _require_key_ring(settings: Settings) -> None:
    """Read (or, on first start, create) the key ring before serving: an unreadable or
    malformed key file is one line and exit status 2, not a failed start-up in each worker."""
    _key_ring(settings)


def _require_migrated(settings: Settings) -> None:
    """Refuse to serve a schema older than this code (new columns would fail on first use)."""
    from rehabref.migrate import missing_revisions

    missing = missing_revisions(settings.database_url)
    if missing is None:
        typer.echo(
            "warning: the database cannot be reached yet; /readyz answers 503 until it can",
            err=True,
        )
    elif missing:
        _fail(
            f"the database lacks {len(missing)} migration(s) of this release "
            f"({', '.join(missing)}); run `rehabref migrate` first"
        )


@app.command()
def migrate() -> None:
    """Create or upgrade the database schema."""
    from rehabref.migrate import upgrade

    upgrade(load_settings().database_url)
    typer.echo("database is up to date")


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (REHABREF_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (REHABREF_PORT).")] = None,
    workers: Annotated[
        int | None, typer.Option(help="Processes; default 1 on SQLite, one per core on PostgreSQL.")
    ] = None,
    no_worker: Annotated[
        bool, typer.Option("--no-worker", help="Do not run the delivery worker.")
    ] = False,
) -> None:
    """Serve the API (uvicorn, uvloop, httptools)."""
    from rehabref import serving

    settings = load_settings()
    if host:
        settings = replace(settings, host=host)
    if port:
        settings = replace(settings, port=port)
    _require_migrated(settings)
    _require_key_ring(settings)
    if workers is None:
        workers = 1 if settings.is_sqlite else (os.cpu_count() or 1)
    serving.run(serving.AppFactory(settings, run_worker=not no_worker), workers=workers)


@partners_app.command("create")
def partners_create(
    name: Annotated[str, typer.Option(help="Partner name.")],
    contract: Annotated[str, typer.Option(help="v1 or g.")] = "v1",
    commission_bps: Annotated[int | None, typer.Option(help="Commission in basis points.")] = None,
    commission_fixed_minor: Annotated[
        int | None, typer.Option(help="Fixed commission per paid referral, minor units.")
    ] = None,
    show_payments: Annotated[bool, typer.Option(help="Partner sees paid amounts.")] = False,
    contact_email: Annotated[
        str | None, typer.Option(help="Where the partner is told of a disabled webhook endpoint.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
) -> None:
    """Onboard a partner; prints its keys once (they are stored only as hashes)."""
    from rehabref.partners.service import PartnerError, create_partner

    async def work(db: Database, settings: Settings) -> dict[str, Any]:
        box = await _box(db, settings)
        async with db.write() as conn:
            onboarding = await create_partner(
                conn,
                box=box,
                name=name,
                contract=contract,
                commission_bps=commission_bps,
                commission_fixed_minor=commission_fixed_minor,
                show_payments=show_payments,
                contact_email=contact_email,
            )
        return onboarding.as_dict(test_phones=TEST_PHONES)

    try:
        result = run_with_database(work)
    except PartnerError as exc:
        _fail(str(exc))
        return
    _print_once(result, as_json)


def _print_once(result: dict[str, Any], as_json: bool) -> None:
    typer.echo(json.dumps(result, indent=None if as_json else 2))
    if not as_json:
        typer.echo("Store these keys now: they are shown once and kept only as hashes.", err=True)


DEMO_OPERATOR_NAME = "Demo coordinator"


@partners_app.command("demo")
def partners_demo() -> None:
    """Create a demo sandbox partner and a demo console operator on a new database (used by
    `make run`); their keys and token are printed only when created, the console's address
    every time."""
    from rehabref.ops.auth import count_operators, create_operator
    from rehabref.partners.service import count_partners, create_partner

    async def work(
        db: Database, settings: Settings
    ) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
        box = await _box(db, settings)
        partner: dict[str, Any] | None = None
        operator: dict[str, str] | None = None
        async with db.write() as conn:
            if await count_partners(conn) == 0:
                onboarding = await create_partner(
                    conn,
                    box=box,
                    name="Demo Clinic",
                    contract="v1",
                    commission_bps=1000,
                    show_payments=True,
                )
                partner = onboarding.as_dict(test_phones=TEST_PHONES)
            if await count_operators(conn) == 0:
                operator = await create_operator(conn, name=DEMO_OPERATOR_NAME)
        return partner, operator

    partner, operator = run_with_database(work)
    # Printed on the terminal only, never through the logger: these are the only copies of
    # the secrets (the database keeps hashes).
    if partner is None:
        typer.echo(
            "A partner exists already; its keys were shown when it was created. "
            "Create another with: rehabref partners create --name NAME"
        )
    else:
        typer.echo("Demo sandbox partner created. Test keys (shown once):")
        _print_once(partner, False)
    console_url = f"{load_settings().base_url}/console"
    if operator is None:
        typer.echo(
            f"Console: {console_url} (sign in with an operator token; the demo one was shown "
            "when it was created; make another with: rehabref operators create --name NAME)"
        )
    else:
        typer.echo(
            f"Demo operator created. Sign in to the console at {console_url} "
            "with this token (shown once):"
        )
        _print_once(operator, False)


@keys_app.command("rotate")
def keys_rotate(
    partner: Annotated[str, typer.Option(help="Partner id (ptn_...).")],
    key_type: Annotated[str, typer.Option("--type", help="sk_test, sk_live, pk_test or pk_live.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Issue a second active key; revoke the old one once the partner has switched."""
    from rehabref.partners.service import PartnerError, rotate_key

    async def work(db: Database, settings: Settings) -> dict[str, str]:
        async with db.write() as conn:
            return await rotate_key(conn, partner_id=partner, key_type=key_type)

    try:
        result = run_with_database(work)
    except PartnerError as exc:
        _fail(str(exc))
        return
    _print_once(dict(result), as_json)


@keys_app.command("revoke")
def keys_revoke(
    partner: Annotated[str, typer.Option(help="Partner id (ptn_...).")],
    key_id: Annotated[str, typer.Option("--key-id", help="Key id (key_...), see keys list.")],
) -> None:
    """Revoke a key; API nodes stop accepting it within seconds (auth cache)."""
    from rehabref.partners.service import PartnerError, revoke_key

    async def work(db: Database, settings: Settings) -> None:
        async with db.write() as conn:
            await revoke_key(conn, partner_id=partner, key_id=key_id)

    try:
        run_with_database(work)
    except PartnerError as exc:
        _fail(str(exc))
    typer.echo(f"revoked {key_id}")


@keys_app.command("list")
def keys_list(partner: Annotated[str, typer.Option(help="Partner id (ptn_...).")]) -> None:
    """List a partner's keys (ids and prefixes only)."""
    from rehabref.partners.service import PartnerError, list_keys

    async def work(db: Database, settings: Settings) -> list[dict[str, Any]]:
        async with db.read() as conn:
            return await list_keys(conn, partner_id=partner)

    try:
        typer.echo(json.dumps(run_with_database(work), indent=2))
    except PartnerError as exc:
        _fail(str(exc))


@app.command()
def worker() -> None:
    """Run the webhook delivery worker (and periodic jobs) until SIGTERM/SIGINT."""
    import uvloop

    from rehabref.commands.worker import run_standalone
    from rehabref.logging import configure_logging

    settings = load_settings()
    _require_migrated(settings)
    _require_key_ring(settings)
    configure_logging(settings.log_level)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(run_standalone(settings))


@webhook_secret_app.command("rotate")
def webhook_secret_rotate(
    partner: Annotated[str, typer.Option(help="Partner id (ptn_...).")],
    env: Annotated[str, typer.Option("--env", help="test or live.")],
    overlap_hours: Annotated[
        float, typer.Option(help="Hours the previous secret keeps signing too.")
    ] = 24,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Issue a new webhook secret (printed once); both sign deliveries during the overlap."""
    from rehabref.events.secrets import SecretRotationError, rotate_secret

    async def work(db: Database, settings: Settings) -> dict[str, str]:
        box = await _box(db, settings)
        async with db.write() as conn:
            return await rotate_secret(
                conn, box=box, partner_id=partner, environment=env, overlap_hours=overlap_hours
            )

    try:
        result = run_with_database(work)
    except SecretRotationError as exc:
        _fail(str(exc))
        return
    _print_once(result, as_json)


@operators_app.command("create")
def operators_create(
    name: Annotated[str, typer.Option(help="Operator name.")],
    role: Annotated[
        str, typer.Option(help="coordinator, or admin (also reads the audit trail).")
    ] = "coordinator",
    expires_in_days: Annotated[
        float | None, typer.Option(help="The token stops working after this many days.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
) -> None:
    """Create an operator; prints its ops API token once (stored only as a hash)."""
    from rehabref.clock import utcnow
    from rehabref.ops.auth import ROLES, create_operator

    if not name.strip():
        _fail("name must not be empty")
    if role not in ROLES:
        _fail(f"role must be one of: {', '.join(ROLES)}")
    if expires_in_days is not None and not 0 < expires_in_days <= 3660:
        _fail("expires-in-days must be more than 0 and at most 3660")
    expires_at = None if expires_in_days is None else utcnow() + timedelta(days=expires_in_days)

    async def work(db: Database, settings: Settings) -> dict[str, str]:
        async with db.write() as conn:
            return await create_operator(conn, name=name, role=role, expires_at=expires_at)

    _print_once(run_with_database(work), as_json)


@operators_app.command("enrol-totp")
def operators_enrol_totp(
    operator_id: Annotated[str, typer.Option("--operator-id", help="Operator id (opr_...).")],
) -> None:
    """Require a one-time code at console sign-in; prints the otpauth:// URI to enrol an
    authenticator app with (shown once; enrolling again replaces the secret)."""
    from rehabref.ops.totp import enrol

    async def work(db: Database, settings: Settings) -> str | None:
        box = await _box(db, settings)
        async with db.write() as conn:
            return await enrol(conn, box, operator_id)

    uri = run_with_database(work)
    if uri is None:
        _fail(f"no active operator {operator_id}")
    typer.echo(uri)


@operators_app.command("revoke")
def operators_revoke(
    operator_id: Annotated[str, typer.Option("--operator-id", help="Operator id (opr_...).")],
) -> None:
    """Revoke an operator's token: the ops API and console refuse it from the next request."""
    from rehabref.ops.auth import revoke_operator

    async def work(db: Database, settings: Settings) -> bool:
        async with db.write() as conn:
            return await revoke_operator(conn, operator_id=operator_id)

    if not run_with_database(work):
        _fail(f"no active operator {operator_id}")
    typer.echo(f"revoked {operator_id}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
