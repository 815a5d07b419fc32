"""Per-question transcripts: every question of a run is an MLflow trace linked to the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from kgx.core.config import ConfigError
from kgx.core.types import Prediction
from kgx.track.spans import stages, trace_name
from tests.helpers import swap_method
from tests.inprocess import kgx_main


def client(tmp: Path) -> MlflowClient:
    return MlflowClient(f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}")


def traces(tmp: Path, run_id: str, filter_string: str | None = None, spans: bool = True) -> list:
    mlflow = client(tmp)
    experiment = mlflow.get_run(run_id).info.experiment_id
    return list(
        mlflow.search_traces(
            locations=[experiment], run_id=run_id, filter_string=filter_string, include_spans=spans, max_results=1000
        )
    )


def question_ids(found: list) -> list[str]:
    return sorted(t.info.tags["mlflow.traceName"] for t in found)


def test_each_question_is_a_trace_of_its_stages_and_calls(run, in_tmp):
    out = run("method=tog", "dataset.limit=4")
    found = traces(in_tmp, out.run_id)
    assert question_ids(found) == [r.id for r in out.records]
    by_id = {r.id: r for r in out.records}
    for trace in found:
        record = by_id[trace.info.tags["mlflow.traceName"]]
        spans = {s.span_id: s for s in trace.data.spans}
        root = next(s for s in spans.values() if s.parent_id is None)
        assert root.name == record.id and trace.info.tags["mlflow.traceName"] == record.id
        assert root.inputs["question"] == record.question and root.inputs["topic_entities"]
        assert root.outputs == {"answer": record.prediction.answer, "answers": record.prediction.answers}
        assert root.attributes["kgx.gold"] == record.gold and root.attributes["kgx.scores"] == record.scores
        assert trace.info.tags["kgx.status"] == record.status == "ok"
        assert trace.info.tags["kgx.hits1"] == f"{record.scores['hits1']:g}"
        calls = [s for s in spans.values() if s.span_type in ("CHAT_MODEL", "TOOL")]
        assert all(
            spans[s.parent_id].span_type == "CHAIN" and spans[s.parent_id].parent_id == root.span_id for s in calls
        )
        llm = [s for s in calls if s.span_type == "CHAT_MODEL"]
        assert len(llm) == record.usage.calls and len(calls) - len(llm) == record.kg.queries > 0
        assert sum(s.attributes["kgx.input_tokens"] for s in llm) == record.usage.input_tokens
        assert trace.info.token_usage == {
            "input_tokens": record.usage.input_tokens,
            "output_tokens": record.usage.output_tokens,
            "total_tokens": record.usage.total_tokens,
        }
        assert llm[0].inputs["messages"][0]["content"] and llm[0].outputs["choices"][0]["message"]["content"]
        assert {"relation_prune", "reasoning"} <= {spans[s.parent_id].name for s in llm}
        assert root.start_time_ns <= min(s.start_time_ns for s in calls)
        assert max(s.end_time_ns for s in calls) <= root.end_time_ns


def test_errors_are_searchable_and_a_rerun_logs_only_the_new_attempt(run, in_tmp, monkeypatch):
    def flaky(question, ctx):
        if question.id == "demo-002":
            raise RuntimeError("boom")
        return Prediction(answer="{x}", answers=[question.answers[0][0]])

    from kgx import methods

    fixed = methods.method("cot").answer
    swap_method(monkeypatch, "cot", flaky)
    first = run("dataset.limit=4")
    errors = traces(in_tmp, first.run_id, "tags.kgx.status = 'error'")
    assert question_ids(errors) == ["demo-002"]
    assert errors[0].info.state.value == "ERROR" and errors[0].info.tags["kgx.error"] == "method"
    root = next(s for s in errors[0].data.spans if s.parent_id is None)
    assert "RuntimeError: boom" in root.events[0].attributes["exception.stacktrace"]
    assert question_ids(traces(in_tmp, first.run_id, "tags.kgx.hits1 = '1'")) == ["demo-001", "demo-003", "demo-004"]

    swap_method(monkeypatch, "cot", fixed)
    again = run("dataset.limit=4")
    assert again.run_id == first.run_id and again.computed == 1
    assert question_ids(traces(in_tmp, first.run_id, spans=False)) == [
        "demo-001",
        "demo-002",
        "demo-002",
        "demo-003",
        "demo-004",
    ]


def test_a_lost_transcript_is_logged_late_and_none_twice(run, in_tmp):
    first = run("dataset.limit=3")
    mlflow = client(in_tmp)
    lost = traces(in_tmp, first.run_id, "trace.name = 'demo-002'", spans=False)
    mlflow.delete_traces(mlflow.get_run(first.run_id).info.experiment_id, trace_ids=[lost[0].info.trace_id])
    mlflow.set_terminated(first.run_id, "KILLED")  # killed while logging: the rerun is not skipped
    again = run("dataset.limit=3")
    assert again.computed == 0
    assert question_ids(traces(in_tmp, first.run_id, spans=False)) == ["demo-001", "demo-002", "demo-003"]


@pytest.mark.parametrize("setting, expected", [("2", ["demo-001", "demo-002"]), ("off", [])])
def test_run_traces_names_how_many_questions_get_one(run, in_tmp, setting, expected):
    out = run("dataset.limit=4", f"run.traces={setting}")
    assert question_ids(traces(in_tmp, out.run_id, spans=False)) == expected
    assert len(out.records) == 4


def test_a_bad_run_traces_value_is_refused(compose_cfg, tmp_path):
    from kgx.run.spec import to_run_spec

    for bad in ("some", "-1", "1.5"):
        with pytest.raises(ConfigError, match=rf"run\.traces={bad}: use all, off, or a number N"):
            to_run_spec(compose_cfg("method=cot", f"run.traces={bad}"))
    done = kgx_main(tmp_path, "llm=scripted", "run.traces=some")
    assert done.returncode != 0 and "kgx: error: run.traces=some: use all, off" in done.stderr


def test_no_key_reaches_a_trace(run, in_tmp, monkeypatch):
    secret = "sk-kgx-test-0123456789"
    monkeypatch.setenv("KGX_TEST_KEY", secret)
    out = run("dataset.limit=2", "llm.api_key_env=KGX_TEST_KEY")
    found = traces(in_tmp, out.run_id)
    assert len(found) == 2
    assert all(secret not in json.dumps(s.to_dict()) for t in found for s in t.data.spans)


def test_kg_calls_join_the_stage_whose_input_they_gather():
    events = [
        {"kind": "kg", "operation": "relations"},
        {"kind": "llm", "stage": "prune"},
        {"kind": "kg", "operation": "names"},
        {"kind": "note", "stage": "answer", "message": "fallback"},
        {"kind": "llm", "stage": "answer"},
        {"kind": "kg", "operation": "names"},
    ]
    assert [(stage, [e["kind"] for e in run]) for stage, run in stages(events)] == [
        ("prune", ["kg", "llm"]),
        ("answer", ["kg", "note", "llm", "kg"]),
    ]
    assert stages([{"kind": "kg"}]) == [("kg", [{"kind": "kg"}])]


def test_an_id_too_long_for_mlflow_keeps_its_batch_of_transcripts(run, in_tmp, capsys):
    long_id = "q" * 5000
    rows = [
        {"id": long_id, "question": "who directed Inception?", "answers": [["Christopher Nolan"]]},
        {"id": "short", "question": "who wrote Dune?", "answers": [["Frank Herbert"]]},
    ]
    path = in_tmp / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = run("dataset=custom", f"dataset.path={path}")
    assert "transcripts logged, the rest not" not in capsys.readouterr().err
    names = question_ids(traces(in_tmp, out.run_id, spans=False))
    assert names[1] == "short" and len(names[0]) == 4096  # MLflow's limit; cut, with a hash of the whole id
    assert names[0].startswith("q" * 4000) and names[0][4079] == "~"
    assert trace_name("short") == "short" and trace_name(long_id) == names[0] != trace_name(long_id + "q")
