"""The client libraries in clients/: regenerated from the partner document they must be
identical to the committed copies; each runs the README walkthrough against a live server
(the TypeScript one with the machine's Node); both verifiers accept exactly what the
service's own signing produces."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rehabref.events.signing import signature_header
from rehabref.openapi.clients.generate import generated_files, write
from tests.support.databases import fresh_database
from tests.support.partners import onboard
from tests.support.server import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
NODE = "/usr/bin/node"
SECRET = "whsec_test_0123456789abcdef"


def test_the_committed_clients_are_what_the_generator_writes(tmp_path):
    generated = generated_files()
    assert {"python/rehabref_client/client.py", "typescript/index.d.ts"} <= set(generated)
    drifted = [
        path
        for path, text in generated.items()
        if not (CLIENTS / path).is_file() or (CLIENTS / path).read_text(encoding="utf-8") != text
    ]
    assert not drifted, f"regenerate with `python -m rehabref.openapi.clients`: {drifted}"
    # The generator writes what it reports.
    written = write(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == sorted(generated)


def test_one_method_per_partner_operation_in_both_clients():
    client_py = (CLIENTS / "python/rehabref_client/client.py").read_text(encoding="utf-8")
    client_ts = (CLIENTS / "typescript/index.d.ts").read_text(encoding="utf-8")
    for name, snake in (
        ("createReferral", "create_referral"),
        ("getReferral", "get_referral"),
        ("listReferrals", "list_referrals"),
        ("createWebhookEndpoint", "create_webhook_endpoint"),
        ("triggerSandboxWebhook", "trigger_sandbox_webhook"),
    ):
        assert f"def {snake}(" in client_py
        assert f"  {name}(" in client_ts
    assert "createReferralAlias1" not in client_ts  # a path alias is not a second method
    assert "ops" not in {line.split("(")[0].strip() for line in client_ts.splitlines()}
    models_py = (CLIENTS / "python/rehabref_client/models.py").read_text(encoding="utf-8")
    assert "PaymentRefundedEvent" in client_ts and "CommissionSettledEvent" in models_py


@pytest.fixture(scope="module")
def delivering(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str]]:
    """A server with its delivery worker (the session's server runs without one), on its own
    database so the worker sends no other test's events."""
    with fresh_database(tmp_path_factory.mktemp("clients-db")) as url:
        process = ServerProcess(url, tmp_path_factory.mktemp("logs") / "server.log").start()
        yield process, url
        process.stop()


@pytest.fixture
def walkthrough_partner(delivering: tuple[ServerProcess, str]) -> dict[str, Any]:
    return onboard(delivering[1], name="Walkthrough Clinic")


def walkthrough_env(server, partner) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "BASE": server.base_url,
        "SK": partner["keys"]["sk_test"],
        "WHSEC": partner["keys"]["whsec_test"],
    }


def check_walkthrough(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("created ref_") and lines[0].endswith(" received")
    assert any(line.startswith("refused 422 validation_error") for line in lines)
    assert any(line.startswith("registered whe_") for line in lines)
    assert any(line.startswith("verified referral.created evt_") for line in lines)
    assert lines[-2:] == ["tampered delivery refused", "walkthrough ok"]


def test_the_python_client_runs_the_walkthrough(delivering, walkthrough_partner):
    result = subprocess.run(
        [sys.executable, str(CLIENTS / "python/examples/walkthrough.py")],
        env=walkthrough_env(delivering[0], walkthrough_partner),
        capture_output=True,
        text=True,
        timeout=180,
    )
    check_walkthrough(result)


def test_the_typescript_client_runs_the_walkthrough(delivering, walkthrough_partner):
    result = subprocess.run(
        [NODE, str(CLIENTS / "typescript/examples/walkthrough.mjs")],
        env=walkthrough_env(delivering[0], walkthrough_partner),
        capture_output=True,
        text=True,
        timeout=180,
    )
    check_walkthrough(result)


def test_the_python_client_and_its_walkthrough_type_check():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "clients/python/rehabref_client",
            "clients/python/examples/walkthrough.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout


VERIFY_PY = """
import json, sys
sys.path.insert(0, sys.argv[1])
from rehabref_client import verify_webhook, WebhookVerificationError
case = json.loads(sys.stdin.read())
try:
    event = verify_webhook(case["body"].encode(), case["headers"], case["secret"], now=case["now"])
    print("ok", event["event_id"])
except WebhookVerificationError as exc:
    print("refused", exc)
"""
VERIFY_JS = """
import { verifyWebhook, WebhookVerificationError } from "%s";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const c = JSON.parse(input);
try {
  const event = verifyWebhook(c.body, c.headers, c.secret, { now: c.now });
  console.log("ok", event.event_id);
} catch (error) {
  if (!(error instanceof WebhookVerificationError)) throw error;
  console.log("refused", error.message);
}
"""


def run_verifier(language: str, case: dict[str, object]) -> str:
    if language == "python":
        command = [sys.executable, "-c", VERIFY_PY, str(CLIENTS / "python")]
    else:
        module = (CLIENTS / "typescript/index.js").as_uri()
        command = [NODE, "--input-type=module", "-e", VERIFY_JS % module]
    result = subprocess.run(
        command, input=json.dumps(case), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_both_verifiers_accept_the_service_signature_and_nothing_else(language):
    body = json.dumps({"event_id": "evt_1", "type": "referral.created", "data": {}})
    now = int(time.time())

    def case(secrets: list[str], timestamp: int, text: str = body) -> dict[str, object]:
        header = signature_header(secrets, timestamp, body.encode())
        return {
            "body": text,
            "headers": {"x-service-timestamp": str(timestamp), "X-Service-Signature": header},
            "secret": SECRET,
            "now": now,
        }

    assert run_verifier(language, case([SECRET], now)) == "ok evt_1"
    # During a rotation the header carries the old and the new secret's signatures.
    assert run_verifier(language, case(["whsec_test_old", SECRET], now)) == "ok evt_1"
    assert run_verifier(language, case(["whsec_test_other"], now)).startswith("refused")
    assert run_verifier(language, case([SECRET], now - 301)).startswith("refused")
    assert run_verifier(language, case([SECRET], now + 301)).startswith("refused")
    assert run_verifier(language, case([SECRET], now, body + " ")).startswith("refused")
    missing = {**case([SECRET], now), "headers": {"x-service-timestamp": str(now)}}
    assert run_verifier(language, missing).startswith("refused")


def test_the_typescript_declarations_and_walkthrough_type_check():
    """tsc (pinned in clients/typescript/package-lock.json, installed by `npm ci` on first use)
    checks index.d.ts and the walkthrough's use of it."""
    package = CLIENTS / "typescript"
    compiler = package / "node_modules/typescript/bin/tsc"
    if not compiler.is_file():
        install = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=package,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert install.returncode == 0, install.stdout + install.stderr
    result = subprocess.run(
        [NODE, str(compiler), "-p", "tsconfig.json"],
        cwd=package,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
