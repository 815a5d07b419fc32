"""``run.processes``: worker processes answer a run as its own process does (kgx.run.processes):
the same records and figures, the breaker's budget, resume after ``kill -9``, Ctrl-C, no orphan."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from kgx.core.config import ConfigError
from kgx.run import answering
from kgx.run.answering import answerer
from kgx.run.processes import WorkerLost, split
from kgx.run.spec import auto_processes, to_run_spec
from tests import process_doubles
from tests.helpers import kgx_env, trace_of
from tests.orphans import kill_and_count, marked, marker, wait_for

TIMED = (
    "wall_s",
    "latency_s_per_q",
    "latency_s_p95",
    "kg_latency_s_per_q",
    "reach.wall_s",
)  # the clock's, not the run's


def isolated(run, where: Path, *overrides: str):
    """A run with its own output folder, caches and MLflow store under ``where``."""
    return run(
        f"run.output_dir={where / 'out'}",
        f"run.cache_dir={where / 'cache'}",
        f"run.tracking_uri=sqlite:///{where / 'mlflow.db'}",
        *overrides,
    )


def per_question(outcome) -> dict[str, dict]:
    """What a record says about its question, the clock's figures left out."""
    out = {}
    for record in outcome.records:
        data = record.to_dict()
        for timed in ("latency_s", "cpu_s", "reach_s", "reach_cpu_s"):
            data.pop(timed)
        data.pop("trace")  # the shard of the process that answered it
        data["usage"].pop("latency_s", None)
        data["kg"].pop("latency_s")
        if data.get("reach"):
            data["reach"].pop("seconds", None)
        for stage in data["stages"].values():
            stage.pop("latency_s", None)
        out[record.id] = data
    return out


def logged_metrics(where: Path, outcome) -> dict[str, float]:
    metrics = MlflowClient(f"sqlite:///{where / 'mlflow.db'}").get_run(outcome.run_id).data.metrics
    return {k: ("nan" if math.isnan(v) else v) for k, v in metrics.items() if k not in TIMED}


def assert_same_run(run, tmp: Path, *overrides: str) -> None:
    one = isolated(run, tmp / "one", "run.processes=1", *overrides)
    two = isolated(run, tmp / "two", "run.processes=2", *overrides)
    assert one.status == two.status == "FINISHED" and one.computed == two.computed > 0
    assert [r.id for r in one.records] == [r.id for r in two.records]  # dataset order either way
    assert per_question(one) == per_question(two)  # predictions, calls, tokens, KG queries, reachability
    assert {k: v for k, v in one.summary.items() if k not in TIMED} == {
        k: v for k, v in two.summary.items() if k not in TIMED
    } or math.isnan(one.summary["cost_usd"])
    assert logged_metrics(tmp / "one", one) == logged_metrics(tmp / "two", two)
    assert one.billed_calls == two.billed_calls and one.summary["billed_tokens"] == two.summary["billed_tokens"]
    lines = (two.out_dir / "predictions.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == sorted(r.id for r in two.records)  # one line each
    assert len({r.trace for r in two.records}) == 2  # each worker process appends to a trace shard of its own

    def prompts(outcome) -> list:
        return [[e.get("messages") for e in trace_of(outcome.out_dir, r)["events"]] for r in outcome.records]

    assert prompts(one) == prompts(two)


@pytest.mark.parametrize("method", ["io", "tog", "lmp"])
def test_two_processes_give_the_run_of_one_on_the_demo(run, in_tmp, method):
    assert_same_run(run, in_tmp, f"method={method}", "run.concurrency=4")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("KGX_DATA_DIR"), reason="needs $KGX_DATA_DIR (MetaQA 2-hop and its KB)")
def test_two_processes_give_the_run_of_one_on_metaqa_2hop(run, in_tmp, tmp_path_factory):
    store = tmp_path_factory.getbasetemp() / "processes-metaqa-store"
    assert_same_run(
        run,
        in_tmp,
        "method=tog",
        "dataset=metaqa_2hop",
        "dataset.limit=30",
        f"kg.store={store}",
        "run.concurrency=8",
    )


def test_an_outage_stops_two_processes_within_the_breakers_budget(run, in_tmp, monkeypatch):
    monkeypatch.setattr(answering, "answerer", process_doubles.outage_answerer)
    args = ("dataset.limit=40", "run.concurrency=4", "run.processes=2", "llm.latency_s=0.05", "llm.cache=false")
    out = run(*args)
    assert out.status == "FAILED" and out.tripped.kind == "kg.unreachable"
    # In the order records reached the parent (the log's), five failures in a row trip the breaker;
    # after that only questions already handed out finish: at most concurrency - 1 = 3.
    finished = [json.loads(line) for line in (out.out_dir / "predictions.jsonl").read_text().splitlines()]
    streak, trip = 0, None
    for i, record in enumerate(finished):
        streak = streak + 1 if record["status"] == "error" else 0
        if streak == 5 and trip is None:
            trip = i
    assert trip is not None and len(finished) - trip - 1 <= 3
    # The four answered questions wait on the backbone while failures come at once, so they may
    # break streaks: at most 4 x 4 + 5 failures and 4 answers before the trip, 3 after it.
    assert len(finished) == len(out.records) and len(out.records) + out.not_started == 40 and out.not_started >= 12
    assert {f.kind for f in out.failures} == {"kg.unreachable"}

    monkeypatch.setattr(answering, "answerer", answerer)  # the endpoint is back
    again = run(*args)
    assert again.status == "FINISHED" and again.resumed == 4 and again.computed == 36
    assert again.retried == len(out.failures)


def test_a_worker_that_dies_stops_the_run_and_keeps_what_finished(run, in_tmp, monkeypatch):
    monkeypatch.setattr(answering, "answerer", process_doubles.dying_answerer)
    args = ("dataset.limit=12", "run.concurrency=2", "run.processes=2", "llm.cache=false")
    with pytest.raises(WorkerLost, match=r"ended \(exit code 3\) with 1 questions in flight"):
        run(*args)
    (log,) = in_tmp.glob("outputs/runs/*/predictions.jsonl")
    kept = [json.loads(line)["id"] for line in log.read_text().splitlines()]
    assert "demo-006" not in kept and len(kept) == len(set(kept)) >= 4
    monkeypatch.setattr(answering, "answerer", answerer)
    again = run(*args)
    assert again.status == "FINISHED" and again.resumed == len(kept) and again.computed == 12 - len(kept)


def test_a_worker_that_cannot_start_says_why_before_any_question(run, in_tmp, monkeypatch):
    monkeypatch.setattr(answering, "answerer", process_doubles.broken_answerer)
    with pytest.raises(WorkerLost, match="could not start:(.|\n)*FileNotFoundError: the KG store vanished"):
        run("dataset.limit=4", "run.processes=2")
    assert all(not log.read_text() for log in in_tmp.glob("outputs/runs/*/predictions.jsonl"))


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill-9", "ctrl-c"])
def test_a_stopped_run_leaves_no_worker_and_its_rerun_completes_it(tmp_path, how):
    args = ["method=cot", "llm=scripted", "llm.latency_s=0.3", "llm.cache=false", "run.progress=false"]
    args += ["run.concurrency=4", "run.processes=2", "dataset.limit=30"]
    mark = marker()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgx", *args],
        cwd=tmp_path,
        env={**kgx_env(), **mark},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )

    def logged() -> int:
        found = list(tmp_path.glob("outputs/runs/*/predictions.jsonl"))
        return len(found[0].read_text().splitlines()) if found else 0

    wait_for(lambda: logged() >= 4, 240, "4 questions were not logged")
    if how == signal.SIGKILL:
        left, before = kill_and_count(proc, mark, after_s=3)
        assert len(before) >= 3  # the fork server and two workers
    else:
        before = [p for p in marked(mark) if p != proc.pid]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130, proc.stderr.read()
        wait_for(lambda: not marked(mark), 3, "workers outlived the run")
        left = 0
    assert len(before) >= 3 and left == 0
    (log,) = tmp_path.glob("outputs/runs/*/predictions.jsonl")
    kept = len(log.read_text().splitlines())
    assert 4 <= kept < 30

    done = subprocess.run(
        [sys.executable, "-m", "kgx", *args], cwd=tmp_path, env=kgx_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert f"{30 - kept} answered, {kept} resumed" in done.stdout
    ids = [json.loads(line)["id"] for line in log.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 30


def test_run_processes_is_checked_and_auto_pays_only_with_cores_and_flight(compose_cfg, monkeypatch):
    for bad, message in [("0", "must be at least 1"), ("two", "use a number of processes")]:
        with pytest.raises(ConfigError, match=f"run.processes={bad}: {message}"):
            to_run_spec(compose_cfg("llm=scripted", f"run.processes={bad}"))
    spec = to_run_spec(compose_cfg("llm=scripted", "method=tog", "run.processes=8", "run.concurrency=3"))
    assert spec.processes(100) == 3 and spec.processes(2) == 2  # never more than questions in flight
    assert split(256, 3) == [86, 85, 85] and split(5, 2) == [3, 2]
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.delenv("KGX_PARALLEL_JOBS", raising=False)
    flights = (16, 128, 256, 384, 1024)
    assert [auto_processes(flight, True, 5000) for flight in flights] == [1, 1, 2, 3, 3]  # a core for the run
    assert auto_processes(256, False, 5000) == 1  # io, cot, sc: one process keeps up
    assert auto_processes(256, True, 300) == 1  # too few questions to repay starting the workers
    monkeypatch.setenv("KGX_PARALLEL_JOBS", "2")  # a sweep's two jobs share the cores
    assert auto_processes(256, True, 5000) == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.delenv("KGX_PARALLEL_JOBS")
    assert auto_processes(1024, True, 100_000) == 1  # two cores: measured not to pay
