"""A message worker killed in the middle of a send: the message is sent by another worker
once the dead one's lease passes; nothing is lost (at least once), on both databases."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import text

from tests.channels.conftest import new_phone, provider_env, wait_for
from tests.conftest import auth
from tests.support import graph_api
from tests.support.graph_api import GraphApi
from tests.support.payloads import v1_referral
from tests.support.server import ServerProcess
from tests.support.smtp_server import SmtpServer
from tests.support.twilio_api import TwilioApi

LEASE = "15"


@pytest.fixture(scope="module")
def env(graph: GraphApi, twilio: TwilioApi, smtp: SmtpServer) -> dict[str, str]:
    return {**provider_env(graph, twilio, smtp), "REHABREF_MESSAGE_LEASE_SECONDS": LEASE}


@pytest.fixture(scope="module")
def api_only(database_url, env, tmp_path_factory) -> Iterator[ServerProcess]:
    log = tmp_path_factory.mktemp("crash") / "api.log"
    process = ServerProcess(database_url, log, **env).start("--no-worker")
    yield process
    process.stop()


def start_worker(api_only: ServerProcess, log_name: str) -> subprocess.Popen[bytes]:
    log = (api_only.log_path.parent / log_name).open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "rehabref.cli", "worker"],
        env=api_only.env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def message_state(sql, referral_id: str) -> str | None:
    with sql.connect() as conn:
        return conn.execute(
            text("SELECT state FROM outbound_messages WHERE referral_id = :r"),
            {"r": referral_id},
        ).scalar()


def test_a_send_cut_off_by_a_killed_worker_is_sent_by_the_next(api_only, graph, partner, sql):
    phone = new_phone()
    digits = phone[1:]

    def first_hangs(request: graph_api.GraphRequest, _index: int) -> graph_api.Answer:
        earlier = [r for r in list(graph.requests) if r.json().get("to") == digits]
        hang = request.json().get("to") == digits and len(earlier) == 1
        return graph_api.Answer(delay=30 if hang else 0)

    graph.behaviour = first_hangs
    first = start_worker(api_only, "worker-1.log")
    second = None
    try:
        with httpx.Client(base_url=api_only.base_url, timeout=30) as client:
            created = client.post(
                "/api/v1/partners/referrals",
                json=v1_referral(patient={"first_name": "Ife", "phone": phone, "city": "Lagos"}),
                headers=auth(partner["keys"]["sk_live"], "crash-1"),
            )
        assert created.status_code == 201, created.text
        referral_id = created.json()["referral_id"]
        wait_for(
            lambda: any(r.json().get("to") == digits for r in list(graph.requests)),
            what="the first send to reach the provider",
        )
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        assert message_state(sql, referral_id) == "sending"

        second = start_worker(api_only, "worker-2.log")
        wait_for(
            lambda: message_state(sql, referral_id) == "sent",
            timeout=float(LEASE) + 20,
            what="the message sent by the second worker",
        )
        sends = [r for r in list(graph.requests) if r.json().get("to") == digits]
        assert len(sends) == 2  # at least once: the cut-off send, then the real one
    finally:
        graph.behaviour = graph_api.succeed
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=10)
