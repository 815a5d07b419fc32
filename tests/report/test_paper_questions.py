"""Figures split by a question field: ``kgx.report breakdown`` and the paper cells that split their runs'
questions (LMP Figure 4 by CWQ's compositionality_type and by depth, LMP Table 12 by shown), checked
against the runs' own predictions.jsonl, scored here by hand from their per-question scores."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from mlflow.tracking import MlflowClient

from kgx.report.__main__ import main as report_main
from kgx.report.paper_report import paper_report
from kgx.results.predlog import PredictionLog
from tests.inprocess import paper_sweep

DEMO = Path(__file__).resolve().parents[2] / "kgx" / "datasets" / "demo" / "questions.jsonl"
# CWQ questions on the demo KG's entities (its own KG, Freebase, needs a server), one of each type.
KINDS = {
    "demo-001": "composition",
    "demo-003": "composition",
    "demo-009": "conjunction",
    "demo-011": "superlative",
    "demo-018": "comparative",
}


@pytest.fixture(scope="module")
def figure4(tmp_path_factory, _mlflow_template) -> Path:
    """LMP Figure 4's rows (IO, ToG, LMP) on five such questions, llm=scripted, kg=demo."""
    cwd = tmp_path_factory.mktemp("figure4")
    data = cwd / "data" / "freebase_qa"
    data.mkdir(parents=True)
    demo = {q["id"]: q for q in map(json.loads, DEMO.read_text().splitlines())}
    cwq = [
        {"ID": qid, "question": demo[qid]["question"], "answer": demo[qid]["answers"][0][0]}
        | {"compositionality_type": kind, "topic_entity": demo[qid]["topic_entities"]}
        for qid, kind in KINDS.items()
    ]
    (data / "cwq.json").write_text(json.dumps(cwq))
    (data / "cwq_aliases.json").write_text("{}")
    done = paper_sweep(cwd, "lmp_figure4", "kg=demo")
    assert done.returncode == 0, done.stderr
    assert "3 finished, 0 failed" in done.stdout
    return cwd


def uri(cwd: Path) -> str:
    return f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}"


def records(cwd: Path) -> dict[str, list]:
    """Each method's records, read from its run's predictions.jsonl here, not through the report."""
    client = MlflowClient(uri(cwd))
    out = {}
    for run in client.search_runs(["1"], "attributes.status = 'FINISHED'"):
        if "config_hash" in run.data.tags:
            path = client.download_artifacts(run.info.run_id, "predictions.jsonl", str(cwd / run.info.run_id))
            out[run.data.params["method.name"]] = list(PredictionLog(Path(path)).read().latest.values())
    return out


def percent(records: list, metric: str, keep) -> float:
    chosen = [r for r in records if keep(r)]
    return 100.0 * sum(r.scores[metric] for r in chosen) / len(chosen)


def csv_cells(text: str) -> dict[tuple[str, str], dict]:
    frame = pl.read_csv(text.encode(), infer_schema_length=None)
    return {(row["row"], row["column"]): row for row in frame.to_dicts()}


def test_figure4_splits_each_row_by_question_type_and_depth(figure4, monkeypatch):
    monkeypatch.setenv("KGX_DATA_DIR", str(figure4 / "data"))
    by_method = records(figure4)
    cells = csv_cells(paper_report("lmp_figure4", fmt="csv", uri=uri(figure4), kg="demo"))
    rows = {"io": ("LLM (vanilla) + ChatGPT", "hits1_tog"), "tog": ("ToG + ChatGPT", "hits1_tog")}
    rows["lmp"] = ("LMP + ChatGPT", "hit_any")
    for method, (row, metric) in rows.items():
        for kind in ("composition", "conjunction", "superlative", "comparative"):
            cell = cells[row, kind]
            wanted = percent(by_method[method], metric, lambda r, k=kind: KINDS[r.id] == k)
            assert (cell["state"], cell["kgx_mean"]) == ("run", pytest.approx(wanted)), (method, kind)
            assert cell["questions"] == sum(k == kind for k in KINDS.values())
    # Depth: the distance ToG's reachability measured on the demo KG; IO, without a KG, borrows it.
    distance = {r.id: r.reach.distance for r in by_method["tog"] if r.reach and r.reach.distance is not None}
    assert sorted(set(distance.values())) == [1, 2, 3]
    for method, (row, metric) in rows.items():
        for hops in (1, 2, 3):
            wanted = percent(by_method[method], metric, lambda r, h=hops: distance.get(r.id) == h)
            assert cells[row, f"{hops}-hop"]["kgx_mean"] == pytest.approx(wanted), (method, hops)
        assert cells[row, "4-hop"]["state"] == "not run"
    assert "reach distance" in cells["ToG + ChatGPT", "1-hop"]["notes"]
    assert "on kg demo, which does not serve cwq" in cells["ToG + ChatGPT", "1-hop"]["notes"]


def test_without_kg_demo_the_kg_rows_fill_nothing_and_say_why(figure4, monkeypatch):
    monkeypatch.setenv("KGX_DATA_DIR", str(figure4 / "data"))
    cells = csv_cells(paper_report("lmp_figure4", fmt="csv", uri=uri(figure4)))
    tog = cells["ToG + ChatGPT", "composition"]
    assert tog["state"] == "not run" and "1 run(s) on kg demo left out" in tog["notes"]
    assert "--kg demo shows such runs" in tog["notes"]
    assert cells["LLM (vanilla) + ChatGPT", "composition"]["state"] == "run"  # IO reads no KG


def test_table12_splits_lmp_by_whether_the_answer_was_shown(figure4, monkeypatch):
    monkeypatch.setenv("KGX_DATA_DIR", str(figure4 / "data"))
    lmp = records(figure4)["lmp"]
    cells = csv_cells(paper_report("lmp_table12", fmt="csv", uri=uri(figure4), kg="demo"))
    for shown, column in ((True, "w. correct facts CWQ"), (False, "w/o. correct facts CWQ")):
        chosen = [r for r in lmp if r.shown is shown]
        cell = cells["LMP + Llama-3-8B", column]
        assert chosen and cell["state"] == "run"
        assert cell["kgx_mean"] == pytest.approx(percent(lmp, "hit_any", lambda r, s=shown: r.shown is s))
        assert cell["questions"] == len(chosen)
    assert {
        cells["LMP + Llama-3-70B", c]["state"] for c in ("w. correct facts WebQSP", "w/o. correct facts WebQSP")
    } == {"not run"}


def test_breakdown_gives_a_metric_per_value_of_a_question_field(figure4, monkeypatch, capsys):
    monkeypatch.setenv("KGX_DATA_DIR", str(figure4 / "data"))
    by_method = records(figure4)
    report_main(
        ["breakdown", "--by", "compositionality_type", "--metric", "hits1_tog", "--rows", "method"]
        + ["--format", "csv", "--tracking-uri", uri(figure4)]
    )
    frame = pl.read_csv(capsys.readouterr().out.encode(), infer_schema_length=None)
    got = {(r["method"], r["compositionality_type"]): r["mean"] for r in frame.to_dicts()}
    for method, recs in by_method.items():
        for kind in set(KINDS.values()):
            assert got[method, kind] == pytest.approx(percent(recs, "hits1_tog", lambda r, k=kind: KINDS[r.id] == k))
    report_main(["breakdown", "--by", "shown", "--rows", "method", "--tracking-uri", uri(figure4), "--format", "html"])
    assert "<caption>hits1 by method / question shown (a gold answer was in the prompt" in capsys.readouterr().out


def test_breakdown_by_a_field_no_question_has_is_one_line(figure4, monkeypatch, capsys):
    monkeypatch.setenv("KGX_DATA_DIR", str(figure4 / "data"))
    with pytest.raises(SystemExit) as stop:
        report_main(["breakdown", "--by", "level", "--rows", "method", "--tracking-uri", uri(figure4)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert "no question of these runs has a value for 'level'; fields: shown, status" in err
