"""Temp stores of builds that were killed: told apart from builds still running, and removed.

A store is built in a temp directory beside its final place (``kgx.kg.pipelines.workspace``) and the
directory is removed when the build ends, however it ends, except when the process is killed
(``kill -9``, the machine's OOM killer, a power cut): then it stays, as big as the build got.
Each temp directory holds a lock file its building process holds an exclusive ``flock`` on; the
kernel drops the lock when the process dies, however it dies. The next build or opening of a
store beside it takes the lock of each such directory it finds: a lock it gets was left by a dead
build, whose directory goes; a lock it cannot get belongs to a build still running, in this
process or another, and that directory is left alone. Directories without a lock file (not made
by a build, or by a kgx from before the lock) are never touched.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from pathlib import Path
from typing import IO

LOCK = "kgx-building.lock"


def hold(work: Path) -> IO[bytes]:
    """Lock ``work`` as a build's temp directory for as long as the returned file stays open.
    The lock file gets its name only once locked, so no sweep can see it unlocked."""
    pending = work / f".{LOCK}"
    handle = pending.open("wb")
    fcntl.flock(handle, fcntl.LOCK_EX)
    handle.write(f"{os.getpid()}\n".encode())
    handle.flush()
    pending.rename(work / LOCK)
    return handle


def sweep(folder: Path) -> list[tuple[Path, int]]:
    """Remove the temp directories in ``folder`` whose build is dead; (directory, bytes) of each,
    and one line on stderr naming them."""
    removed = []
    for work in sorted(folder.glob(f".*/{LOCK}")):
        size = _remove_if_dead(work.parent)
        if size is not None:
            removed.append((work.parent, size))
    if removed:
        total = sum(size for _, size in removed)
        names = ", ".join(f"{work.name} ({_mb(size)})" for work, size in removed)
        print(
            f"kgx: removed {len(removed)} temporary store{'s' if len(removed) > 1 else ''} left by killed builds "
            f"in {folder}: {names}" + (f"; {_mb(total)} in all" if len(removed) > 1 else ""),
            file=sys.stderr,
        )
    return removed


def _remove_if_dead(work: Path) -> int | None:
    """The bytes of ``work``, removed, when no process holds its lock; None when one does (or
    another sweep removed it first)."""
    try:
        handle = (work / LOCK).open("rb")
    except FileNotFoundError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        if not work.is_dir():
            return None
        size = _size(work)
        shutil.rmtree(work, ignore_errors=True)
        return size


def _size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"
