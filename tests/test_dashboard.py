"""The dashboard as a user sees it: ``python -m kgx.ui`` over a small sweep, loaded in headless Chromium.

Skipped without Chromium (``apt-get install chromium``), except in CI (the environment variable
``CI`` set), where a missing Chromium fails: CI must run it (.ci/run installs it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgx.kg.serve import free_port
from kgx.ui import wait_up
from tests.helpers import kgx_env, stop_group
from tests.inprocess import kgx_main

pytestmark = pytest.mark.slow

HEADERS = ("hits1", "hits1_tog", "f1", "answer_recall", "total_tokens_per_q", "cost_usd")


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    message = "needs Chromium for the browser test of the dashboard (apt-get install chromium)"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the dashboard test, but it {message}")
    pytest.skip(message)


def render(browser: str, url: str) -> str:
    """The page's DOM once its scripts ran; wide, so that the grid renders every column."""
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=2400,1400",
            "--virtual-time-budget=15000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture
def dashboard(tmp_path: Path):
    """A sweep's store and ``kgx.ui`` serving it; yields the printed dashboard URL. The server's
    whole process group is stopped afterwards."""
    done = kgx_main(
        tmp_path,
        "-m",
        "method=io,cot",
        "llm=scripted",
        "kg=demo",
        "dataset.limit=2",
        "run.progress=false",
    )
    assert done.returncode == 0, done.stderr
    port = free_port()
    log = tmp_path / "ui.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kgx.ui", "--port", str(port)],
            cwd=tmp_path,
            env=kgx_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        assert wait_up(f"http://127.0.0.1:{port}", proc), f"kgx.ui did not come up within 120 s:\n{log.read_text()}"
        deadline = time.time() + 60  # kgx.ui prints the URL once its own check finds the server up
        while not (printed := re.search(r"^dashboard: (\S+)$", log.read_text(), re.M)) and time.time() < deadline:
            time.sleep(0.2)
        assert printed, log.read_text()
        yield tmp_path, printed.group(1)
    finally:
        stop_group(proc)


def test_the_dashboard_opens_on_the_comparison_and_lists_the_traces(dashboard):
    browser = chromium()
    store, url = dashboard
    import mlflow
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{store / 'mlruns' / 'mlflow.db'}"
    experiment = MlflowClient(uri).get_experiment_by_name("kgx")
    assert url.endswith(
        f"/#/experiments/{experiment.experiment_id}/runs?workflowType=machine_learning&viewStateShareKey=kgx"
    )

    page = render(browser, url)
    for name in HEADERS:
        assert f'col-id="metrics.`{name}`"' in page, name
    assert 'col-id="params.`method.name`"' in page
    names = set(re.findall(r">(method=(?:io|cot))<", page))
    assert names == {"method=io", "method=cot"}  # the children, under their expanded parent
    assert re.search(r">method [0-9a-f]{6}<", page)  # the parent, named by what its ad-hoc multirun swept

    child = next(
        r for r in MlflowClient(uri).search_runs([experiment.experiment_id]) if r.info.run_name == "method=cot"
    )
    mlflow.set_tracking_uri(uri)  # also sets $MLFLOW_TRACKING_URI for the rest of the process: unset below
    try:
        traces = mlflow.search_traces(
            locations=[experiment.experiment_id], run_id=child.info.run_id, return_type="list"
        )
    finally:
        mlflow.set_tracking_uri(None)
    assert sorted(t.info.tags["mlflow.traceName"] for t in traces) == ["demo-001", "demo-002"]
    base = url.split("/#/")[0]
    listing = render(
        browser,
        f"{base}/#/experiments/{experiment.experiment_id}/traces?selectedEvaluationId={traces[0].info.trace_id}",
    )
    assert "What is the capital of Australia?" in listing  # the traces table lists the questions
    assert traces[0].info.tags["mlflow.traceName"] in listing  # and the selected trace is named by its id
