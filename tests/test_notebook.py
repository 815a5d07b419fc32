"""notebooks/compare.ipynb, executed top to bottom on the runs of a real sweep."""

from __future__ import annotations

import nbformat
import pytest
from mlflow.tracking import MlflowClient

from tests.helpers import REPO, TINY_SWEEP, kgx_env, run_notebook
from tests.helpers import cell_outputs as outputs
from tests.inprocess import kgx_main

NOTEBOOK = REPO / "notebooks" / "compare.ipynb"


@pytest.mark.slow
def test_the_notebook_reports_a_sweep(tmp_path, monkeypatch):
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "tiny.yaml").write_text(TINY_SWEEP)
    env = kgx_env()
    env.pop("KGX_TRACKING_URI", None)  # the notebook's default store: ./mlruns of its working directory
    monkeypatch.delenv("KGX_TRACKING_URI", raising=False)
    done = kgx_main(tmp_path, "-m", "+sweeps=tiny", "llm=scripted", "run.progress=false")
    assert done.returncode == 0, done.stderr
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("kgx").experiment_id
    env["KGX_PARENT_RUN_ID"] = client.search_runs([experiment], "tags.sweep = 'tiny'")[0].info.run_id

    nb = run_notebook(tmp_path, env, monkeypatch)

    loaded = "".join(o.get("text", "") for o in outputs(nb, "load_runs("))
    assert (
        f"4 runs from sqlite:///{tmp_path.resolve()}/mlruns/mlflow.db, sweep parent run {env['KGX_PARENT_RUN_ID']}"
        in loaded
    )
    table = "".join(o["data"]["text/markdown"] for o in outputs(nb, "metric_table("))
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| ")}
    assert "(n=2)" in rows["io"] and "(n=2)" in rows["cot"]
    for figure in ("plot_cost_accuracy(", "plot_param("):
        assert any("image/png" in o.get("data", {}) for o in outputs(nb, figure)), figure
    disagreement = "".join(o.get("text", "") for o in outputs(nb, "compare_runs("))
    assert "A = cot, B = io: demo, seed 0" in disagreement and "questions in common: 3" in disagreement


def test_the_notebook_is_stored_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
