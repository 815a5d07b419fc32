"""``python -m kgx.report failures`` and the breakdown in the HTML report and a sweep's summary,
on real runs of the scripted backbone: ToG (a KG method) over two seeds and io (no KG)."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from mlflow.tracking import MlflowClient

from kgx.core.paths import CONF_DIR
from kgx.report import failure_table, html_report, load_runs, log_summary, render
from kgx.report.__main__ import main
from kgx.run.compose import register_schemas
from kgx.run.execute import execute
from kgx.run.spec import to_run_spec
from tests.report.test_report import _sweep_parent, text_cells

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    register_schemas()
    tmp = tmp_path_factory.mktemp("failures")
    runs = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        for method, seed in (("tog", 0), ("tog", 1), ("io", 0)):
            GlobalHydra.instance().clear()
            with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
                cfg = compose(
                    config_name="config",
                    overrides=[
                        "llm=scripted",
                        "run.progress=false",
                        f"method={method}",
                        f"run.seed={seed}",
                        "dataset.limit=6",
                    ],
                )
            runs[f"{method}{seed}"] = execute(to_run_spec(cfg), Path.cwd())
    GlobalHydra.instance().clear()
    uri = f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}"
    return tmp, uri, runs, _sweep_parent(uri, [r.run_id for r in runs.values()], "breakdown")


def test_the_table_is_the_mean_over_seeds_and_blank_where_a_method_reads_no_kg(store):
    _, uri, runs, parent = store
    grid = failure_table(load_runs(uri=uri, parent=parent), ["method"])
    cells = text_cells(grid)
    for category in ("correct", "not_retrieved", "unreachable", "lost"):
        values = [
            MlflowClient(uri).get_run(runs[k].run_id).data.metrics[f"failure.{category}"] for k in ("tog0", "tog1")
        ]
        assert cells["tog", category] == f"{statistics.fmean(values):.1f} +- {statistics.stdev(values):.1f} (n=2)"
    assert cells["io", "not_retrieved"] == "-" and cells["io", "correct"] != "-"
    assert "'-' for io: reads no KG" in grid.title
    shares = [c.mean for (row, _), c in grid.cells.items() if row == ("io",) and c.mean is not None]
    assert sum(shares) == pytest.approx(100.0)


def test_cli_prints_the_table_and_draws_the_bars(store, capsys, tmp_path):
    _, uri, _, parent = store
    main(
        [
            "failures",
            "--tracking-uri",
            uri,
            "--parent",
            parent,
            "--rows",
            "method",
            "--format",
            "md",
            "--out-dir",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert "| method | correct | not_answered | lost | not_retrieved | unreachable | fallback | error |" in out
    assert out.rstrip().endswith(str(tmp_path / "failures.png"))
    assert (tmp_path / "failures.png").read_bytes().startswith(PNG)


def test_cli_lists_the_questions_of_a_category_with_where_they_left_the_gold_path(store, capsys):
    _, uri, runs, parent = store
    expected = [
        (label, r.id)
        for label, key in (("tog (run.seed=0)", "tog0"), ("tog (run.seed=1)", "tog1"))
        for r in runs[key].records
        if r.breakdown == "not_retrieved"
    ]
    assert expected
    main(["failures", "--tracking-uri", uri, "--parent", parent, "--list", "not_retrieved"])
    head, *lines = capsys.readouterr().out.splitlines()
    lines, shown = lines[: len(expected)], lines[len(expected) :]
    assert head == f"{len(expected)} questions not_retrieved"
    assert [tuple(line.split("\t")[:2]) for line in lines] == expected
    assert all("left the gold path" in line or "followed the gold path" in line for line in lines)
    assert shown == [
        "a question's transcript in MLflow's trace view:",
        *(
            f"  {label}: python -m kgx.report transcript {runs[key].run_id} --tracking-uri {uri} QUESTION_ID"
            for label, key in (("tog (run.seed=0)", "tog0"), ("tog (run.seed=1)", "tog1"))
        ),
    ]
    with pytest.raises(SystemExit):
        main(["failures", "--tracking-uri", uri, "--list", "wrong"])
    assert "unknown category 'wrong'" in capsys.readouterr().err


def test_html_and_a_sweep_summary_show_the_breakdown(store):
    _, uri, runs, parent = store
    page = html_report(uri=uri, parent=parent)
    assert "Why questions were missed" in page and '<select name="why">' in page
    assert 'data-why="not_retrieved"' in page or 'data-why="not_answered"' in page
    logged = log_summary(parent, uri)
    assert {"report/failures.md", "report/failures.csv", "report/failures.png"} <= set(logged)
    table = MlflowClient(uri).download_artifacts(parent, "report/failures.md")
    assert "not_retrieved" in Path(table).read_text()


def test_runs_without_a_breakdown_are_a_clear_error(store):
    _, uri, runs, _ = store
    frame = load_runs(uri=uri).drop([c for c in load_runs(uri=uri).columns if c.startswith("metrics.failure.")])
    with pytest.raises(Exception, match="no run has a failure breakdown"):
        render(failure_table(frame), "md")
