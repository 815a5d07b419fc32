"""Children that die with their parent: no process kgx starts outlives a ``kill -9`` of it.

A parent killed by SIGKILL runs no cleanup, so its children are reparented to PID 1 and go on
(a SPARQL server holding its port, a sweep's workers holding gigabytes). Two mechanisms:

- :func:`server_preexec` (Linux): the child asks the kernel for SIGKILL when its parent dies
  (``PR_SET_PDEATHSIG``), set between fork and exec. The kernel ties that signal to the *thread*
  that forked the child, so it is used only when the main thread starts the child; a server
  started from a worker thread would otherwise die when that thread ends.
- :func:`watch_parent` (portable): a daemon thread in a Python child that kills its own process
  once its parent pid is no longer the one it was started by. It is process-wide, so it suits
  processes that other libraries spawn from any thread (joblib's loky workers).
- :func:`guard_group` (POSIX): for a server that starts its own children (``mlflow ui`` starts
  uvicorn, which starts workers and a resource tracker), none of which kgx can give a preexec. The
  server gets its own process group, and a tiny companion process kills that whole group once
  the process that started it is gone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Optional

PR_SET_PDEATHSIG = 1
WATCH_INTERVAL_S = 0.5  # how often a watched child checks its parent: orphans live at most this long


def _prctl() -> Optional[Callable[..., int]]:
    """libc's ``prctl``, looked up in the parent: a child between fork and exec should only call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (AttributeError, OSError):
        return None


_PRCTL = _prctl()


def die_with_parent() -> None:
    """In a child before exec (Linux): be killed when the thread that started it dies, even by
    ``kill -9`` of its process. Elsewhere a no-op: the child may outlive a killed parent."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)


def server_preexec() -> Optional[Callable[[], None]]:
    """The ``preexec_fn`` for a server kgx starts: :func:`die_with_parent` when the main thread
    starts it on Linux, else None (see the module docstring for why a thread must not)."""
    if _PRCTL is None or threading.current_thread() is not threading.main_thread():
        return None
    return die_with_parent


def watch_parent(parent_pid: int, interval_s: float = WATCH_INTERVAL_S) -> threading.Thread:
    """Kill this process (SIGKILL, as its parent was) once its parent is no longer ``parent_pid``:
    the parent died and the child was reparented. Checked at once, then every ``interval_s``."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval_s)
        os.kill(os.getpid(), signal.SIGKILL)

    if os.getppid() != parent_pid:  # the parent died before this child got here
        os.kill(os.getpid(), signal.SIGKILL)
    thread = threading.Thread(target=watch, name="kgx-parent-watch", daemon=True)
    thread.start()
    return thread


# The companion of guard_group (argv: parent pid, group id, interval): once its parent is gone,
# SIGKILL the group.
_GUARD = """import os, signal, sys, time
parent, group = int(sys.argv[1]), int(sys.argv[2])
while os.getppid() == parent:
    time.sleep(float(sys.argv[3]))
try:
    os.killpg(group, signal.SIGKILL)
except ProcessLookupError:
    pass
"""


def guard_group(group: int, interval_s: float = WATCH_INTERVAL_S) -> subprocess.Popen[bytes]:
    """Start a companion that SIGKILLs process group ``group`` (a server started with
    ``start_new_session=True``: its pid) once this process has died; terminate the companion
    after stopping the server. It lives at most ``interval_s`` past this process."""
    return subprocess.Popen(
        [sys.executable, "-c", _GUARD, str(os.getpid()), str(group), str(interval_s)],
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # a Ctrl-C meant for this process must not end the guard first
    )
