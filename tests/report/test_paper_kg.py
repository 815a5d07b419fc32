"""A paper cell's identity holds its KG: a sweep on RoG's subgraph files (the README's no-server route)
fills KnowPath Table 1's WebQSP and CWQ cells, marked in every format as on RoG subgraphs with how many
of the test set's questions; a run on the demo KG fills none unless the reader asks (--kg demo), and then
says so; runs of two configurations fill no cell, and one line says what differs and how to choose."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import polars as pl
import pytest

from kgx.report.paper_report import paper_report
from tests.helpers import unwrapped
from tests.inprocess import Done, paper_sweep

SAMPLE = Path(os.environ.get("KGX_DATA_DIR", "/nonexistent")) / "rog_sample"
needs_sample = pytest.mark.skipif(
    not (SAMPLE / "webqsp-test-sample.parquet").is_file(), reason="needs $KGX_DATA_DIR/rog_sample"
)
QUESTIONS = 3  # of each sample file
ON_ROG = {"WebQSP": "on RoG subgraphs (3 of the test set's 1,639 questions)"}
ON_ROG["CWQ"] = "on RoG subgraphs (3 of the test set's 3,531 questions)"
TOG = ("Prompting KG Enhanced LLM with GPT3.5", "ToG")


def data_dir(root: Path) -> Path:
    """RoG's files as a user downloads them (RoG-webqsp, RoG-cwq), here the first questions of the
    rog_sample files (RoG's exact schema), and a WebQSP.json of two demo-KG questions."""
    data = root / "data"
    (data / "freebase_qa").mkdir(parents=True)
    for name in ("webqsp", "cwq"):
        pl.read_parquet(SAMPLE / f"{name}-test-sample.parquet").head(QUESTIONS).write_parquet(data / f"RoG-{name}")
    webqsp = [
        {"QuestionId": "q1", "RawQuestion": "What is the capital of Australia?", "answer": ["Canberra"]}
        | {"topic_entity": {"m.0_kk": "Australia"}},
        {"QuestionId": "q2", "RawQuestion": "Who wrote Hamlet?", "answer": ["William Shakespeare"]}
        | {"topic_entity": {"m.03u0": "Hamlet"}},
    ]
    (data / "freebase_qa" / "WebQSP.json").write_text(json.dumps(webqsp))
    return data


def sweep(cwd: Path, *args: str) -> Done:
    done = paper_sweep(cwd, "knowpath_table1", *args)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def rog(tmp_path_factory, _mlflow_template) -> Path:
    """The guide's command on RoG's files (two of its rows), then ToG on WebQSP on the demo KG."""
    cwd = tmp_path_factory.mktemp("rog-sweep")
    data_dir(cwd)
    done = sweep(cwd, "dataset=webqsp_rog,cwq_rog", "kg=subgraph", "+paper/row=cot_gpt35,tog_gpt35")
    assert "4 finished, 0 failed" in done.stdout
    sweep(cwd, "+paper/row=tog_gpt35", "dataset=webqsp", "kg=demo")
    return cwd


def report(cwd: Path, fmt: str = "csv", **options) -> str:
    return unwrapped(
        paper_report("knowpath_table1", fmt=fmt, uri=f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}", **options)
    )


def cells(text: str) -> dict[tuple[str, str, str], dict]:
    frame = pl.read_csv(text.encode(), infer_schema_length=None)
    return {(r["group"], r["row"], r["column"]): r for r in frame.to_dicts()}


@needs_sample
def test_a_sweep_on_rog_subgraphs_fills_the_webqsp_and_cwq_cells_marked_so(rog, monkeypatch):
    monkeypatch.setenv("KGX_DATA_DIR", str(rog / "data"))
    made = cells(report(rog))
    for column in ("WebQSP", "CWQ"):
        tog = made[(*TOG, column)]
        assert (tog["state"], tog["runs"], tog["questions"], tog["on"]) == ("run", 1, QUESTIONS, "RoG subgraphs")
        assert ON_ROG[column] in tog["notes"]
        cot = made["LLM only", "COT", column]
        assert cot["state"] == "run" and "on the questions of RoG's subgraph files (3 of the test set's" in cot["notes"]
    # The demo-KG run of ToG on WebQSP is no candidate: the RoG run fills the cell alone, and it is counted.
    assert "1 run(s) on kg demo left out" in made[(*TOG, "WebQSP")]["notes"]
    assert {r["state"] for k, r in made.items() if k[2] in ("Simple Questions", "WebQuestions")} <= {
        "not run",
        "not in kgx",
    }


@needs_sample
@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "latex"])
def test_every_format_carries_the_rog_mark(rog, monkeypatch, fmt):
    monkeypatch.setenv("KGX_DATA_DIR", str(rog / "data"))
    text = report(rog, fmt)
    for column in ("WebQSP", "CWQ"):
        mark = ON_ROG[column].replace("'", "&#x27;") if fmt == "html" else ON_ROG[column]
        assert mark in text, (fmt, column)
    assert "(RoG subgraphs)" in text


@needs_sample
def test_a_demo_kg_run_fills_no_cell_unless_asked_for(rog, monkeypatch):
    monkeypatch.setenv("KGX_DATA_DIR", str(rog / "data"))
    made = cells(report(rog, kg="demo"))
    tog = made[(*TOG, "WebQSP")]
    assert (tog["state"], tog["on"], tog["questions"]) == ("run", "kg demo", 2)
    assert "on kg demo, which does not serve webqsp (asked for with --kg demo): no accuracy claim" in tog["notes"]
    assert made[(*TOG, "CWQ")]["state"] == "not run"  # its one run is on RoG's subgraphs, not asked for
    alone = cells(report(rog, parent=demo_sweep(rog)))
    assert alone[(*TOG, "WebQSP")]["state"] == "not run"
    assert "1 run(s) on kg demo left out: that KG does not serve the dataset" in alone[(*TOG, "WebQSP")]["notes"]
    assert not [k for k, r in alone.items() if r["state"] == "run"]


def demo_sweep(cwd: Path) -> str:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}")
    (parent,) = client.search_runs(["1"], "tags.sweep_overrides LIKE '%kg=demo%'")
    return parent.info.run_id


@needs_sample
def test_runs_of_two_configurations_fill_no_cell_and_one_line_says_what_differs(
    tmp_path, _mlflow_template, monkeypatch
):
    data_dir(tmp_path)
    for width in ("3", "2"):
        sweep(tmp_path, "dataset=webqsp_rog", "kg=subgraph", "+paper/row=tog_gpt35", f"method.width={width}")
    monkeypatch.setenv("KGX_DATA_DIR", str(tmp_path / "data"))
    tog = cells(report(tmp_path))[(*TOG, "WebQSP")]
    assert (tog["state"], tog["kgx_mean"]) == ("mixed", None)
    assert tog["notes"].count("\n") == 0
    assert re.search(
        r"not filled: 2 configurations ran for this cell, differing in method\.width: 2 \| 3; "
        r"--parent SWEEP chooses one sweep",
        tog["notes"],
    )
    text = report(tmp_path, "text")
    assert re.search(r"^\s+kgx\s.*\bmixed\b", text, re.M)


def oracle_run(method: str, kg: str, value: float) -> dict:
    return {
        "run_id": f"{method}-{kg}",
        "start_time": 1,
        "params.method.name": method,
        "params.dataset.name": "cwq",
        "params.dataset.kg": "freebase",
        "params.kg.name": kg,
        "params.kg.backend": "embedded",
        "params.llm.name": "oracle",
        "params.llm.model": "kgx-oracle/gold",
        "metrics.hits1_tog": value,
        "metrics.n_questions": 50.0,
    }


def test_the_oracle_gives_no_figure_without_a_kg_and_says_it_stood_in_where_it_did():
    """llm=oracle on the replay KG: IO's cell is n/a (not a measured 0.0), ToG's is filled only when
    asked for (--kg replay) and says the oracle on the replay KG stood in: a ceiling, not an accuracy."""
    from kgx.report.paper_cells import Inputs
    from kgx.report.paper_derived import compare_all
    from kgx.report.paper_published import paper_table

    _, cells = paper_table("tog_table1")
    frame = pl.from_dicts([oracle_run("io", "replay", 0.0), oracle_run("tog", "replay", 92.0)])
    made = {(c.published.group, c.published.row, c.published.column): c for c in compare_all(cells, Inputs(frame))[0]}
    io = made["LLM only, ChatGPT", "IO prompt", "CWQ"]
    assert (io.state, io.mean) == ("n/a", None) and "io reads no KG: no figure" in io.note
    assert made["ChatGPT", "ToG", "CWQ"].state == "not run"
    asked = {
        (c.published.group, c.published.row, c.published.column): c
        for c in compare_all(cells, Inputs(frame, kg="replay"))[0]
    }
    tog = asked["ChatGPT", "ToG", "CWQ"]
    assert (tog.state, tog.mean, tog.on) == ("run", 92.0, "kg replay, oracle")
    assert "the oracle (llm=oracle, answering from the gold paths) stood in for the backbone on kg replay" in tog.note
    assert "on kg replay, which does not serve cwq (asked for with --kg replay): no accuracy claim" in tog.note
