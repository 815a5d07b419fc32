"""Calls paid for by questions in flight when the process is killed: the billing log
keeps them, and the rerun counts them in the run's ``billed_calls``, tokens and cost."""

from __future__ import annotations

import json
import signal
import time

import pytest
from mlflow.tracking import MlflowClient

from kgx.core.types import Prediction
from kgx.core.usage import Usage
from kgx.llm.meter import Meter
from kgx.results.billing import BillingLog, unsettled
from kgx.results.record import Record
from tests.helpers import kgx_process
from tests.inprocess import kgx_main


def call(tokens: int) -> Usage:
    return Usage(calls=1, billed_calls=1, billed_input_tokens=tokens, billed_output_tokens=1, cost_usd=0.5)


def record(qid: str, usage: Usage) -> Record:
    return Record(qid, "q?", [["a"]], Prediction(answer="a"), {}, "ok", usage)


def test_a_meter_bills_each_call_as_it_returns_and_only_billed_ones(tmp_path):
    log = BillingLog(tmp_path / "billing.jsonl")
    meter = Meter(billed=log.writer("q1"))
    meter.record("answer", call(10))
    meter.record("answer", Usage(calls=1, cached_calls=1, input_tokens=10))  # a cache hit costs nothing
    meter.record("verify", call(20))
    assert len((tmp_path / "billing.jsonl").read_text().splitlines()) == 2  # flushed: a kill -9 keeps them
    paid = log.read()["q1"]
    assert (paid.billed_calls, paid.billed_input_tokens, paid.cost_usd) == (2, 30, 1.0)


def test_unsettled_is_what_no_record_counts(tmp_path):
    log = BillingLog(tmp_path / "billing.jsonl")
    for qid, n in (("done", 2), ("killed", 3), ("retried", 4)):
        for _ in range(n):
            log.append(qid, call(10))
    with (tmp_path / "billing.jsonl").open("a") as out:
        out.write('{"id": "cut mid-wri')  # the kill's torn last line
    records = [
        record("done", call(10) + call(10)),
        record("retried", call(10)),  # the attempt the kill interrupted left 3 calls unrecorded
        record("legacy", call(10)),  # a record from before the billing log: nothing to add
    ]
    left = unsettled(log.read(), records)
    assert (left.billed_calls, left.billed_input_tokens, left.billed_output_tokens) == (6, 60, 6)
    assert left.cost_usd == pytest.approx(3.0)


@pytest.mark.slow
def test_a_killed_invocation_still_counts_its_time_and_the_calls_in_flight(tmp_path):
    """sc makes 5 sequential calls per question: the process is killed with -9 while a question
    has paid for some of them and has no record. The rerun's billed_calls counts them, and its
    wall time counts the killed invocation's time up to its last logged question."""
    args = ["method=sc", "llm=scripted", "run.progress=false", "dataset.limit=6", "llm.latency_s=0.2"]
    args += ["llm.cache=false", "run.concurrency=1"]
    per_question_s = 5 * 0.2
    first = kgx_process(tmp_path, *args)

    def in_flight() -> list[str]:
        """Billing lines of questions without a record: calls paid for by the question in hand."""
        found = list(tmp_path.glob("outputs/runs/*/billing.jsonl"))
        if not found:
            return []
        done = {json.loads(line)["id"] for line in (found[0].parent / "predictions.jsonl").read_text().splitlines()}
        return [line for line in found[0].read_text().splitlines() if json.loads(line)["id"] not in done]

    deadline = time.time() + 180
    while not (list(tmp_path.glob("outputs/runs/*/predictions.jsonl")) and in_flight()):
        assert time.time() < deadline and first.poll() is None, first.stderr.read() if first.poll() else "slow"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    lost = len(in_flight())
    assert lost >= 1
    (out_dir,) = tmp_path.glob("outputs/runs/*")
    killed_wall = float((out_dir / "wall_s").read_text())
    killed_lines = len((out_dir / "predictions.jsonl").read_text().splitlines())
    assert killed_wall >= per_question_s * (killed_lines - 1)  # up to its last logged question

    again = kgx_main(tmp_path, *args)
    assert again.returncode == 0, again.stderr[-2000:]
    records = [json.loads(line) for line in (out_dir / "predictions.jsonl").read_text().splitlines()]
    recorded = sum(r["usage"]["billed_calls"] for r in records)
    billed = len((out_dir / "billing.jsonl").read_text().splitlines())
    metrics = (
        MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
        .get_run((out_dir / "mlflow_run_id").read_text())
        .data.metrics
    )
    assert len(records) == 6 and billed == recorded + lost and metrics["billed_calls"] == billed
    assert metrics["wall_s"] >= killed_wall + per_question_s * (6 - killed_lines)
