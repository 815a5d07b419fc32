"""A tracking server that is down at the start, or dies in the middle of a run: one clear message
within seconds, the answered questions kept, and the same command finishing the run once the
server is back (kgx.track.remote)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from kgx.kg.serve import free_port
from kgx.ui import wait_up
from tests.helpers import kgx_env, start_mlflow_server, stop_group
from tests.inprocess import kgx_main

pytestmark = pytest.mark.slow

ARGS = ("method=cot", "llm=scripted", "dataset.limit=8", "run.progress=false", "run.concurrency=1")


def kgx(cwd: Path, *args: str, wait: bool = True):
    command = [sys.executable, "-m", "kgx", *ARGS, *args]
    if not wait:
        return subprocess.Popen(
            command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kgx_env()
        )
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=kgx_env(), timeout=600)


def answers(folder: Path) -> dict[str, list[str]]:
    lines = (folder / "predictions.jsonl").read_text().splitlines()
    return {row["id"]: row["prediction"]["answers"] for row in map(json.loads, lines)}


def test_a_dead_server_at_the_start_is_said_at_once(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    start = time.monotonic()
    done = kgx(tmp_path, f"run.tracking_uri={url}")
    assert time.monotonic() - start < 60
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"kgx: error: the tracking server {url} did not answer while opening experiment 'kgx' " in done.stderr
    assert "Connection refused); nothing was run" in done.stderr


def test_a_sweep_against_a_dead_server_is_said_at_once(tmp_path):
    """A 4-job sweep sat 785 s in MLflow's retries; it now stops before its first job."""
    url = f"http://127.0.0.1:{free_port()}"
    sweep = ("-m", "method=io,cot", "run.seed=0,1", "llm=scripted", "dataset.limit=2", "run.progress=false")
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "kgx", *sweep, f"run.tracking_uri={url}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=kgx_env(),
        timeout=600,
    )
    assert time.monotonic() - start < 60
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            f"kgx: error: the sweep could not start: TrackingUnavailable: the tracking server {url} did not answer "
            "while opening experiment 'kgx' "
        )
    )
    assert "nothing was run" in done.stderr and not list(tmp_path.glob("outputs/**/predictions.jsonl"))


def test_a_server_dying_mid_run_keeps_the_questions_and_the_rerun_finishes_it(tmp_path):
    home, port = tmp_path / "server", free_port()
    home.mkdir()
    url = f"http://127.0.0.1:{port}"
    server = start_mlflow_server(home, port)
    assert wait_up(url, server), (home / "server.log").read_text(errors="replace")[-2000:]
    work = tmp_path / "work"
    work.mkdir()
    run = kgx(work, f"run.tracking_uri={url}", "llm.latency_s=0.5", wait=False)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # a few questions answered, the rest still to come
        logs = list(work.glob("outputs/runs/*/predictions.jsonl"))
        if logs and len(logs[0].read_text().splitlines()) >= 2:
            break
        time.sleep(0.1)
    stop_group(server)
    killed = time.monotonic()
    _, stderr = run.communicate(timeout=300)
    assert time.monotonic() - killed < 60
    assert run.returncode == 1 and "Traceback" not in stderr, stderr[-3000:]
    assert f"the tracking server {url} did not answer while logging the run" in stderr
    assert "the questions answered are kept in" in stderr
    [folder] = list((work / "outputs" / "runs").iterdir())
    assert len(answers(folder)) == 8  # the loop did not need the server

    server = start_mlflow_server(home, port)
    try:
        assert wait_up(url, server)
        again = kgx_main(work, *ARGS, f"run.tracking_uri={url}", "llm.latency_s=0.5")  # the same command
        assert again.returncode == 0, again.stderr[-3000:]
        assert "0 answered, 8 resumed, 0 billed LLM calls" in again.stdout, again.stdout
        client = MlflowClient(url)
        [logged] = client.search_runs([client.get_experiment_by_name("kgx").experiment_id])
        assert logged.info.status == "FINISHED" and logged.data.metrics["n_questions"] == 8
    finally:
        stop_group(server)
    clean = tmp_path / "clean"
    clean.mkdir()
    assert kgx_main(clean, *ARGS).returncode == 0
    assert answers(folder) == answers(next((clean / "outputs" / "runs").iterdir()))
