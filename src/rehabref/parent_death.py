"""Server processes end when the supervisor that started them dies.

Threat: ``rehabref serve --workers N`` is a supervisor with N server processes sharing its
listening socket. If the supervisor is killed outright (SIGKILL, the OOM killer, a crashed
container init), nothing tells its children: they keep serving on the port, with the old code
and settings, and a restarted service fails to bind or, with SO_REUSEPORT, runs beside them.

Each server process therefore asks the kernel for SIGTERM when its parent dies
(``prctl(PR_SET_PDEATHSIG)`` on Linux), which uvicorn answers with a graceful shutdown.
Where prctl is not available, a daemon thread notices the parent is gone (the process is
re-parented, so ``getppid()`` changes) within ``poll_seconds``. Both check once at once, for a
parent that died before the request was made.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def exit_with_parent(parent_pid: int, *, poll_seconds: float = 1.0, use_prctl: bool = True) -> str:
    """Arrange a SIGTERM to this process when ``parent_pid`` (its parent) dies; returns how
    ("prctl" or "watch"). ``use_prctl=False`` asks for the portable watch thread."""
    how = "prctl" if use_prctl and _set_parent_death_signal(signal.SIGTERM) else "watch"
    if how == "watch":
        threading.Thread(
            target=_watch, args=(parent_pid, poll_seconds), name="parent-watch", daemon=True
        ).start()
    if os.getppid() != parent_pid:  # died before the kernel was asked
        os.kill(os.getpid(), signal.SIGTERM)
    return how


def _set_parent_death_signal(signum: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name, use_errno=True)
    return bool(libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0)


def _watch(parent_pid: int, poll_seconds: float) -> None:
    while os.getppid() == parent_pid:
        time.sleep(poll_seconds)
    os.kill(os.getpid(), signal.SIGTERM)
