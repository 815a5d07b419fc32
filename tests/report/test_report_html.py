"""The HTML report of runs (kgx.report.html), sweeps named by name, and what labels a comparison.

The store holds three scripted runs on three demo questions, as the children of one sweep
parent: tog at depths 1 and 2 (tog draws an explanation picture for every question) and io.
Two more parents share one name, so that a name can be ambiguous.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from pathlib import Path

import pytest
from hydra.core.global_hydra import GlobalHydra
from mlflow.tracking import MlflowClient

from kgx.core.types import Prediction
from kgx.core.usage import Usage
from kgx.report import ReportError, load_runs, log_summary
from kgx.report.__main__ import main
from kgx.report.compare import compare_labels
from kgx.report.html import MAX_PICTURES, RunQuestions, page
from kgx.report.render import cell_text
from kgx.report.tables import metric_table
from kgx.results.record import Record
from kgx.run.compose import register_schemas
from tests.report.test_report import Store, _execute, _sweep_parent

SWEEP = "depth-sweep"


def artifact(store: Store, run_id: str, path: str) -> str:
    return Path(MlflowClient(store.uri).download_artifacts(run_id, path, str(store.dir / "dl" / run_id))).read_text()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    register_schemas()
    tmp = tmp_path_factory.mktemp("html")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        runs = {
            "tog1": _execute("method=tog", "method.depth=1", "dataset.limit=3"),
            "tog2": _execute("method=tog", "method.depth=2", "dataset.limit=3"),
            "io": _execute("method=io", "dataset.limit=3"),
        }
    GlobalHydra.instance().clear()
    uri = f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}"
    parent = _sweep_parent(uri, [r.run_id for r in runs.values()], SWEEP)
    for _ in range(2):
        _sweep_parent(uri, [], "twice")
    return Store(tmp, uri, runs, parent)


def details(text: str) -> dict[str, list[str]]:
    """Question id -> the ``<details>`` blocks of that question."""
    out: dict[str, list[str]] = {}
    for block in re.findall(r'<details class="q".*?</details>', text, re.S):
        out.setdefault(re.search(r"<code>(.*?)</code>", block).group(1), []).append(block)
    return out


def test_every_run_logs_its_page(store):
    outcome = store.runs["tog1"]
    text = artifact(store, outcome.run_id, "report/index.html")
    ids = [r.id for r in outcome.records]
    assert ids == ["demo-001", "demo-002", "demo-003"] and list(details(text)) == ids
    frame = load_runs(uri=store.uri).filter(run_id=outcome.run_id)
    cell = metric_table(frame, ["method"], ["dataset"], "hits1").cell(("tog",), ("demo",))
    assert f'<td class="num">{cell_text(cell, "±")}</td>' in text
    assert '<select name="status">' in text and 'data-status="ok"' in text
    first = details(text)["demo-001"][0]
    shard = outcome.records[0].trace
    assert shard.endswith(".jsonl.gz") and f'<a href="../{shard}">{shard}</a>' in first
    assert f"<code>python -m kgx.report transcript {outcome.run_id} demo-001</code>" in first
    assert '<a href="../explanations/demo-001.png">' in first and 'src="data:image/png;base64,' in first
    assert "<script src" not in text and "<link" not in text  # self-contained


def test_the_sweep_page_links_each_runs_artifacts(store):
    assert "report/index.html" in log_summary(store.parent, store.uri)
    text = artifact(store, store.parent, "report/index.html")
    blocks = details(text)
    assert len(blocks["demo-002"]) == 3  # one per run, side by side
    # a run named by its method, backbone and KG, then the knob that tells it apart, in short
    for label in ("io · scripted · demo", "tog · scripted · demo (depth=1)", "tog · scripted · demo (depth=2)"):
        assert f">{label}</option>" in text
    parent_page = Path(urllib.parse.urlparse(MlflowClient(store.uri).get_run(store.parent).info.artifact_uri).path)
    hrefs = re.findall(r'href="(\.\./[^"]+)"', text)
    assert len(hrefs) == 3 * 3 + 2 * 3  # a trace per question, a picture per tog question
    assert all((parent_page / "report" / href).resolve().is_file() for href in hrefs)
    grid = metric_table(load_runs(uri=store.uri, parent=store.parent), ["method", "method.depth"], ["dataset"], "hits1")
    assert f'<td class="num">{cell_text(grid.cell(("tog", "1"), ("demo",)), "±")}</td>' in text
    assert re.findall(r"<figcaption>(.*?)</figcaption>", text) == [
        "hits1_vs_total_tokens_per_q.png",
        "hits1_vs_method.depth.png",
        "failures.png",
    ]
    assert text.count('src="data:image/png;base64,') == 3 + 6  # the figures and every explanation


def test_cli_html_for_a_sweep_named_by_its_name(store, capsys, tmp_path):
    out = tmp_path / "page" / "index.html"
    main(["html", "--parent", SWEEP, "--tracking-uri", store.uri, "--out", str(out)])
    assert capsys.readouterr().out == f"{out}\n"
    text = out.read_text()
    assert f"sweep {SWEEP}" in text and {k: len(v) for k, v in details(text).items()} == {
        "demo-001": 3,
        "demo-002": 3,
        "demo-003": 3,
    }
    links = re.findall(r'href="(file:[^"]+)"', text)
    assert links and all(Path(urllib.parse.urlparse(link).path).is_file() for link in links)
    main(["html", "--run", store.runs["io"].run_id, "--tracking-uri", store.uri, "--out", str(out)])
    assert list(details(out.read_text())) == ["demo-001", "demo-002", "demo-003"]
    main(["table", "--parent", SWEEP, "--tracking-uri", store.uri, "--rows", "method,method.depth"])
    assert "tog     1" in capsys.readouterr().out


def test_a_sweep_name_two_sweeps_share_takes_the_latest_and_an_unknown_one_lists_sweeps(store, capsys):
    """Of two sweeps named 'twice' (no finished run in either) the latest is taken, and stderr says
    so, naming the other with its counts; a name no sweep has is one line listing the sweeps."""
    twins = sorted(
        MlflowClient(store.uri).search_runs(
            [MlflowClient(store.uri).get_experiment_by_name("kgx").experiment_id], "tags.sweep = 'twice'"
        ),
        key=lambda r: r.info.start_time,
    )
    for args in (["table", "--parent", "twice"], ["html", "--parent", "twice"]):
        with pytest.raises(SystemExit) as stop:
            main([*args, "--tracking-uri", store.uri])
        err = capsys.readouterr().err
        assert stop.value.code == 2
        assert (
            f"kgx.report: 2 sweeps are named 'twice': shown is the latest (none has finished runs), {twins[1].info.run_id}"
            in err
        )
        assert f"the others: {twins[0].info.run_id} (twice: overrides '', 0 finished, 0 failed, started 20" in err
        assert f"error: sweep parent run {twins[1].info.run_id} (twice) has no FINISHED runs" in err
    with pytest.raises(SystemExit):
        main(["table", "--parent", "nope", "--tracking-uri", store.uri])
    err = capsys.readouterr().err
    assert re.search(rf"no run id or sweep named 'nope'.*sweeps there \(latest first\): .*\({SWEEP}: ", err)
    assert err.count("\n") == 1


def test_compare_labels_runs_by_method_and_what_differs(store, capsys):
    tog1, tog2, io = (store.runs[k].run_id for k in ("tog1", "tog2", "io"))
    assert compare_labels(tog2, tog1, store.uri) == ("tog (method.depth=2)", "tog (method.depth=1)")
    assert compare_labels(tog1, io, store.uri) == ("tog", "io")  # tog's own knobs say nothing more
    main(["compare", tog2, tog1, "--tracking-uri", store.uri])
    assert capsys.readouterr().out.startswith(
        f"A = tog (method.depth=2), run {tog2}\nB = tog (method.depth=1), run {tog1}\n"
    )


def test_errors_are_worded_for_the_caller(tmp_path, capsys):
    missing = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with pytest.raises(ReportError) as raised:
        load_runs(uri=missing)
    assert "set KGX_TRACKING_URI or pass uri=" in str(raised.value) and "--tracking-uri" not in str(raised.value)
    with pytest.raises(SystemExit):
        main(["html", "--tracking-uri", missing])
    err = capsys.readouterr().err
    assert "run an experiment first or pass --tracking-uri" in err and "KGX_TRACKING_URI" not in err


def record(qid: str, question: str, status: str = "ok", right: bool = False) -> Record:
    prediction = Prediction(
        answer="{<b>x</b> & y}", answers=["<b>x</b>"], evidence=[f"(e, r, {i})" for i in range(25)], status=status
    )
    return Record(
        id=qid,
        question=question,
        gold=[["A & B", "<A>"]],
        prediction=prediction,
        scores={"hits1": float(right)},
        status=status,
        usage=Usage(),
        trace=f"traces/{qid}.json",
    )


def test_text_from_the_data_is_escaped_and_the_browser_capped(monkeypatch):
    runs = [
        RunQuestions(
            "r1", "cot <v2>", [record("q<1>", "Is 1 < 2 & 3?", "error"), record("q2", "ok?", right=True)], None, {"q2"}
        )
    ]
    text = page("t", "s", [("Main table: hits1", "no <runs>")], [], runs, "hits1")
    assert "Is 1 &lt; 2 &amp; 3?" in text and "<code>q&lt;1&gt;</code>" in text and "<b>x</b>" not in text
    assert "A &amp; B | &lt;A&gt;" in text and "no &lt;runs&gt;" in text and "cot &lt;v2&gt;" in text
    assert "<li><i>and 5 more</i></li>" in text  # 25 evidence lines, 20 shown
    assert 'data-status="error"' in text and 'data-result="right"' in text
    assert "<code>explanations/q2.png</code>" in text  # no artifact root known: the path, unlinked
    monkeypatch.setattr("kgx.report.html.MAX_QUESTIONS", 1)
    capped = page("t", "s", [], [], runs, "hits1")
    assert len(details(capped)) == 1 and "the first 1 of 2 questions are shown" in capped


def test_a_page_of_1000_questions_is_quick():
    records = [
        record(f"q{i}", f"question {i} <x>", ("ok", "fallback", "error")[i % 3], i % 2 == 0) for i in range(1000)
    ]
    runs = [
        RunQuestions(
            "r",
            "io",
            records,
            "../",
            {f"q{i}" for i in range(MAX_PICTURES)},
            {f"q{i}": b"\x89PNG" for i in range(MAX_PICTURES)},
        )
    ]
    start = time.perf_counter()
    text = page("t", "s", [], [], runs, "hits1")
    assert time.perf_counter() - start < 5.0
    assert len(details(text)) == 1000 and text.count('data-status="error"') == 333
