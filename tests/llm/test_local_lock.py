"""The in-process local model takes a machine-wide lock, so parallel runs queue instead of thrashing."""

from __future__ import annotations

import subprocess
import sys

from kgx.llm.local_setup import machine_lock

PROBE = """
import fcntl, sys
with open(sys.argv[1], "a") as handle:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("busy")
    else:
        print("free")
"""


def probe(path) -> str:
    return subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_another_process_waits_while_a_generation_holds_the_lock(monkeypatch, tmp_path):
    lock = tmp_path / "llm.lock"
    monkeypatch.setattr("kgx.llm.local_setup.MACHINE_LOCK", lock)
    with machine_lock():
        assert probe(lock) == "busy"
    assert probe(lock) == "free"
