"""``python -m kgx.estimate``: a pilot's prediction against the full run it predicts.

On the scripted backbone CoT makes one call per question and its tokens vary with the question,
so a seeded pilot of 8 questions must land within 10% of the full run's calls and tokens, with
the measured figures inside the printed interval. KG methods (LMP, ToG) vary far more between
questions: their pilot needs more questions (see the README), which the interval says.
"""
from __future__ import annotations

import json
import os

import pytest

from kgx.estimate import main
from kgx.types import Prediction
from tests.helpers import swap_method

PILOT = 8
METAQA = ("dataset=metaqa_2hop", "kg=metaqa", "dataset.limit=100")


def estimate(capsys, *args: str) -> dict:
    assert main([*args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def within(figure: dict, measured: float) -> None:
    """The prediction is within 10% of the measured figure and its interval holds it."""
    assert abs(figure["value"] - measured) <= 0.10 * measured, (figure, measured)
    assert figure["low"] <= measured <= figure["high"], (figure, measured)


@pytest.mark.parametrize("dataset", [(), METAQA], ids=["demo", "metaqa_2hop"])
def test_the_pilot_predicts_the_full_run_within_ten_percent(capsys, run, dataset):
    if dataset and not os.environ.get("KGX_DATA_DIR"):
        pytest.skip("KGX_DATA_DIR is unset: MetaQA is shared data")
    est = estimate(capsys, "method=cot", "llm=scripted", *dataset, "--pilot", str(PILOT))
    (job,) = est["jobs"]
    full = run(*dataset)
    records = full.records
    size = 100 if dataset else 16
    assert (job["questions"], job["pilot"], job["errors"], len(records)) == (size, PILOT, 0, size)
    within(job["calls"], sum(r.calls for r in records))
    tokens = {k: sum(getattr(r.usage, k) for r in records) for k in ("input_tokens", "output_tokens")}
    predicted = job["input_tokens"]["value"] + job["output_tokens"]["value"]
    assert abs(predicted - sum(tokens.values())) <= 0.10 * sum(tokens.values())
    within(job["input_tokens"], tokens["input_tokens"])
    within(job["output_tokens"], tokens["output_tokens"])
    assert job["cost_usd"] == {"value": 0.0, "low": 0.0, "high": 0.0}  # scripted is priced at 0, not unknown
    # The pilot's calls are in the shared response cache: the full run pays only for the rest.
    assert full.billed_calls == size - PILOT


def test_a_sweep_prints_each_job_and_the_total(capsys, in_tmp):
    assert main(["-m", "method=io,cot", "llm=scripted", "dataset.limit=8", "--pilot", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split()[0] for line in lines if line.startswith(("method=", "total"))]
    assert rows == ["method=io", "method=cot", "total"]
    total = lines[[i for i, line in enumerate(lines) if line.startswith("total")][0]].split()
    assert total[1:4] == ["16", "8", "0"]  # questions, pilot questions, errors of both jobs
    assert total[4] == "16"  # io and cot: one call per question, 8 questions each
    assert any(line.startswith("[low-high]: 95% t-interval") for line in lines)

    assert main(["method=io,cot", "llm=scripted", "dataset.limit=8", "--pilot", "4", "--format", "csv"]) == 0
    csv_rows = capsys.readouterr().out.splitlines()
    assert [r.split(",")[0] for r in csv_rows] == ["job", "method=io", "method=cot", "total"]
    assert csv_rows[-1].split(",")[4:7] == ["16.0", "16.0", "16.0"]


@pytest.mark.parametrize("override, named", [("run.concurency=2", "run.concurency"),
                                             ("dataset=nope", "dataset/nope"),
                                             ("run.concurrency=0", "run.concurrency=0")])
def test_a_bad_override_is_an_error_naming_it(in_tmp, override, named):
    with pytest.raises(SystemExit) as exc:
        main(["method=cot", "llm=scripted", override])
    assert str(exc.value).startswith("kgx: error: ") and named in str(exc.value)


def test_a_missing_dataset_file_names_the_job(in_tmp):
    with pytest.raises(SystemExit) as exc:
        main(["method=cot", "llm=scripted", "dataset=custom", "dataset.path=nowhere.jsonl"])
    assert str(exc.value).startswith("kgx: error: job cot-custom-scripted: ") and "nowhere.jsonl" in str(exc.value)


def test_the_pilot_leaves_no_run_in_the_users_store(capsys, in_tmp, monkeypatch):
    from mlflow.tracking import MlflowClient

    store = f"sqlite:///{in_tmp / 'user.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    MlflowClient(store).create_experiment("kgx")  # the researcher's store, already in use
    estimate(capsys, "method=cot", "llm=scripted", "--pilot", "3")
    assert MlflowClient(store).search_runs([e.experiment_id for e in MlflowClient(store).search_experiments()]) == []
    assert not (in_tmp / "mlruns").exists() and not (in_tmp / "outputs").exists()
    assert (in_tmp / ".kgx_cache" / "llm.sqlite").exists()  # the cache is the one runs use
    assert os.environ["MLFLOW_TRACKING_URI"] == store


def test_a_failing_pilot_question_is_an_error_not_an_estimate(capsys, in_tmp, monkeypatch):
    def buggy(question, ctx):
        if question.id in ("demo-003", "demo-007"):
            raise KeyError("relation")
        return Prediction(answer="x", answers=["x"])

    swap_method(monkeypatch, "cot", buggy)
    with pytest.raises(SystemExit) as exc:
        main(["method=cot", "llm=scripted", "dataset.limit=8", "--pilot", "8"])
    message = str(exc.value)
    assert message.startswith("kgx: error: job cot-demo-scripted: 2 of 8 pilot questions failed (2 method KeyError)")
    table = capsys.readouterr().out
    assert "pilot failed" in table and table.splitlines()[2].split()[1:4] == ["8", "8", "2"]


def test_wall_time_follows_latency_concurrency_and_rate_limits(capsys, in_tmp):
    # io: one call a question, each taking 0.2 s on the scripted provider, two questions in flight.
    slow = ["method=io", "llm=scripted", "llm.latency_s=0.2", "run.concurrency=2", "dataset.limit=8", "--pilot", "4"]
    (job,) = estimate(capsys, *slow)["jobs"]
    assert 0.75 <= job["wall_s"]["value"] <= 1.0  # 8 questions x 0.2 s / 2 in flight = 0.8 s
    # 30 requests a minute: 8 calls take 16 s, whatever the latency.
    (limited,) = estimate(capsys, *slow, "llm.rpm=30")["jobs"]
    assert limited["wall_s"] == {"value": 16.0, "low": 16.0, "high": 16.0}
    # Every call is cached now: the seconds per call the first pilot measured still give the wall time.
    assert main([*slow]) == 0
    out = capsys.readouterr().out
    assert "wall from an earlier pilot's seconds per call" in out
    assert "0.8s" in out.splitlines()[2] or "0.9s" in out.splitlines()[2]
