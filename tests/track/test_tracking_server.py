"""A team's setup: every run and sweep logs to one `mlflow server` (a database backend, artifacts
served over HTTP), not to a sqlite file beside the launch directory."""

from __future__ import annotations

import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient

from kgx.kg.serve import free_port
from kgx.report.__main__ import main as report_main
from kgx.ui import main as ui_main
from kgx.ui import wait_up
from tests.helpers import TINY_SWEEP, cell_outputs, kgx_env, run_notebook, start_mlflow_server, stop_group
from tests.inprocess import kgx_main
from tests.run.test_run_ownership import check_twins, twins

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path_factory):
    """``mlflow server`` on loopback with a sqlite database and --serve-artifacts; its URL."""
    home = tmp_path_factory.mktemp("tracking-server")
    log = home / "server.log"
    port = free_port()
    proc = start_mlflow_server(home, port)
    url = f"http://127.0.0.1:{port}"
    try:
        assert wait_up(url, proc), log.read_text(errors="replace")[-2000:]
        yield url, home
    finally:
        stop_group(proc)


def test_a_parallel_sweep_logs_to_one_tracking_server(server, tmp_path, monkeypatch, capsys):
    url, home = server
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "tiny.yaml").write_text(TINY_SWEEP)
    args = [
        sys.executable,
        "-m",
        "kgx",
        "-m",
        "+sweeps=tiny",
        "llm=scripted",
        "run.progress=false",
        f"run.tracking_uri={url}",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
    ]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, env=kgx_env(), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (tmp_path / "mlruns").exists()  # nothing went to a local store
    client = MlflowClient(url)
    experiment = client.get_experiment_by_name("kgx")
    found = client.search_runs([experiment.experiment_id], max_results=100)
    [parent] = [r for r in found if r.data.tags.get("sweep") == "tiny"]
    children = [r for r in found if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == 4 and {r.info.status for r in children} == {"FINISHED"}
    assert parent.info.status == "FINISHED" and parent.data.tags["children_finished"] == "4"
    # artifacts went through the server into its artifact store
    logged = {a.path for a in client.list_artifacts(children[0].info.run_id)}
    assert "predictions.jsonl" in logged
    assert list((home / "artifacts").rglob("predictions.jsonl"))

    capsys.readouterr()
    report_main(["cost", "--tracking-uri", url, "--parent", "tiny", "--rows", "method"])
    report = capsys.readouterr().out
    assert "io" in report and "cot" in report

    # the dashboard is the server's own UI: kgx.ui stores the view there and prints its URL
    ui_main(["--tracking-uri", url])
    assert f"dashboard: {url}/#/experiments/{experiment.experiment_id}/runs?" in capsys.readouterr().out
    assert "mlflow.sharedViewState.kgx" in client.get_experiment(experiment.experiment_id).tags

    env = {**kgx_env(), "KGX_TRACKING_URI": url, "KGX_PARENT_RUN_ID": parent.info.run_id}
    nb = run_notebook(tmp_path, env, monkeypatch)
    loaded = "".join(o.get("text", "") for o in cell_outputs(nb, "load_runs("))
    assert f"4 runs from {url}, sweep parent run {parent.info.run_id}" in loaded
    assert any("image/png" in o.get("data", {}) for o in cell_outputs(nb, "plot_cost_accuracy("))

    again = kgx_main(tmp_path, *args[3:-2])  # the same sweep again, its jobs one after another in this process
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("already finished") == 4 and "billed" not in again.stdout


def test_one_config_started_twice_at_once_on_a_tracking_server_computes_once(server, tmp_path):
    url, _ = server
    check_twins(twins(tmp_path, f"run.tracking_uri={url}"))
