"""Whole runs on the scripted backbone: predictions, MLflow records, resume, errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from kgx.core.types import Prediction
from kgx.results.record import Record
from tests.core.test_metrics import RUN_METRICS
from tests.helpers import mlflow_run, swap_method, trace_of


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_a_run_writes_predictions_and_one_mlflow_run_with_every_metric(run, in_tmp):
    out = run("dataset.limit=6")
    records = sorted(lines(out.out_dir / "predictions.jsonl"), key=lambda r: r["id"])
    assert [r["id"] for r in records] == [f"demo-00{i}" for i in range(1, 7)]
    first = records[0]
    assert {"id", "question", "gold", "prediction", "scores", "calls", "tokens", "latency_s", "status", "trace"} <= set(
        first
    )
    assert first["calls"] == 1 and first["tokens"] == first["usage"]["input_tokens"] + first["usage"]["output_tokens"]
    trace = trace_of(out.out_dir, Record.from_dict(first))
    assert trace["events"][0]["stage"] == "answer" and trace["events"][0]["messages"]

    logged = mlflow_run(in_tmp, out.run_id)
    assert logged.info.status == "FINISHED"
    assert set(RUN_METRICS) <= set(logged.data.metrics)
    assert logged.data.metrics["n_questions"] == 6 and logged.data.metrics["llm_calls_per_q"] == 1
    assert logged.data.metrics["billed_calls"] == 6
    assert logged.data.metrics["llm_calls_per_q.answer"] == 1
    assert logged.data.metrics["total_tokens_per_q.answer"] == logged.data.metrics["total_tokens_per_q"]
    assert logged.data.metrics["total_tokens_per_q"] == pytest.approx(sum(r["tokens"] for r in records) / 6)
    assert logged.data.params["method.name"] == "cot" and logged.data.params["dataset.limit"] == "6"
    assert logged.data.params["llm.model"] == "kgx-scripted/overlap"
    tags = logged.data.tags
    assert tags["method"] == "cot" and tags["llm"] == "kgx-scripted/overlap" and len(tags["config_hash"]) == 12
    artifacts = {
        a.path for a in MlflowClient(f"sqlite:///{in_tmp / 'mlruns' / 'mlflow.db'}").list_artifacts(out.run_id)
    }
    assert {"config.json", "predictions.jsonl", "predictions.parquet", "traces"} <= artifacts


def test_rerun_is_skipped_then_force_recomputes_from_the_cache(run, in_tmp):
    first = run("dataset.limit=5")
    again = run("dataset.limit=5")
    assert again.skipped and (again.computed, again.resumed, again.billed_calls) == (0, 5, 0)
    assert again.run_id == first.run_id
    assert again.summary["wall_s"] >= first.summary["wall_s"]  # time of both invocations
    assert {k: v for k, v in again.summary.items() if k != "wall_s"} == {
        k: v for k, v in first.summary.items() if k != "wall_s"
    }

    forced = run("dataset.limit=5", "run.force=true")
    assert (forced.computed, forced.billed_calls) == (5, 0)
    assert forced.summary["cached_calls"] == 5 and forced.summary["billed_calls"] == 0
    assert forced.summary["hits1_tog"] == first.summary["hits1_tog"]
    kept = list(forced.out_dir.glob("predictions.*.jsonl"))
    assert len(kept) == 1 and len(lines(kept[0])) == 5  # the earlier log is set aside, not lost


def test_an_interrupted_log_is_completed_without_repeating_work(run, in_tmp):
    first = run("dataset.limit=8")
    log = first.out_dir / "predictions.jsonl"
    text = log.read_text().splitlines(keepends=True)
    log.write_text("".join(text[:3]) + text[3][:40])  # killed while writing line 4
    MlflowClient(f"sqlite:///{in_tmp / 'mlruns' / 'mlflow.db'}").set_terminated(first.run_id, "KILLED")
    again = run("dataset.limit=8")
    assert again.computed == 5 and again.resumed == 3
    ids = [r["id"] for r in lines(log)]
    assert sorted(ids) == sorted(f"demo-00{i}" for i in range(1, 9))


def test_a_question_that_raises_is_an_error_in_the_denominator(run, monkeypatch):
    def flaky(question, ctx):
        if question.id == "demo-002":
            raise RuntimeError("boom")
        return Prediction(answer="{x}", answers=[question.answers[0][0]])

    swap_method(monkeypatch, "cot", flaky)
    out = run("dataset.limit=4")
    by_id = {r.id: r for r in out.records}
    assert by_id["demo-002"].status == "error" and "boom" in by_id["demo-002"].prediction.reason
    trace = trace_of(out.out_dir, by_id["demo-002"])
    assert "RuntimeError: boom" in trace["error"]
    assert out.summary["errors"] == 1 and out.summary["n_questions"] == 4
    assert out.summary["hits1"] == 75.0


def test_self_consistency_bills_n_calls_and_votes(run):
    out = run("method=sc", "method.n=3", "dataset.limit=2")
    assert out.summary["llm_calls_per_q"] == 3
    assert all(r.prediction.reason.startswith("majority") for r in out.records)


def test_unpriced_backbone_logs_unknown_cost(run, in_tmp):
    out = run("dataset.limit=2", "llm.input_cost_per_token=null", "llm.output_cost_per_token=null")
    assert math.isnan(out.summary["cost_usd"])
    logged = mlflow_run(in_tmp, out.run_id)
    assert math.isnan(logged.data.metrics["cost_usd"]) and logged.data.tags["unknown_metrics"] == "cost_usd"


def test_transient_failures_are_survived_and_counted(run):
    out = run("dataset.limit=10", "llm.failure_rate=0.3", "llm.max_retries=8", "llm.backoff_s=0", "llm.cache=false")
    assert out.summary["errors"] == 0
    assert sum(r.usage.retries for r in out.records) > 0


def test_hosted_model_without_key_fails_before_any_question(run, in_tmp, monkeypatch):
    from kgx.llm.errors import LLMError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        run("llm=gpt4o_mini")
    assert not (in_tmp / "outputs" / "runs").exists()


def test_billed_tokens_drop_to_zero_when_the_cache_serves(run):
    first = run("dataset.limit=3")
    assert first.summary["billed_tokens"] == first.summary["total_tokens_per_q"] * 3
    forced = run("dataset.limit=3", "run.force=true")
    assert (
        forced.summary["billed_tokens"] == 0
        and forced.summary["total_tokens_per_q"] == first.summary["total_tokens_per_q"]
    )
