"""uvicorn serving the app, with its options handed to every server process as an object.

``uvicorn.run`` accepts several processes only for an app named by an import string, whose
options would then have to travel through environment variables. Instead the app is made by
an ``AppFactory`` holding the checked settings: uvicorn's multi-process supervisor starts
each server process with the ``spawn`` method, which pickles the uvicorn ``Config`` (and so
the factory in it) into the new process. One process is served from the same factory.
Server processes started by the supervisor exit when it dies (``rehabref.parent_death``).
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, replace

import uvicorn
from litestar.types import ASGIApp
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from rehabref.config import Settings
from rehabref.parent_death import exit_with_parent


@dataclass(frozen=True)
class AppFactory:
    """What each server process calls to build its app."""

    settings: Settings
    run_worker: bool
    # The supervisor's process id when several server processes are started: each of them
    # exits when it dies (rehabref.parent_death). None when one process serves alone.
    supervisor_pid: int | None = None

    def __call__(self) -> ASGIApp:
        # Imported in the server process: the parent supervising several of them never
        # builds an app, and stays small.
        from rehabref.app import build_asgi_app

        if self.supervisor_pid is not None:
            exit_with_parent(self.supervisor_pid)
        return build_asgi_app(self.settings, run_worker=self.run_worker)


def run(factory: AppFactory, *, workers: int) -> None:
    """Serve on the factory's host and port until stopped (uvicorn, uvloop, httptools)."""
    if workers > 1:
        factory = replace(factory, supervisor_pid=os.getpid())
    config = uvicorn.Config(
        factory,
        factory=True,
        host=factory.settings.host,
        port=factory.settings.port,
        workers=workers,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_config=None,
        proxy_headers=False,
    )
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):
        if workers > 1:
            Multiprocess(config, sockets=[config.bind_socket()]).run()
            return
        server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
