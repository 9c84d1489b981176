"""Every command in README.md and docs/*.md runs against a fresh server, so the docs cannot
drift (the rules: tests/support/doc_blocks.py and docs/testing.md#runnable-documentation).

One fresh database and one real `rehabref serve` (with its worker) on a free loopback port
serve the whole module; `rehabref partners demo`, what `make run` prints, runs first and
starts every page's transcript. Pages run as a reader follows them: the README first, then
the guides; each page's blocks in order in bash (``set -eu -o pipefail``), exported variables
carried from one block to the next, in the page's own scratch directory where ``.venv`` is
this checkout's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.databases import fresh_database
from tests.support.doc_blocks import (
    Block,
    DocProblem,
    missing_parts,
    resolve_placeholders,
    shell_blocks,
)
from tests.support.server import ServerProcess, free_port

ROOT = Path(__file__).resolve().parents[2]
# The README first: the guides assume its walkthrough (and its listings assume nothing else ran).
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK_TIMEOUT_SECONDS = 60
OUTPUT_WAIT_SECONDS = 10


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in shell_blocks(page, ROOT)]


def pages_with_commands() -> list[str]:
    pages = []
    for page in PAGES:
        try:
            blocks = shell_blocks(page, ROOT)
        except DocProblem:
            continue  # reported by test_every_command_block_is_run_or_marked_with_a_reason
        if any(block.not_run is None for block in blocks):
            pages.append(str(page.relative_to(ROOT)))
    return pages


def test_every_command_block_is_run_or_marked_with_a_reason():
    blocks = all_blocks()
    run = [block for block in blocks if block.not_run is None]
    marked = [block for block in blocks if block.not_run is not None]
    assert len(run) >= 20, [block.label for block in run]
    assert all(block.not_run for block in marked)
    # The walkthroughs a new partner and a new coordinator follow are run, not marked.
    assert sum(block.page == "README.md" for block in run) >= 12


class PageShell:
    """Runs a page's blocks one after another, like a reader's terminal: one output log,
    exported variables carried over, background processes kept until the page is done."""

    def __init__(self, workdir: Path, env: dict[str, str], log: Path) -> None:
        self.workdir, self.env, self.log = workdir, env, log
        self.state = workdir / ".doc-state"
        self.state.touch()
        log.touch()
        self.sessions: list[int] = []

    def run(self, script: str) -> tuple[int, int]:
        """The exit status and where the block's output starts in the log."""
        start = self.log.stat().st_size
        wrapped = (
            f'set -eu -o pipefail\nsource "{self.state}"\n{script}\nexport -p > "{self.state}"\n'
        )
        with self.log.open("a") as sink:
            process = subprocess.Popen(
                ["bash", "-c", wrapped],
                cwd=self.workdir,
                env=self.env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            self.sessions.append(process.pid)
            try:
                return process.wait(timeout=BLOCK_TIMEOUT_SECONDS), start
            except subprocess.TimeoutExpired:
                return -1, start

    def output_since(self, start: int) -> str:
        with self.log.open("rb") as log:
            log.seek(start)
            return log.read().decode(errors="replace")

    def close(self) -> None:
        for session in self.sessions:
            # Each block is its own process group; only what the page started is stopped.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(session, signal.SIGTERM)


def shown_parts_missing(shell: PageShell, start: int, expected: str) -> tuple[list[str], str]:
    """What the shown output lacks, waiting a little for output that arrives later (a
    background receiver printing a webhook)."""
    deadline = time.monotonic() + OUTPUT_WAIT_SECONDS
    while True:
        output = shell.output_since(start)
        missing = missing_parts(expected, output)
        if not missing or time.monotonic() > deadline:
            return missing, output
        time.sleep(0.2)


@dataclass(frozen=True)
class DocsServer:
    base_url: str
    env: dict[str, str]
    make_run_output: str


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocsServer]:
    tmp = tmp_path_factory.mktemp("docs-server")
    with fresh_database(tmp) as database_url:
        server = ServerProcess(database_url, tmp / "server.log").start()
        try:
            env = {
                **server.env,
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                "BASE": server.base_url,
            }
            demo = subprocess.run(
                [sys.executable, "-m", "rehabref.cli", "partners", "demo"],
                env=env,
                capture_output=True,
                text=True,
                timeout=BLOCK_TIMEOUT_SECONDS,
                check=True,
            )
            yield DocsServer(server.base_url, env, demo.stdout)
        finally:
            server.stop()


@pytest.mark.parametrize("page", pages_with_commands())
def test_the_commands_of_the_page_run_as_documented(page, docs_server, tmp_path):
    blocks = [block for block in shell_blocks(ROOT / page, ROOT) if block.not_run is None]
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / ".venv").symlink_to(Path(sys.prefix))
    (workdir / "examples").symlink_to(ROOT / "examples")
    receiver_port = free_port()
    shell = PageShell(
        workdir, {**docs_server.env, "RECEIVER_PORT": str(receiver_port)}, tmp_path / "page.log"
    )
    transcript = docs_server.make_run_output
    try:
        for block in blocks:
            script = resolve_placeholders(
                block.commands(), transcript, docs_server.base_url, receiver_port
            )
            status, start = shell.run(script)
            output = shell.output_since(start)
            assert status == 0, f"{block.label} exited {status}:\n{script}\n---\n{output}"
            expected = block.expected_output()
            if expected:
                missing, output = shown_parts_missing(shell, start, expected)
                assert not missing, (
                    f"{block.label}: the output lacks {missing}\n{script}\n---\n{output}"
                )
            transcript += output
    finally:
        shell.close()
