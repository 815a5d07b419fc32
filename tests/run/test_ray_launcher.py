"""A sweep through ``hydra/launcher=ray`` (the ``[ray]`` extra, in the dev extra too) on a local Ray
instance the sweep starts and stops: one parent run, a child per job, a rerun skips them all."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import pytest
from mlflow.tracking import MlflowClient

from tests.helpers import kgx_env
from tests.inprocess import kgx_main

pytestmark = pytest.mark.slow

if importlib.util.find_spec("ray") is None:
    if os.environ.get("CI"):  # CI installs the dev extra, which has Ray: missing, it is a failure
        raise ImportError('ray is not installed but CI is set: pip install -e ".[dev]" (or ".[ray]")')
    pytest.skip('ray is not installed: pip install -e ".[ray]"', allow_module_level=True)


def ray_processes() -> set[int]:
    """Ray's own processes (raylet, GCS, workers) running now, by pid."""
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(name in cmdline for name in ("raylet", "gcs_server", "ray::", "default_worker.py")):
            found.add(int(pid))
    return found


@pytest.fixture
def ray_tmp():
    """Ray's session directory: short (its unix sockets must stay under 108 bytes) and removed after."""
    path = tempfile.mkdtemp(prefix="kgxray", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_sweep_over_ray_has_one_parent_two_children_and_a_rerun_skips(tmp_path, ray_tmp):
    before = ray_processes()
    store = tmp_path / "mlruns" / "mlflow.db"
    args = [
        sys.executable,
        "-m",
        "kgx",
        "-m",
        "method=io,cot",
        "llm=scripted",
        "dataset.limit=3",
        "run.progress=false",
        f"run.tracking_uri=sqlite:///{store}",
        "hydra/launcher=ray",
        "hydra.launcher.n_jobs=2",
        f"+hydra.launcher.ray.init._temp_dir={ray_tmp}",
    ]
    start = time.monotonic()
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, env=kgx_env(), timeout=600)
    wall = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"2-job sweep over Ray: {wall:.1f} s")

    client = MlflowClient(f"sqlite:///{store}")
    experiment = client.get_experiment_by_name("kgx")
    found = client.search_runs([experiment.experiment_id], max_results=100)
    [parent] = [r for r in found if r.data.tags.get("sweep")]
    children = [r for r in found if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(found) == 3 and len(children) == 2
    assert {r.info.status for r in children} == {"FINISHED"}
    assert {r.data.params["method.name"] for r in children} == {"io", "cot"}
    assert {r.data.tags["job"] for r in children} == {"method=io", "method=cot"}
    for child in children:  # real figures, computed in the Ray workers
        assert child.data.metrics["n_questions"] == 3
        assert 0 <= child.data.metrics["hits1"] <= 100
        assert child.data.metrics["llm_calls_per_q"] > 0
    assert parent.info.status == "FINISHED" and parent.data.tags["children_finished"] == "2"
    assert parent.data.metrics["hits1"] == pytest.approx(sum(r.data.metrics["hits1"] for r in children) / 2, abs=0.01)
    # the jobs ran in Ray workers, each in its own output directory of the sweep
    [sweep_dir] = (tmp_path / "outputs" / "multirun").glob("*/*")
    assert sorted(p.name for p in sweep_dir.iterdir() if p.is_dir()) == ["0", "1"]

    # the workers' own lines reach the launching terminal through Ray
    assert done.stdout.count("this invocation: 3 answered, 0 resumed") == 2

    # The rerun, one job after another in this process: which launcher ran a finished job does not matter.
    again = kgx_main(tmp_path, *args[3 : args.index("hydra/launcher=ray")])
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(client.search_runs([experiment.experiment_id], max_results=100)) == 3  # no new run
    for child in children:  # the finished children were not run again
        assert client.get_run(child.info.run_id).info.end_time == child.info.end_time
    assert again.stdout.count("already finished") == 2 and "billed" not in again.stdout + again.stderr
    assert re.search(r"sweep method [0-9a-f]{6}: 2 finished, 0 failed", again.stdout)

    # the sweep stopped the Ray instance it started
    deadline = time.monotonic() + 30
    while (left := ray_processes() - before) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"Ray processes left running: {sorted(left)}"
