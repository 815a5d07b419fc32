"""Concurrent use as it happens: runs started together on a new tracking store, the same config
started twice, sweeps started in the same second (a run killed with -9: tests/results/test_billing.py)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from mlflow.tracking import MlflowClient

from kgx.core import locks
from kgx.core.paths import CONF_DIR
from kgx.run.compose import register_schemas
from tests.helpers import kgx_env

ARGS = ["method=io", "llm=scripted", "run.progress=false"]
RACERS = 4


def start(cwd: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kgx", *ARGS, *args],
        cwd=cwd,
        env=kgx_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
@pytest.mark.usefixtures("no_mlflow_template")
def test_runs_started_at_once_on_a_new_tracking_store(tmp_path):
    """Four processes race to create and migrate one new sqlite store (two were enough to corrupt
    it before the store lock); ten, as first written, cost two minutes of CI for the same race."""
    procs = [start(tmp_path, "dataset.limit=2", f"run.seed={i}") for i in range(RACERS)]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    assert [code for code, _ in results] == [0] * RACERS, [err[-500:] for code, err in results if code]
    db = tmp_path / "mlruns" / "mlflow.db"
    client = MlflowClient(f"sqlite:///{db}")
    found = client.search_runs([client.get_experiment_by_name("kgx").experiment_id])
    assert len(found) == RACERS and {r.info.status for r in found} == {"FINISHED"}
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert not conn.execute("SELECT name FROM sqlite_master WHERE name LIKE '_alembic_tmp%'").fetchall()


@pytest.mark.slow
def test_the_same_config_started_twice_is_refused_naming_the_first(tmp_path):
    slow = ("dataset.limit=2", "llm.latency_s=60", "llm.cache=false", "run.concurrency=1")
    first = start(tmp_path, *slow)
    deadline = time.time() + 300
    while not any(p.read_text() for p in tmp_path.glob("outputs/runs/*/.lock")):
        assert time.time() < deadline and first.poll() is None, first.stderr.read() if first.poll() else "timeout"
        time.sleep(0.2)
    second = start(tmp_path, *slow)
    assert second.wait(timeout=300) != 0
    assert f"is already running (pid {first.pid} on" in second.stderr.read()
    assert not list(tmp_path.glob("outputs/runs/*/predictions.jsonl"))  # nothing was computed twice
    first.kill()
    first.wait(timeout=30)
    (lock,) = tmp_path.glob("outputs/runs/*/.lock")
    with locks.exclusive(lock, "the run"):  # a killed holder leaves no stale lock
        pass


def test_two_sweeps_in_the_same_second_get_their_own_folders():
    register_schemas()
    dirs = []
    for _ in range(2):
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            cfg = compose(config_name="config", return_hydra_config=True)
        dirs.append((cfg.hydra.sweep.dir, cfg.hydra.sweep.dir))
    GlobalHydra.instance().clear()
    (a, a_again), (b, _) = dirs
    assert a == a_again and a != b  # drawn once per sweep, different between sweeps
    assert a.startswith("outputs/multirun/") and len(a.rsplit("-", 1)[1]) == 6
