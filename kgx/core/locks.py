"""File locks that make concurrent use of one checkout, or one shared folder, safe.

``flock`` locks belong to an open file, so the kernel drops them when the process dies: a
killed run never leaves a stale lock behind. The holder writes who it is into the lock file,
so that a refused second invocation can name the process it is waiting for.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path


class Busy(RuntimeError):
    """Another live process holds the lock; the message names it."""


@contextlib.contextmanager
def exclusive(path: Path, what: str) -> Iterator[None]:
    """Hold ``path`` for the block, or raise :class:`Busy` at once if another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise Busy(
                f"{what} is already running ({holder}); wait for it to end, "
                f"or stop it: a rerun then resumes where it stopped"
            ) from None
        try:
            handle.truncate(0)
            handle.write(f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}")
            handle.flush()
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def waiting(path: Path) -> Iterator[None]:
    """Hold ``path`` for the block, waiting for any other holder (short critical sections)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
