"""``python -m kgx.ui`` serves MLflow on loopback (no network, litellm installed: no deadlock)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest

from kgx.kg.serve import free_port
from kgx.ui import wait_up
from tests.helpers import kgx_env


@pytest.mark.slow
def test_ui_serves_the_runs_of_the_launch_directory(run, tmp_path):
    assert run("dataset.limit=2").status == "FINISHED"  # in-process: the server is what is tested
    port = free_port()
    env = kgx_env()
    env.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)  # kgx.ui must set it itself
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgx.ui", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        printed = [proc.stdout.readline()]  # "starting ...", then the URLs once it answers (the server logs too)
        while not printed[-1].startswith("dashboard: ") and printed[-1] and len(printed) < 500:
            printed.append(proc.stdout.readline())
        assert printed[0].startswith("starting the MLflow UI") and printed[-1].startswith("dashboard: "), printed
        with urllib.request.urlopen(f"{base}/health", timeout=2) as r:  # up at the moment the URL is printed
            assert r.read() == b"OK"
        assert wait_up(base, proc)
        req = urllib.request.Request(f"{base}/api/2.0/mlflow/experiments/get-by-name?experiment_name=kgx")
        with urllib.request.urlopen(req, timeout=10) as r:
            experiment = json.load(r)["experiment"]
        body = json.dumps({"experiment_ids": [experiment["experiment_id"]]}).encode()
        req = urllib.request.Request(
            f"{base}/api/2.0/mlflow/runs/search", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            runs = json.load(r)["runs"]
        assert len(runs) == 1
        metrics = {m["key"]: m["value"] for m in runs[0]["data"]["metrics"]}
        assert metrics["n_questions"] == 2
        params = {p["key"]: p["value"] for p in runs[0]["data"]["params"]}
        assert "None" not in params.values() and not any(k.startswith("llm.local.") for k in params)
        assert params["llm.name"] == "scripted" and params["dataset.limit"] == "2"
        tags = {t["key"]: t["value"] for t in experiment["tags"]}
        assert tags["mlflow.experimentKind"] == "custom_model_development"  # the runs table, not GenAI mode
        view = json.loads(tags["mlflow.sharedViewState.kgx"])
        assert {"metrics.`hits1`", "metrics.`cost_usd`", "params.`method.name`"} <= set(view["selectedColumns"])
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_ui_on_a_taken_port_says_so_and_prints_no_url(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "kgx.ui", "--port", str(port)],
            cwd=tmp_path,
            env=kgx_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode != 0
    assert "dashboard:" not in done.stdout
    assert f"cannot serve on http://127.0.0.1:{port}: Address already in use" in done.stderr
    assert f"is port {port} taken? Try --port" in done.stderr
