"""``python -m kgx.estimate``: a pilot's prediction against the full run it predicts.

On the scripted backbone CoT makes one call per question and its tokens vary with the question,
so a seeded pilot of 8 questions must land within 10% of the full run's calls and tokens, with
the measured figures inside the printed interval. KG methods (LMP, ToG) vary far more between
questions: a pilot that grows until its interval is within ±10% (``--precision 0.1``), spread
over MetaQA's question types, must land within 10% of theirs.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace

import pytest
from scipy.stats import t

from kgx import datasets
from kgx.core.types import Prediction, Question
from kgx.datasets import dataset_config
from kgx.estimate.model import Strata, total_of
from kgx.estimate.pilot import main
from tests.helpers import swap_method

PILOT = 8
METAQA = ("dataset=metaqa_2hop", "kg=metaqa", "dataset.limit=100")
METAQA_200 = ("dataset=metaqa_2hop", "kg=metaqa", "dataset.limit=200")
QUIET = ("run.traces=off", "run.explain=0")  # the full run's figures without its artifacts


def estimate(capsys, *args: str) -> dict:
    assert main([*args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def within(figure: dict, measured: float) -> None:
    """The prediction is within 10% of the measured figure and its interval holds it."""
    assert abs(figure["value"] - measured) <= 0.10 * measured, (figure, measured)
    assert figure["low"] <= measured <= figure["high"], (figure, measured)


@pytest.fixture
def pilot_rounds(monkeypatch) -> list[list[str]]:
    """The question ids of every pilot round, in order, as the estimate hands them to a run."""
    from kgx.run import execute as run

    rounds, real = [], run.execute

    def spy(spec, launch_dir, *args, **kwargs):
        rounds.append(list(spec.dataset.ids))
        return real(spec, launch_dir, *args, **kwargs)

    monkeypatch.setattr(run, "execute", spy)
    return rounds


def needs_metaqa() -> None:
    if not os.environ.get("KGX_DATA_DIR"):
        if os.environ.get("CI"):
            pytest.fail("KGX_DATA_DIR is unset: MetaQA is shared data")
        pytest.skip("KGX_DATA_DIR is unset: MetaQA is shared data")


@pytest.mark.parametrize("dataset", [(), METAQA], ids=["demo", "metaqa_2hop"])
def test_the_pilot_predicts_the_full_run_within_ten_percent(capsys, run, dataset):
    if dataset:
        needs_metaqa()
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


@pytest.mark.slow
@pytest.mark.parametrize("method", [("method=tog",), ("method=lmp", "method.depth=2")], ids=["tog", "lmp"])
def test_a_growing_pilot_predicts_kg_methods_within_ten_percent(capsys, run, pilot_rounds, method):
    needs_metaqa()
    est = estimate(capsys, *method, "llm=scripted", *METAQA_200, "--precision", "0.1")
    (job,) = est["jobs"]
    assert (est["pilot"], est["precision"], est["max_pilot"]) == (5, 0.1, 100)
    assert (job["questions"], job["errors"], job["stratified_by"], job["reached"]) == (200, 0, "qtype", True)
    # It grew from 5 in rounds that each ran only new questions, and stopped short of the whole job.
    assert len(pilot_rounds) >= 3 and len(pilot_rounds[0]) == 5, [len(r) for r in pilot_rounds]
    drawn = [qid for ids in pilot_rounds for qid in ids]
    assert len(drawn) == len(set(drawn)) == job["pilot"] and 20 < job["pilot"] <= 100
    assert "stratified by qtype (20 kinds); pilot" in job["note"] and "±10% reached (calls ±" in job["note"]
    qtype = {q.id: q.meta["qtype"] for q in datasets.load(replace(dataset_config("metaqa_2hop"), limit=200))}
    assert {qtype[qid] for qid in drawn} == set(qtype.values())  # every question type is in the pilot
    full = run(*method, *METAQA_200, *QUIET).records
    assert len(full) == 200
    within(job["calls"], sum(r.calls for r in full))
    within(job["tokens"], sum(r.usage.input_tokens + r.usage.output_tokens for r in full))
    assert job["tokens"]["value"] == pytest.approx(job["input_tokens"]["value"] + job["output_tokens"]["value"])


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


def test_jobs_that_differ_only_in_execution_settings_each_run_their_pilot(capsys, in_tmp):
    # Same identity, same pilot questions: the second pilot must not pass for the first's finished run.
    jobs = estimate(capsys, "method=io", "llm=scripted", "dataset.limit=6", "run.concurrency=1,2", "--pilot", "3")[
        "jobs"
    ]
    found = [(j["job"], j["pilot"], j["calls"]["value"]) for j in jobs]
    assert found == [("concurrency=1", 3, 6.0), ("concurrency=2", 3, 6.0)]


@pytest.mark.parametrize(
    "override, named",
    [
        ("run.concurency=2", "run.concurency"),
        ("dataset=nope", "dataset/nope"),
        ("run.concurrency=0", "run.concurrency=0"),
    ],
)
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


def test_the_pilot_takes_one_question_of_every_kind_then_keeps_to_their_shares():
    questions = [Question(id=f"q{i}", text="", meta={"qtype": kind}) for i, kind in enumerate("aaaaaabbbc")]
    strata = Strata.of(questions)
    assert (strata.key, strata.sizes) == ("qtype", {"a": 6, "b": 3, "c": 1})
    order = strata.order(seed=0)
    # One of each kind, the largest first; then always the kind furthest below its share (6:3:1).
    assert "".join(strata.kind[qid] for qid in order) == "abcaabaaba"
    assert sorted(order) == sorted(q.id for q in questions) and order == strata.order(seed=0)
    assert {tuple(Strata.of(questions).order(seed)) for seed in range(5)} != {tuple(order)}  # seeded
    assert Strata.of(questions, "none").sizes == {"": 10}
    assert Strata.of([Question(id="x", text="", meta={"qtype": "a"})]).key == ""  # one kind: nothing to spread


def test_the_stratified_estimate_sums_each_kinds_total():
    # Kinds a (6 questions) and b (4): pilot values 1, 3, 5 of a and 10, 14 of b.
    figure = total_of([1, 3, 5, 10, 14], ["a", "a", "a", "b", "b"], {"a": 6, "b": 4})
    assert figure.value == 6 * 3 + 4 * 12
    # Variance 6²/3·(1-3/6)·4 + 4²/2·(1-2/4)·8 = 24 + 32, degrees of freedom after Welch-Satterthwaite.
    half = t.ppf(0.975, 56**2 / (24**2 / 2 + 32**2 / 1)) * math.sqrt(56)
    assert (figure.low, figure.high) == pytest.approx((66 - half, 66 + half))
    # One question per kind: their spread is unknown, the plain variance (7, 2 degrees of freedom) stands in.
    figure = total_of([1, 2, 6], ["a", "b", "c"], {"a": 4, "b": 4, "c": 2})
    half = t.ppf(0.975, 2) * math.sqrt(7 * (16 * 0.75 + 16 * 0.75 + 4 * 0.5))
    assert (figure.value, figure.high) == pytest.approx((4 * 1 + 4 * 2 + 2 * 6, 24 + half))
    # A kind the pilot has not reached yet counts as the ones it has; one kind is the textbook estimate.
    assert total_of([2, 4], ["a", "a"], {"a": 6, "b": 4}).value == 30
    plain = total_of([1, 2, 3, 4], [""] * 4, {"": 10})
    assert plain.high - plain.value == pytest.approx(t.ppf(0.975, 3) * math.sqrt(5 / 3 / 4 * 0.6) * 10)


def test_a_pilot_short_of_its_precision_stops_at_max_pilot_and_says_so(capsys, in_tmp, pilot_rounds):
    demo = ["method=cot", "llm=scripted", "--pilot", "4", "--precision", "0.001", "--max-pilot", "10"]
    assert main(demo) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[:4] == ["cot-demo-scripted", "16", "10", "0"]
    assert lines[-2].endswith("; pilot 10 questions per job")
    assert lines[-1].startswith(
        "cot-demo-scripted: stratified by hops (2 kinds); pilot stopped at --max-pilot 10 "
        "short of ±0.1% (calls ±0.0%, tokens ±"
    )
    # 4, then twice as many, then the cap: each round only its new questions, in one seeded order.
    assert [len(ids) for ids in pilot_rounds] == [4, 4, 2]
    order = Strata.of(datasets.load(dataset_config("demo"))).order(0)
    assert [qid for ids in pilot_rounds for qid in ids] == order[:10]
    (job,) = estimate(capsys, *demo)["jobs"]
    assert (job["pilot"], job["reached"], job["stratified_by"]) == (10, False, "hops")


@pytest.mark.parametrize(
    "option, named",
    [
        (("--precision", "0"), "--precision=0.0"),
        (("--precision", "1.5"), "--precision=1.5"),
        (("--pilot", "5", "--max-pilot", "3"), "--max-pilot=3"),
        (("--strata", "nope"), "--strata nope: 16 questions have no meta 'nope'"),
    ],
)
def test_a_bad_option_is_an_error_naming_it(in_tmp, option, named):
    with pytest.raises(SystemExit) as exc:
        main(["method=cot", "llm=scripted", *option])
    assert str(exc.value).startswith("kgx: error: ") and named in str(exc.value)
