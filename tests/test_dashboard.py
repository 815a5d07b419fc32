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


def render(browser: str, url: str, screenshot: Path | None = None) -> str:
    """The page's DOM once its scripts ran; wide, so that the grid renders every column. With
    ``screenshot``, a picture of the page there instead (and no DOM)."""
    shot = [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=2400,1400",
            "--virtual-time-budget=15000",
            *shot,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def serve(store: Path):
    """``kgx.ui`` serving the store of ``store``; yields the printed dashboard URL. The server's
    whole process group is stopped afterwards."""
    port = free_port()
    log = store / "ui.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kgx.ui", "--port", str(port)],
            cwd=store,
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
        yield printed.group(1)
    finally:
        stop_group(proc)


@pytest.fixture
def dashboard(tmp_path: Path):
    """A sweep's store and ``kgx.ui`` serving it; yields the store and the dashboard URL."""
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
    for url in serve(tmp_path):
        yield tmp_path, url


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
    names = set(re.findall(r">((?:io|cot) · demo · scripted · demo)<", page))
    assert names == {"io · demo · scripted · demo", "cot · demo · scripted · demo"}  # under their expanded parent
    assert re.search(r">method [0-9a-f]{6}<", page)  # the parent, named by what its ad-hoc multirun swept

    child = next(
        r
        for r in MlflowClient(uri).search_runs([experiment.experiment_id])
        if r.info.run_name == "cot · demo · scripted · demo"
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


def test_a_sweep_opens_on_its_comparison_with_its_figures_on_the_parent(tmp_path):
    """A 2-method x 2-dataset sweep: its runs named by what they ran with the KG and the seed in
    columns, the chart view without empty sections, and the sweep's figures on its parent."""
    browser = chromium()
    if not os.environ.get("KGX_DATA_DIR"):
        pytest.skip("KGX_DATA_DIR is unset: MetaQA is shared data")
    done = kgx_main(
        tmp_path,
        "-m",
        "method=io,tog",
        "dataset=metaqa_1hop,metaqa_2hop",
        "kg=metaqa",
        "llm=scripted",
        "dataset.limit=5",
        "run.progress=false",
    )
    assert done.returncode == 0, done.stderr
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("kgx")
    [parent] = [r for r in client.search_runs([experiment.experiment_id]) if r.data.tags.get("sweep")]
    figures = {a.path for a in client.list_artifacts(parent.info.run_id, "figures")}
    for name in ("hits1_vs_llm_calls_per_q", "hits1_vs_total_tokens_per_q", "hits1_by_kind"):
        assert {f"figures/{name}.png", f"figures/{name}.html"} <= figures, figures
    assert "figures/hits1_vs_cost_usd.png" not in figures  # the scripted backbone costs nothing: no dollar figure
    for url in serve(tmp_path):
        page = render(browser, url)
        for dataset in ("metaqa_1hop", "metaqa_2hop"):
            for method in ("io", "tog"):
                assert f">{method} · {dataset} · scripted · metaqa<" in page, (method, dataset)
        assert 'col-id="params.`kg.name`"' in page and 'col-id="params.`run.seed`"' in page
        shot = tmp_path / "dashboard.png"
        render(browser, url, shot)
        assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
        charts = render(browser, url.replace("/runs?", "/runs?compareRunsMode=CHART&"))
        # One section of the four comparison charts, and no section of charts without data.
        assert re.search(r">Comparison</div><div[^>]*>\(4\)</div>", charts)
        assert "No charts in this section" not in charts
        render(browser, url.replace("/runs?", "/runs?compareRunsMode=CHART&"), tmp_path / "charts.png")
        base = url.split("/#/")[0]
        artifact = f"{base}/#/experiments/{experiment.experiment_id}/runs/{parent.info.run_id}/artifacts"
        render(browser, f"{artifact}/figures/hits1_vs_total_tokens_per_q.png", tmp_path / "figure.png")
        assert (tmp_path / "figure.png").stat().st_size > 20_000
