"""Counting what a killed process left running: every process kgx starts inherits its
environment, so a marker variable given to the parent finds all its descendants, reparented or
not (Linux: /proc)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Callable

MARK = "KGX_ORPHAN_PROBE"


def marker() -> dict[str, str]:
    """A fresh marker to add to a parent's environment."""
    return {MARK: uuid.uuid4().hex}


def marked(mark: dict[str, str]) -> list[int]:
    """The live processes (not zombies) that carry ``mark`` in their environment."""
    needle = f"{MARK}={mark[MARK]}".encode() + b"\0"
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if needle in (proc / "environ").read_bytes() and ") Z " not in (proc / "stat").read_text():
                found.append(int(proc.name))
        except OSError:  # gone meanwhile, or not ours
            continue
    return found


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout_s:g} s")
        time.sleep(0.2)


def kill_and_count(parent: subprocess.Popen, mark: dict[str, str], after_s: float) -> tuple[int, list[int]]:
    """``kill -9`` the parent; how many processes it started were still alive ``after_s`` later
    (those are then killed, so a failing check leaks nothing), and what ran at the kill."""
    before = [p for p in marked(mark) if p != parent.pid]
    parent.kill()
    parent.wait()
    time.sleep(after_s)
    left = marked(mark)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return len(left), before


def loky_workers(mark: dict[str, str]) -> int:
    """How many joblib (loky) workers carry ``mark``: a sweep's jobs are running."""
    count = 0
    for pid in marked(mark):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        count += b"popen_loky_posix" in cmdline
    return count
