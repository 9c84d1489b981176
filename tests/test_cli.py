"""The `rehabref` command as operators use it (DESIGN section 3): partners create, migrate,
operators create. Commands run as real subprocesses against the test database."""

from __future__ import annotations

import hashlib
import json
import math
import secrets
import string
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import phonenumbers
import psycopg
import pytest
from sqlalchemy import create_engine, inspect, select, text
from sqlalchemy.engine import make_url

from rehabref.db import sync_url
from rehabref.instance_secret import SecretBox
from rehabref.sandbox.phones import TEST_PHONES
from rehabref.tables import metadata
from tests.support.api import REFERRALS, bearer
from tests.support.databases import postgres_admin_url, selected_backend
from tests.support.partners import TEST_SECRET_KEY
from tests.support.server import free_port, isolated_environ

BASE62 = set(string.ascii_letters + string.digits)


def rehabref(database_url: str, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {
        **isolated_environ(),
        "REHABREF_DATABASE_URL": database_url,
        "REHABREF_SECRET_KEY": TEST_SECRET_KEY,
        **settings,
    }
    return subprocess.run(
        [sys.executable, "-m", "rehabref.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def all_stored_text(database_url: str) -> str:
    """Every value of every table, as one string, to search for secrets in clear."""
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            existing = set(inspect(conn).get_table_names())
            parts = []
            for name, table in metadata.tables.items():
                if name in existing:
                    for row in conn.execute(select(table)):
                        parts.extend(str(value) for value in row)
            return "\n".join(parts)
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def onboarded(database_url) -> dict:
    result = rehabref(
        database_url,
        "partners",
        "create",
        "--name",
        "CLI Clinic",
        "--json",
        "--commission-bps",
        "1250",
        "--show-payments",
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_partners_create_prints_exactly_the_documented_shape(onboarded):
    assert set(onboarded) == {"partner_id", "keys", "sandbox"}
    assert onboarded["partner_id"].startswith("ptn_")
    assert set(onboarded["keys"]) == {"sk_test", "sk_live", "pk_test", "whsec_test", "whsec_live"}
    for name, key in onboarded["keys"].items():
        assert key.startswith(f"{name}_")
    assert set(onboarded["sandbox"]) == {"test_phones"}
    phones = onboarded["sandbox"]["test_phones"]
    assert phones == list(TEST_PHONES)
    assert len(phones) == 5 and len(set(phones)) == 5
    for phone in phones:
        parsed = phonenumbers.parse(phone, None)
        assert phonenumbers.is_valid_number(parsed)
        assert phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164) == phone


def test_json_output_is_a_single_line(database_url):
    result = rehabref(database_url, "partners", "create", "--name", "One Line", "--json")
    assert result.returncode == 0
    assert len(result.stdout.strip().splitlines()) == 1
    assert result.stderr == ""


def test_keys_carry_at_least_192_random_bits(onboarded):
    for name, key in onboarded["keys"].items():
        random_part = key.removeprefix(f"{name}_")
        assert set(random_part) <= BASE62
        assert len(random_part) * math.log2(62) >= 192


def test_keys_are_stored_only_as_sha256(onboarded, database_url, sql):
    stored = all_stored_text(database_url)
    for key in onboarded["keys"].values():
        assert key not in stored
        assert key.rsplit("_", 1)[1] not in stored
    with sql.connect() as conn:
        hashes = set(
            conn.execute(
                text("SELECT key_hash FROM api_keys WHERE partner_id = :p"),
                {"p": onboarded["partner_id"]},
            ).scalars()
        )
    expected = {
        hashlib.sha256(onboarded["keys"][name].encode()).hexdigest()
        for name in ("sk_test", "sk_live", "pk_test")
    }
    assert hashes == expected


def test_webhook_secrets_are_sealed_not_stored_in_clear(onboarded, sql):
    with sql.connect() as conn:
        rows = conn.execute(
            text("SELECT environment, sealed_secret FROM webhook_secrets WHERE partner_id = :p"),
            {"p": onboarded["partner_id"]},
        ).all()
    box = SecretBox(TEST_SECRET_KEY)
    assert {row.environment: box.unseal(row.sealed_secret) for row in rows} == {
        "test": onboarded["keys"]["whsec_test"],
        "live": onboarded["keys"]["whsec_live"],
    }


def test_commercial_options_are_stored(onboarded, sql):
    with sql.connect() as conn:
        row = conn.execute(
            text(
                "SELECT contract, commission_bps, show_payments, name FROM partners WHERE id = :p"
            ),
            {"p": onboarded["partner_id"]},
        ).one()
    assert (row.contract, row.commission_bps, bool(row.show_payments), row.name) == (
        "v1",
        1250,
        True,
        "CLI Clinic",
    )


def test_printed_keys_work_against_the_api(onboarded, client):
    keys = onboarded["keys"]
    assert client.get(REFERRALS, headers=bearer(keys["sk_test"])).status_code == 200
    assert client.get(REFERRALS, headers=bearer(keys["sk_live"])).status_code == 200
    assert client.get(REFERRALS, headers=bearer(keys["pk_test"])).status_code == 403


def test_contract_g_partner(database_url, sql):
    result = rehabref(
        database_url, "partners", "create", "--name", "G Clinic", "--contract", "g", "--json"
    )
    assert result.returncode == 0, result.stderr
    partner_id = json.loads(result.stdout)["partner_id"]
    with sql.connect() as conn:
        contract = conn.execute(
            text("SELECT contract FROM partners WHERE id = :p"), {"p": partner_id}
        ).scalar_one()
    assert contract == "g"


def test_contact_email_is_stored(database_url, sql):
    result = rehabref(
        database_url,
        "partners",
        "create",
        "--name",
        "Mail",
        "--contact-email",
        "ops@mail.example",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    partner_id = json.loads(result.stdout)["partner_id"]
    with sql.connect() as conn:
        stored = conn.execute(
            text("SELECT contact_email FROM partners WHERE id = :p"), {"p": partner_id}
        ).scalar_one()
    assert stored == "ops@mail.example"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--name", "X", "--contract", "v2"), "contract"),
        (("--name", "X", "--commission-bps", "10001"), "commission-bps"),
        (("--name", "   "), "name"),
        (("--name", "X", "--contact-email", "not-an-address"), "contact-email"),
    ],
)
def test_partners_create_refuses_bad_options(database_url, args, message):
    result = rehabref(database_url, "partners", "create", *args, "--json")
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_human_output_warns_that_keys_are_shown_once(database_url):
    result = rehabref(database_url, "partners", "create", "--name", "Readable")
    assert result.returncode == 0
    assert json.loads(result.stdout)["keys"]["sk_test"].startswith("sk_test_")
    assert "shown once" in result.stderr


def test_operators_create_prints_a_token_stored_only_as_a_hash(database_url, sql):
    result = rehabref(database_url, "operators", "create", "--name", "Ngozi", "--json")
    assert result.returncode == 0, result.stderr
    created = json.loads(result.stdout)
    token = created["token"]
    assert token.startswith("op_")
    assert len(token.removeprefix("op_")) * math.log2(62) >= 192
    assert token not in all_stored_text(database_url)
    with sql.connect() as conn:
        stored = conn.execute(
            text("SELECT count(*) FROM operators WHERE token_hash = :h"),
            {"h": hashlib.sha256(token.encode()).hexdigest()},
        ).scalar_one()
    assert stored == 1


def test_operators_create_refuses_an_empty_name(database_url):
    result = rehabref(database_url, "operators", "create", "--name", " ", "--json")
    assert result.returncode == 2


def test_a_revoked_operator_token_is_refused_at_once(database_url, client):
    created = json.loads(
        rehabref(database_url, "operators", "create", "--name", "Leaving", "--json").stdout
    )
    headers = {"Authorization": f"Bearer {created['token']}"}
    assert client.get("/api/v1/ops/referrals", headers=headers).status_code == 200
    result = rehabref(database_url, "operators", "revoke", "--operator-id", created["operator_id"])
    assert result.returncode == 0, result.stderr
    assert client.get("/api/v1/ops/referrals", headers=headers).status_code == 401
    again = rehabref(database_url, "operators", "revoke", "--operator-id", created["operator_id"])
    assert again.returncode == 2


@contextmanager
def empty_database(tmp_path: Path) -> Iterator[str]:
    if selected_backend() == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    admin = make_url(postgres_admin_url()).set(drivername="postgresql")
    admin_dsn = admin.render_as_string(hide_password=False)
    name = f"rehabref_cli_{secrets.token_hex(4)}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_migrate_builds_an_empty_database_and_is_repeatable(tmp_path):
    with empty_database(tmp_path) as url:
        first = rehabref(url, "migrate")
        assert first.returncode == 0, first.stderr
        assert "database is up to date" in first.stdout
        engine = create_engine(sync_url(url))
        try:
            tables = set(inspect(engine).get_table_names())
        finally:
            engine.dispose()
        assert set(metadata.tables) <= tables
        assert "alembic_version" in tables
        again = rehabref(url, "migrate")
        assert again.returncode == 0, again.stderr
        onboarded = rehabref(url, "partners", "create", "--name", "Fresh", "--json")
        assert onboarded.returncode == 0, onboarded.stderr


def test_help_lists_the_operator_commands(database_url):
    result = rehabref(database_url, "--help")
    assert result.returncode == 0
    for command in ("migrate", "serve", "partners", "operators"):
        assert command in result.stdout


def test_serve_and_worker_refuse_a_database_that_is_not_migrated(tmp_path):
    with empty_database(tmp_path) as url:
        for command in (["serve", "--port", str(free_port())], ["worker"]):
            refused = rehabref(url, *command)
            assert refused.returncode == 2, refused.stderr
            assert "run `rehabref migrate` first" in refused.stderr
            assert "Traceback" not in refused.stderr + refused.stdout


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("REHABREF_RATE_LIMIT", "lots"),
        ("REHABREF_PORT", "eighty"),
        ("REHABREF_MESSAGING", "consol"),
        ("REHABREF_TRUSTED_PROXIES", "proxy.internal"),
    ],
)
def test_a_bad_setting_stops_any_command_with_one_line_naming_it(database_url, variable, value):
    refused = rehabref(database_url, "migrate", **{variable: value})
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith(f"error: {variable}: {value!r}")
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "database is up to date" not in refused.stdout


def test_serve_and_worker_refuse_an_unusable_key_file_with_one_line(database_url, tmp_path):
    key_file = tmp_path / "broken.key"
    key_file.write_text("k1:too-short\n")
    for command in (["serve", "--port", str(free_port())], ["worker"]):
        refused = rehabref(
            database_url,
            *command,
            REHABREF_SECRET_KEY="",
            REHABREF_SECRET_KEY_FILE=str(key_file),
        )
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.strip() == (
            f"error: REHABREF_SECRET_KEY_FILE: {key_file}: key 'k1' is shorter than 32 characters"
        )
        assert "too-short" not in refused.stderr


def test_a_command_that_creates_the_key_file_says_where_once(database_url, tmp_path):
    key_file = tmp_path / "first.key"
    settings = {"REHABREF_SECRET_KEY": "", "REHABREF_SECRET_KEY_FILE": str(key_file)}
    first = rehabref(database_url, "partners", "create", "--name", "Key Clinic", **settings)
    assert first.returncode == 0, first.stderr
    assert f"note: created the key file {key_file}" in first.stderr
    again = rehabref(database_url, "partners", "create", "--name", "Key Clinic 2", **settings)
    assert again.returncode == 0, again.stderr
    assert "created the key file" not in again.stderr
