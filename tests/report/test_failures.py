"""Runs you can trust: errors are never final, outages stop a run early, and no failure is
reported as a result (kgx.core.faults, kgx.run.loop, kgx.run.execute)."""

from __future__ import annotations

import json

import pytest

from kgx import methods
from kgx.core.faults import Breaker, Failure
from kgx.core.paths import file_name
from kgx.core.types import Prediction
from kgx.core.usage import Usage
from kgx.kg.endpoint import KGUnavailable
from kgx.llm.errors import LLMError
from kgx.results.predlog import PredictionLog
from kgx.results.record import Record
from tests.helpers import mlflow_run, swap_method


def answers(outcome) -> dict[str, list[str]]:
    return {r.id: r.prediction.answers for r in outcome.records}


def flaky_run(run, overrides):
    """A run against a flaky provider; the provider may also fail the pre-flight request, which
    stops that invocation before any question (the next one draws anew)."""
    for _ in range(10):
        try:
            return run(*overrides)
        except LLMError as exc:
            assert "pre-flight request failed" in str(exc)
    raise AssertionError("the pre-flight request failed ten times in a row")


@pytest.mark.slow
@pytest.mark.parametrize("method", ["lmp", "knowpath", "tog", "cgpe"])
def test_failed_questions_are_recomputed_until_the_run_matches_a_clean_one(run, in_tmp, method):
    faulty = (
        "dataset.limit=6",
        f"method={method}",
        "llm.failure_rate=0.3",  # a call fails after its retry 9% of the time: some questions, not all
        "llm.max_retries=1",
        "llm.backoff_s=0",
        "run.max_consecutive_errors=0",
    )
    first = flaky_run(run, faulty)
    assert first.status == "FAILED" and first.failures and all(f.kind == "llm.server" for f in first.failures)
    logged = mlflow_run(in_tmp, first.run_id)
    assert logged.info.status == "FAILED" and logged.data.tags["result"] == "partial"
    assert logged.data.metrics["errors"] == logged.data.metrics["errors.infra"] == len(first.failures)

    errored = {r.id for r in first.records if r.failed}
    outcome, reruns = first, 0
    while outcome.status != "FINISHED":
        reruns += 1
        assert reruns <= 30, "reruns never reached a run without errors"
        before = {r.id for r in outcome.records if r.failed}
        outcome = flaky_run(run, faulty)
        # only the errors are asked again: answered now, or failed again
        assert outcome.resumed == 6 - len(before) and outcome.computed + outcome.failed == len(before)
    assert outcome.run_id == first.run_id and not outcome.failures
    assert mlflow_run(in_tmp, first.run_id).info.status == "FINISHED"
    assert outcome.summary["errors"] == 0 and outcome.summary["invocations"] >= reruns + 1
    clean = run("dataset.limit=6", f"method={method}")
    assert answers(outcome) == answers(clean)
    # Every call the run paid for is counted, the errored attempts included.
    assert outcome.summary["billed_calls"] > sum(r.usage.billed_calls for r in outcome.records) or not errored
    lines = (outcome.out_dir / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 6 + sum(1 for line in lines if json.loads(line)["status"] == "error")


def test_twenty_percent_transient_failures_lose_nothing(run):
    out = run("dataset.limit=40", "llm.failure_rate=0.2", "llm.backoff_s=0", "llm.cache=false")
    assert out.status == "FINISHED" and out.summary["errors"] == 0 and out.tripped is None
    assert out.summary["retries"] > 0 and len(out.records) == 40


def test_an_outage_stops_the_run_after_the_breakers_budget_and_the_rerun_resumes(run, in_tmp, monkeypatch):
    real = methods.get("cot")

    def down(question, ctx):
        if int(question.id.split("-")[1]) > 4:
            raise KGUnavailable("SPARQL endpoint http://127.0.0.1:9/sparql unreachable after 4 tries", "kg.unreachable")
        return real(question, ctx)

    swap_method(monkeypatch, "cot", down)
    out = run("dataset.limit=40", "run.concurrency=1")
    assert out.status == "FAILED" and out.tripped.kind == "kg.unreachable"
    # One question in flight at a time: exactly five in a row trip it, the rest are left.
    assert len(out.failures) == 5 and len(out.records) == 9 and out.not_started == 31
    tags = mlflow_run(in_tmp, out.run_id).data.tags
    assert tags["stopped_early"].startswith("kg.unreachable: SPARQL endpoint") and tags["unanswered"] == "31"

    swap_method(monkeypatch, "cot", real)  # the endpoint is back
    again = run("dataset.limit=40", "run.concurrency=1")
    assert again.status == "FINISHED" and (again.resumed, again.computed, again.retried) == (4, 36, len(out.failures))


def test_a_method_bug_is_an_error_of_its_own_kind_and_is_retried(run, monkeypatch):
    def buggy(question, ctx):
        if question.id == "demo-002":
            raise KeyError("relation")
        return Prediction(answer="{x}", answers=[question.answers[0][0]])

    swap_method(monkeypatch, "cot", buggy)
    out = run("dataset.limit=4")
    assert out.status == "FAILED" and [f.signature for f in out.failures] == ["method KeyError"]
    assert out.summary["errors"] == 1 and out.summary["errors.infra"] == 0

    swap_method(monkeypatch, "cot", lambda q, ctx: Prediction(answer="{x}", answers=[q.answers[0][0]]))
    again = run("dataset.limit=4")
    assert again.status == "FINISHED" and (again.computed, again.retried) == (1, 1)


def test_the_breaker_needs_the_same_failure_in_a_row():
    kg = Failure("kg.unreachable", True, "KGUnavailable", "down")
    llm = Failure("llm.server", True, "LLMError", "503")
    breaker = Breaker(3)
    assert not any(breaker.observe(f) for f in [kg, kg, None, kg, llm, kg, kg])
    assert breaker.observe(kg) and breaker.tripped == kg
    assert not any(Breaker(0).observe(kg) for _ in range(100))


def test_preflight_stops_the_run_before_any_question(run, in_tmp):
    with pytest.raises(LLMError, match="pre-flight request failed, no question was run.*ServiceUnavailable"):
        run("dataset.limit=3", "llm.failure_rate=0.99", "llm.max_retries=1", "llm.backoff_s=0")
    assert not list(in_tmp.glob("outputs/runs/*/predictions.jsonl"))


def test_damaged_log_lines_are_set_aside_and_their_questions_recomputed(run, monkeypatch, capsys):
    real = methods.get("cot")
    swap_method(
        monkeypatch, "cot", lambda q, ctx: (_ for _ in ()).throw(KeyError("x")) if q.id == "demo-006" else real(q, ctx)
    )
    first = run("dataset.limit=6")
    assert first.status == "FAILED"
    log = first.out_dir / "predictions.jsonl"
    lines = sorted(log.read_bytes().splitlines(), key=lambda raw: json.loads(raw)["id"])
    lines[1] = b"\x00" * 40  # what a crash can leave in a file's last blocks
    lines[3] = b'{"id": "demo-004", "question": '
    log.write_bytes(b"\n".join(lines) + b"\n")

    swap_method(monkeypatch, "cot", real)
    again = run("dataset.limit=6")
    err = capsys.readouterr().err
    assert f"{log}:2 (NUL bytes)" in err and f"{log}:4 (not JSON" in err
    assert again.status == "FINISHED" and again.computed == 3 and again.resumed == 3
    (side,) = first.out_dir.glob("predictions.damaged-*.jsonl")
    assert side.read_bytes().count(b"\n") == 2
    assert sorted(PredictionLog(log).read().latest) == [f"demo-00{i}" for i in range(1, 7)]


def test_a_lone_surrogate_never_loses_a_finished_question(tmp_path):
    log = PredictionLog(tmp_path / "predictions.jsonl")
    log.extend([Record("q1", "who is \ud800?", [], Prediction(answer="{x}"), {}, "ok", Usage())])
    assert PredictionLog(log.path).read().latest["q1"].question == "who is \ud800?"


def test_question_files_never_collide():
    names = {file_name(qid) for qid in ["x/y", "x_y", "x%2Fy", "x y", "..", "a" * 400, "a" * 401]}
    assert len(names) == 7 and all(len(n) <= 120 and "/" not in n and not n.startswith(".") for n in names)
