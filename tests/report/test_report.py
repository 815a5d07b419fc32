"""kgx.report on real runs of the scripted backbone: tables, cost table, plots, paired comparison.

The store is built once for the module: io and cot x seeds 0 and 1 on six demo questions, as
the children of a sweep parent; a cot run on a second dataset outside the sweep; and, in
experiment ``unpriced``, an io run with no known price (run twice, the second forced) beside a
priced cot run. cot is wrapped so that it answers right at random from its seeded rng: the
scripted backbone alone never answers right, and a table of zeros would test nothing.
"""

from __future__ import annotations

import io as text_io
import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from mlflow.tracking import MlflowClient

from kgx.core.paths import CONF_DIR
from kgx.core.types import Prediction
from kgx.methods import io as io_method
from kgx.report import (
    ReportError,
    compare_runs,
    compare_scores,
    cost_table,
    load_runs,
    log_summary,
    mcnemar_exact,
    metric_table,
    plot_cost_accuracy,
    plot_param,
    render,
    write_summary,
)
from kgx.report.__main__ import main
from kgx.run.compose import register_schemas
from kgx.run.execute import execute
from kgx.run.lifecycle import Outcome
from kgx.run.spec import to_run_spec
from tests.helpers import swap_method

PNG = b"\x89PNG\r\n\x1a\n"


def lucky(question, ctx):
    """io's real LLM call (real tokens), then the gold answer on a seeded coin flip."""
    prediction = io_method.answer(question, ctx)
    if ctx.rng.random() < 0.5:
        return Prediction(answer="{" + question.answers[0][0] + "}", answers=[question.answers[0][0]])
    return prediction


@dataclass
class Store:
    dir: Path
    uri: str
    runs: dict[str, Outcome]
    parent: str

    def metrics(self, name: str) -> dict[str, float]:
        return MlflowClient(self.uri).get_run(self.runs[name].run_id).data.metrics


def _execute(*overrides: str) -> Outcome:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(config_name="config", overrides=["llm=scripted", "run.progress=false", *overrides])
    return execute(to_run_spec(cfg), Path.cwd())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    register_schemas()
    tmp = tmp_path_factory.mktemp("report")
    unpriced = (
        "llm.input_cost_per_token=null",
        "llm.output_cost_per_token=null",
        "llm.cache=false",
        "run.experiment=unpriced",
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        swap_method(mp, "cot", lucky)
        runs = {
            f"{m}{s}": _execute(f"method={m}", f"run.seed={s}", "dataset.limit=6")
            for m in ("io", "cot")
            for s in (0, 1)
        }
        runs["cot_b"] = _execute("method=cot", "dataset.name=demo_b", "dataset.limit=6")
        runs["unpriced_old"] = _execute("method=io", "dataset.limit=6", *unpriced)
        runs["unpriced"] = _execute("method=io", "dataset.limit=6", "run.force=true", *unpriced)
        runs["priced"] = _execute("method=cot", "dataset.limit=5", "run.experiment=unpriced")
    GlobalHydra.instance().clear()
    uri = f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}"
    return Store(tmp, uri, runs, _sweep_parent(uri, [runs[k].run_id for k in ("io0", "io1", "cot0", "cot1")]))


def _sweep_parent(uri: str, children: list[str], name: str = "test") -> str:
    """A parent run as kgx.run.sweep makes one: named after the sweep and tagged ``sweep`` with its
    name, its children tagged mlflow.parentRunId."""
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("kgx").experiment_id
    parent = client.create_run(experiment, run_name=name, tags={"sweep": name}).info.run_id
    for child in children:
        client.set_tag(child, "mlflow.parentRunId", parent)
    client.set_terminated(parent)
    return parent


def by_hand(store: Store, names: list[str], metric: str) -> str:
    values = [store.metrics(n)[metric] for n in names]
    if len(values) == 1:
        return f"{values[0]:.1f} (n=1)"
    return f"{statistics.fmean(values):.1f} +- {statistics.stdev(values):.1f} (n={len(values)})"


def text_cells(grid) -> dict[tuple[str, str], str]:
    """Cells as the Markdown table prints them, keyed by (row label, column header)."""
    header, _, *body = [[c.strip() for c in line.strip("|").split("|")] for line in render(grid, "md").splitlines()[2:]]
    return {(row[0], col): text for row in body for col, text in zip(header[1:], row[1:])}


def test_table_is_the_mean_and_std_over_seeds_of_the_logged_metric(store):
    hits = [store.metrics(f"cot{s}")["hits1"] for s in (0, 1)]
    assert hits[0] != hits[1]  # the seeds differ, so the std is a real figure
    grid = metric_table(load_runs(uri=store.uri, parent=store.parent), ["method"], ["dataset"], "hits1")
    assert grid.rows == [("cot",), ("io",)] and grid.cols == [("demo",)]
    assert text_cells(grid) == {
        ("cot", "demo"): by_hand(store, ["cot0", "cot1"], "hits1"),
        ("io", "demo"): by_hand(store, ["io0", "io1"], "hits1"),
    }
    term = render(grid, "term")
    assert by_hand(store, ["cot0", "cot1"], "hits1") in term and "io" in term


def test_a_combination_without_runs_is_missing_not_zero(store):
    grid = metric_table(load_runs(uri=store.uri), ["method"], ["dataset"], "hits1")
    assert grid.rows == [("cot",), ("io",)]  # the sweep parent is not a run of the table
    cells = text_cells(grid)
    assert cells["io", "demo_b"] == "-"
    assert cells["cot", "demo_b"] == by_hand(store, ["cot_b"], "hits1")
    assert cells["cot", "demo"] == by_hand(store, ["cot0", "cot1"], "hits1")


def test_a_cell_that_would_mix_configurations_is_refused(store):
    with pytest.raises(ReportError, match=r"differ in \['dataset.name'\].*rows=\['method', 'dataset.name'\]") as raised:
        metric_table(load_runs(uri=store.uri), ["method"], ["llm"], "hits1")
    assert raised.value.wording(cli=True).endswith(
        "(e.g. --rows method,dataset.name) or report one sweep with --parent"
    )


def test_formats(store):
    grid = metric_table(load_runs(uri=store.uri), ["method"], ["dataset"], "hits1")
    md = render(grid, "md").splitlines()
    assert md[2] == "| method | demo | demo_b |" and md[3] == "| --- | ---: | ---: |"
    frame = pl.read_csv(text_io.StringIO(render(grid, "csv")))
    assert frame.columns == ["metric", "method", "dataset", "mean", "std", "n"]
    cot = frame.filter(method="cot", dataset="demo").row(0, named=True)
    assert cot["n"] == 2 and cot["mean"] == pytest.approx(
        statistics.fmean(store.metrics(f"cot{s}")["hits1"] for s in (0, 1))
    )
    assert frame.filter(method="io", dataset="demo_b")["mean"].to_list() == [None]
    latex = render(grid, "latex")
    assert r"\begin{tabular}{lrr}" in latex and r"$\pm$" in latex and r"\end{tabular}" in latex
    assert "io & " in latex and latex.splitlines()[-3].endswith(r"& -- \\")


def test_cost_table_shows_the_per_question_figures(store):
    grid = cost_table(load_runs(uri=store.uri, parent=store.parent), ["method"])
    assert grid.cols == [
        ("llm_calls_per_q",),
        ("total_tokens_per_q",),
        ("input_tokens_per_q",),
        ("latency_s_per_q",),
        ("cost_usd",),
    ]
    for method in ("io", "cot"):
        for (metric,) in grid.cols:
            cell = grid.cell((method,), (metric,))
            values = [store.metrics(f"{method}{s}")[metric] for s in (0, 1)]
            assert cell.n == 2 and cell.mean == pytest.approx(statistics.fmean(values))
            assert cell.std == pytest.approx(statistics.stdev(values))
    assert "LLM calls/q" in render(grid, "term").splitlines()[1]


def test_unknown_cost_is_missing_and_a_forced_rerun_counts_once(store):
    assert store.runs["unpriced"].run_id != store.runs["unpriced_old"].run_id
    frame = load_runs("unpriced", store.uri)
    assert frame.height == 2 and store.runs["unpriced"].run_id in frame["run_id"].to_list()
    grid = cost_table(frame, ["method"])
    assert grid.cell(("io",), ("cost_usd",)).n == 0 and grid.cell(("cot",), ("cost_usd",)).mean == 0.0
    assert grid.cell(("io",), ("total_tokens_per_q",)).n == 1
    assert render(grid, "md").splitlines()[-1].endswith("| - |")  # io's cost
    assert cost_table(frame.filter(pl.col("params.method.name") == "io"), ["method"]).headers[-1] == "s/q"


def test_plots_are_png_files(store, tmp_path):
    frame = load_runs(uri=store.uri, parent=store.parent)
    paths = [
        plot_cost_accuracy(frame, tmp_path, "hits1", "total_tokens_per_q"),
        plot_cost_accuracy(frame, tmp_path, "hits1", "cost_usd"),
        plot_param(frame, tmp_path, "seed", "hits1"),
    ]
    assert [p.name for p in paths] == [
        "hits1_vs_total_tokens_per_q.png",
        "hits1_vs_cost_usd.png",
        "hits1_vs_run.seed.png",
    ]
    assert all(p.read_bytes()[:8] == PNG for p in paths)
    with pytest.raises(ReportError, match="cost_usd"):
        plot_cost_accuracy(
            load_runs("unpriced", store.uri).filter(pl.col("params.method.name") == "io"), tmp_path, cost="cost_usd"
        )


def test_log_summary_puts_tables_and_plots_on_the_parent_run(store):
    logged = log_summary(store.parent, store.uri)
    assert logged == [
        "report/table.md",
        "report/table.csv",
        "report/cost.md",
        "report/cost.csv",
        "report/failures.md",
        "report/failures.csv",
        "report/hits1_vs_total_tokens_per_q.png",
        "report/failures.png",
        "report/index.html",
    ]
    client = MlflowClient(store.uri)
    assert {a.path for a in client.list_artifacts(store.parent, "report")} == set(logged)
    table = Path(client.download_artifacts(store.parent, "report/table.md"))
    assert by_hand(store, ["cot0", "cot1"], "hits1") in table.read_text()


def test_a_summary_lays_out_the_keys_its_runs_vary(store, tmp_path):
    """cot ran on 6 and 5 questions, io with and without the cache: both keys become row keys,
    and the numeric one gets a figure."""
    frame = pl.concat([load_runs(uri=store.uri, parent=store.parent), load_runs("unpriced", store.uri)], how="diagonal")
    files = write_summary(frame, tmp_path)
    assert [f.name for f in files] == [
        "table.md",
        "table.csv",
        "cost.md",
        "cost.csv",
        "failures.md",
        "failures.csv",
        "hits1_vs_total_tokens_per_q.png",
        "hits1_vs_dataset.limit.png",
        "failures.png",
        "index.html",
    ]
    assert (tmp_path / "table.md").read_text().splitlines()[2] == "| method | dataset.limit | llm.cache | demo |"
    assert (tmp_path / "hits1_vs_dataset.limit.png").read_bytes()[:8] == PNG


def hand_counts(store: Store, a: str, b: str) -> tuple[int, int, int, int, list[str]]:
    """Both right, A only, B only, both wrong and the disagreeing ids, from the runs' own logs."""
    right_a, right_b = (
        {
            r["id"]: r["scores"]["hits1"] == 1
            for r in map(json.loads, (store.dir / store.runs[name].out_dir / "predictions.jsonl").open())
        }
        for name in (a, b)
    )
    pairs = [(right_a[q], right_b[q]) for q in sorted(right_a)]
    counts = [pairs.count(p) for p in ((True, True), (True, False), (False, True), (False, False))]
    return (*counts, sorted(q for q in right_a if right_a[q] != right_b[q]))


def test_compare_pairs_two_runs_by_question(store):
    both, a_only, b_only, neither, disagree = hand_counts(store, "cot0", "cot1")
    assert a_only + b_only > 0
    result = compare_runs(store.runs["cot0"].run_id, store.runs["cot1"].run_id, uri=store.uri)
    assert (result.n, result.both, result.a_only, result.b_only, result.neither) == (6, both, a_only, b_only, neither)
    assert [q for q, _ in result.disagree] == disagree
    assert result.diff == pytest.approx(
        store.metrics("cot0")["hits1"] - store.metrics("cot1")["hits1"], abs=0.01
    )  # MLflow shows 2 decimals
    assert result.p_value == pytest.approx(mcnemar_exact(a_only, b_only))
    assert result.ci[0] <= result.diff <= result.ci[1]


def test_compare_on_common_questions_only(store):
    result = compare_runs(store.runs["priced"].run_id, store.runs["io0"].run_id, uri=store.uri)
    assert (result.n, result.only_in_a, result.only_in_b) == (5, 0, 1)


def test_mcnemar_exact_by_hand():
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625)  # 2 * (1/2)^5
    assert mcnemar_exact(5, 0) == pytest.approx(0.0625)
    assert mcnemar_exact(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 1024)
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0


def test_bootstrap_interval_is_seeded_and_brackets_the_difference():
    a = {f"q{i}": float(i % 2) for i in range(40)}
    b = {f"q{i}": float(i % 4 == 0) for i in range(40)}
    first, again = compare_scores(a, b, seed=3), compare_scores(a, b, seed=3)
    assert first.ci == again.ci and first.diff == pytest.approx(25.0)
    assert first.ci[0] < 25.0 < first.ci[1]
    certain = compare_scores({"q": 1.0, "r": 1.0}, {"q": 0.0, "r": 0.0})
    assert certain.ci == (100.0, 100.0) and certain.p_value == 0.5  # 2 of 2 discordant: 2 * (1/2)^2


def test_cli_table_compare_and_plot(store, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(store.dir)  # the default tracking URI: ./mlruns/mlflow.db
    main(["table", "--parent", store.parent, "--format", "md"])
    assert f"| cot | {by_hand(store, ['cot0', 'cot1'], 'hits1')} |" in capsys.readouterr().out
    main(["table", "--rows", "method,seed", "--cols", "dataset", "--out", str(tmp_path / "t.csv"), "--format", "csv"])
    long = pl.read_csv(tmp_path / "t.csv")
    assert long.height == 2 * 2 * 2 and long["n"].to_list().count(0) == 3  # only cot seed 0 ran on demo_b
    main(["compare", store.runs["cot0"].run_id, store.runs["cot1"].run_id, "--show", "1"])
    out = capsys.readouterr().out.split("\n", 1)[1]  # after the path of the csv
    assert out.startswith(
        f"A = cot (run.seed=0), run {store.runs['cot0'].run_id}\n"
        f"B = cot (run.seed=1), run {store.runs['cot1'].run_id}\n"
    )
    both, a_only, b_only, neither, disagree = hand_counts(store, "cot0", "cot1")
    assert f"both right {both} | A only {a_only} | B only {b_only} | both wrong {neither}" in out
    assert f"  {disagree[0]}  " in out and f"  {disagree[-1]}  " not in out[out.index(disagree[0]) + 1 :]
    main(["plot", "--parent", store.parent, "--param", "seed", "--out-dir", str(tmp_path)])
    printed = capsys.readouterr().out.split()
    assert [Path(p).name for p in printed] == ["hits1_vs_total_tokens_per_q.png", "hits1_vs_run.seed.png"]


def test_no_runs_is_a_clear_error_with_exit_code_2(store, capsys, tmp_path):
    MlflowClient(store.uri).create_experiment("empty")
    cases = {
        ("table", "--experiment", "nope"): "no experiment 'nope'",
        ("table", "--experiment", "empty"): "experiment 'empty' in sqlite:.* has no FINISHED runs",
        ("cost", "--parent", store.runs["io0"].run_id): "has no FINISHED runs",
        ("table", "--metric", "hits2"): "no run has a value for metric 'hits2'",
        ("table", "--rows", "methd"): "unknown key 'methd'",
    }
    for args, message in cases.items():
        with pytest.raises(SystemExit) as stop:
            main([*args, "--tracking-uri", store.uri])
        assert stop.value.code == 2
        assert re.search(message, capsys.readouterr().err), args
    missing = tmp_path / "mlruns" / "mlflow.db"
    with pytest.raises(SystemExit):
        main(["table", "--tracking-uri", f"sqlite:///{missing}"])
    assert "no MLflow store" in capsys.readouterr().err and not missing.exists()


def test_figures_are_grouped_by_thousands_and_never_in_exponents():
    from kgx.core.numbers import readable
    from kgx.report.render import TextTable, term_text
    from kgx.track.tracker import shown

    assert [readable(v) for v in (1906.3, 999.6, 44.25, 5.1875, 0.0023, 0.000023, 0.0)] == [
        "1,906",
        "1,000",
        "44.2",
        "5.19",
        "0.0023",
        "0.0000230",
        "0",
    ]
    assert shown("total_tokens_per_q", 1906.3) == "1,906" and shown("hits1", 37.5) == "37.5"
    wide = TextTable("t", ["row", "a", "b", "c"], [["x", "1" * 30, "2" * 30, "3" * 30]], 1)
    blocks = term_text(wide, 70).split("\n\n")  # two value columns fit beside the label in 70
    assert len(blocks) == 2 and blocks[1].splitlines()[0].split() == ["row", "c"]
    assert max(len(line) for line in term_text(wide, 70).splitlines()) <= 70
