"""``python -m kgx.estimate``: a pilot's prediction against the full run it predicts.

On the scripted backbone CoT makes one call per question and its tokens vary with the question,
so a seeded pilot of 8 questions must land within 10% of the full run's calls and tokens, with
the measured figures inside the printed interval. KG methods (LMP, ToG) vary far more between
questions: a pilot that grows until its interval is within ±10% (``--precision 0.1``), spread
over MetaQA's question types, must land within 10% of theirs; and the default pilot of the estimate
guide's example (LMP, ToG and KnowPath on 30 MetaQA 2-hop questions) must hold every measured figure in
its interval. The interval's rules (``kgx.estimate.interval``) are pinned on small hand-made
pilots: no zero width from equal values, a kind the pilot missed widens it, a kind's spread from
few questions is never below the plain one, and the warnings say when the pilot is too small.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import replace

import pytest
from scipy.stats import t

from kgx import datasets
from kgx.core.types import Prediction, Question
from kgx.datasets import dataset_config
from kgx.estimate.interval import OWN, Figure, Prior, total_of
from kgx.estimate.model import call_bound, warnings
from kgx.estimate.pilot import main
from kgx.estimate.strata import MIN_PILOT, Strata
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
    assert (est["pilot"], est["precision"], est["max_pilot"]) == (None, 0.1, 100)
    assert (job["questions"], job["errors"], job["stratified_by"], job["reached"]) == (200, 0, "qtype", True)
    # It grew from the default pilot (two of each of 20 kinds) in rounds that each ran only new questions,
    # and stopped short of the whole job.
    assert len(pilot_rounds) >= 2 and len(pilot_rounds[0]) == 40, [len(r) for r in pilot_rounds]
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
    rows = [line.split()[0] for line in lines if line.startswith(("method=", "total")) and ":" not in line.split()[0]]
    assert rows == ["method=io", "method=cot", "total"]
    total = lines[[i for i, line in enumerate(lines) if line.startswith("total")][0]].split()
    assert total[1:4] == ["16", "8", "0"]  # questions, pilot questions, errors of both jobs
    assert total[4] == "16"  # io and cot: one call per question, 8 questions each
    assert any(line.startswith("[low-high]: 95% t-interval") for line in lines)
    # Four equal pilot values do not make the other four questions' calls certain: tokens' spread stands in.
    assert "method=io: calls 1 on every pilot question: spread from the tokens' relative spread" in lines

    assert main(["method=io,cot", "llm=scripted", "dataset.limit=8", "--pilot", "4", "--format", "csv"]) == 0
    csv_rows = capsys.readouterr().out.splitlines()
    assert [r.split(",")[0] for r in csv_rows] == ["job", "method=io", "method=cot", "total"]
    value, low, high = map(float, csv_rows[-1].split(",")[4:7])
    assert low < value == 16.0 < high


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
    # 30 requests a minute: 8 calls take 16 s, whatever the latency (within the calls' interval).
    (limited,) = estimate(capsys, *slow, "llm.rpm=30")["jobs"]
    assert limited["wall_s"]["value"] == 16.0
    assert [limited["wall_s"][side] for side in ("low", "high")] == [2 * limited["calls"][s] for s in ("low", "high")]
    # Every call is cached now: the seconds per call the first pilot measured still give the wall time.
    assert main([*slow]) == 0
    out = capsys.readouterr().out
    assert "wall from an earlier pilot's seconds per call" in out
    assert "0.8s" in out.splitlines()[2] or "0.9s" in out.splitlines()[2]


def test_the_pilot_takes_one_question_of_every_kind_then_a_second_then_keeps_to_their_shares():
    questions = [Question(id=f"q{i}", text="", meta={"qtype": kind}) for i, kind in enumerate("aaaaaabbbc")]
    strata = Strata.of(questions)
    assert (strata.key, strata.sizes) == ("qtype", {"a": 6, "b": 3, "c": 1})
    order = strata.order(seed=0)
    # One of each kind, then a second of each that has one (the largest first, both times); then
    # always the kind furthest below its share (6:3:1).
    assert "".join(strata.kind[qid] for qid in order) == "abcabaaaba"
    assert sorted(order) == sorted(q.id for q in questions) and order == strata.order(seed=0)
    assert {tuple(Strata.of(questions).order(seed)) for seed in range(5)} != {tuple(order)}  # seeded
    assert Strata.of(questions, "none").sizes == {"": 10}
    assert Strata.of([Question(id="x", text="", meta={"qtype": "a"})]).key == ""  # one kind: nothing to spread


def kinds_of(sizes: list[int]) -> Strata:
    """A job of ``sizes[h]`` questions of kind h."""
    return Strata("qtype", {f"k{h}-{i}": f"k{h}" for h, size in enumerate(sizes) for i in range(size)})


def test_the_default_pilot_covers_every_kind_twice_where_affordable_and_never_passes_the_job():
    assert MIN_PILOT == 25  # Cochran's n >= 25 G1^2 at skewness 1
    # The estimate guide's example, MetaQA 2-hop's first 30: 16 kinds; two of each would be 25 of 30 questions, more
    # than half the job, so one of each (16), raised to the least pilot.
    metaqa_30 = kinds_of([4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1])
    assert metaqa_30.default_pilot() == 25
    # Its first 100: 19 kinds of 2 to 9 questions; two of each is 38, within half the job.
    metaqa_100 = kinds_of([9, 9, 8, 8, 8, 7, 6, 6, 5, 5, 5, 4, 4, 3, 3, 3, 3, 2, 2])
    assert metaqa_100.default_pilot() == 38
    order = metaqa_100.order(seed=3)[:38]
    assert set(Counter(metaqa_100.kind[qid] for qid in order).values()) == {2}
    assert kinds_of([2] * 40).default_pilot() == 40  # two of each is the whole job: one of each
    assert kinds_of([50] * 20).default_pilot() == 40  # a large job: two of each of 20 kinds
    assert kinds_of([3, 3, 4]).default_pilot() == 10  # never more than the job
    assert Strata.of([Question(id=f"q{i}", text="") for i in range(300)]).default_pilot() == 25  # no kinds


def test_the_stratified_estimate_sums_each_kinds_total():
    # Kinds a (10 questions) and b (10): pilot values 10, 10.5, 11 of a and 1, 30 of b.
    samples = [10, 10.5, 11, 1, 30]
    figure = total_of(samples, ["a", "a", "a", "b", "b"], {"a": 10, "b": 10})
    assert figure.value == pytest.approx(10 * 10.5 + 10 * 15.5)
    # a's own spread (0.25, 3 questions) is below the pilot's plain one (112.75), so it takes that;
    # b's (420.5) is above it and stands: 10²/3·(1-3/10)·112.75 + 10²/2·(1-2/10)·420.5, Welch-Satterthwaite.
    plain, own = 112.75, 420.5
    parts = [(100 / 3 * 0.7 * plain, 4), (100 / 2 * 0.8 * own, 1)]
    variance = sum(v for v, _ in parts)
    half = t.ppf(0.975, variance**2 / sum(v**2 / d for v, d in parts)) * math.sqrt(variance)
    assert (figure.low, figure.high) == pytest.approx((max(0, figure.value - half), figure.value + half))
    # From OWN questions on, a kind's own spread stands, even below the plain one.
    many = [10, 10.5, 11, 10, 10.5][:OWN] + [1, 30]
    figure = total_of(many, ["a"] * OWN + ["b", "b"], {"a": 10, "b": 10})
    parts = [(100 / OWN * (1 - OWN / 10) * 0.175, OWN - 1), (100 / 2 * 0.8 * own, 1)]
    variance = sum(v for v, _ in parts)
    half = t.ppf(0.975, variance**2 / sum(v**2 / d for v, d in parts)) * math.sqrt(variance)
    assert figure.high - figure.value == pytest.approx(half)
    # One question per kind: their spread is unknown, the plain variance (7, 2 degrees of freedom) stands in.
    figure = total_of([1, 2, 6], ["a", "b", "c"], {"a": 4, "b": 4, "c": 2})
    half = t.ppf(0.975, 2) * math.sqrt(7 * (16 * 0.75 + 16 * 0.75 + 4 * 0.5))
    assert (figure.value, figure.high) == pytest.approx((4 * 1 + 4 * 2 + 2 * 6, 24 + half))
    # One kind is the textbook estimate; a pilot of the whole job is exact.
    plain_srs = total_of([1, 2, 3, 4], [""] * 4, {"": 10})
    assert plain_srs.high - plain_srs.value == pytest.approx(t.ppf(0.975, 3) * math.sqrt(5 / 3 / 4 * 0.6) * 10)
    assert total_of([1, 2, 3, 4], ["a", "a", "b", "b"], {"a": 2, "b": 2}) == Figure(10, 10, 10)


def test_a_kind_the_pilot_did_not_reach_widens_the_interval():
    # Five questions of kind a (20 in the job), none of b (10): b's mean is guessed from a's.
    samples = [2, 4, 3, 5, 1]
    figure = total_of(samples, ["a"] * 5, {"a": 20, "b": 10})
    assert figure.value == 30 * 3
    # a's part scaled by 30/20 like the total, plus b's 10² times the plain spread (2.5).
    parts = [(1.5**2 * 20**2 / 5 * (1 - 5 / 20) * 2.5, 4), (10**2 * 2.5, 4)]
    variance = sum(v for v, _ in parts)
    half = t.ppf(0.975, variance**2 / sum(v**2 / d for v, d in parts)) * math.sqrt(variance)
    assert figure.high - figure.value == pytest.approx(half)
    # Wider than if b were known to be like a, which is what the estimate printed before.
    assert half > 1.5 * t.ppf(0.975, 4) * math.sqrt(20**2 / 5 * 0.75 * 2.5)


def test_equal_pilot_values_never_make_a_zero_width_interval():
    # Five questions of 30 all made 4 calls: that is no evidence that the other 25 did.
    fours, kinds, sizes = [4.0] * 5, ["a"] * 5, {"a": 30}
    factor = 30**2 / 5 * (1 - 5 / 30)
    # With the method's bound of 22 calls a question: Popoviciu's variance bound 22²/4.
    figure = total_of(fours, kinds, sizes, Prior(bound=22))
    assert (figure.value, figure.high - figure.value) == pytest.approx((120, t.ppf(0.975, 4) * math.sqrt(factor * 121)))
    # Without one, the tokens' relative spread (0.5): a standard deviation of 2 calls.
    figure = total_of(fours, kinds, sizes, Prior(relative=0.5))
    assert figure.high - figure.value == pytest.approx(t.ppf(0.975, 4) * math.sqrt(factor * 4))
    # With neither, the spread is unknown: the interval is open.
    assert total_of(fours, kinds, sizes) == Figure(120, 0, math.inf)
    # Zero at a price of zero stays zero; a pilot of the whole job is exact.
    assert total_of([0.0] * 5, kinds, sizes, Prior(relative=0.5)) == Figure(0, 0, 0)
    assert total_of(fours, kinds, {"a": 5}) == Figure(20, 20, 20)
    # Equal values within a kind are not its spread either: that kind takes the plain one.
    figure = total_of([4, 4, 4, 4, 4, 10], ["a"] * 5 + ["b"], {"a": 10, "b": 2})
    assert figure.high - figure.value == pytest.approx(
        t.ppf(0.975, 5) * math.sqrt((100 / 5 * 0.5 + 4 * 0.5) * 6.0), rel=1e-6
    )


def test_the_calls_prior_is_the_methods_call_bound_where_it_defines_one(compose_cfg):
    from kgx.run.spec import to_run_spec

    def bound(*overrides: str) -> float | None:
        return call_bound(to_run_spec(compose_cfg(*overrides)))

    assert bound("method=tog") == 22  # 2ND + D + 1 at width 3, depth 3
    assert bound("method=tog_r", "method.width=2", "method.depth=4") == 13  # ToG-R: ND + D + 1
    assert bound("method=cot") is None  # no bound: the tokens' relative spread stands in


def test_the_warnings_say_when_the_pilot_is_too_small_for_its_interval():
    strata = kinds_of([10, 10, 10])
    ids = list(strata.kind)
    light = [1.0, 2.0, 1.0, 2.0]
    values = {"calls": light, "tokens": light}
    # Two kinds of three, evenly spread values: only the missed kind.
    (missed,) = warnings(strata, [strata.kind[q] for q in ids[:2] + ids[10:12]], values)
    assert missed == (
        "the pilot reached 2 of 3 kinds of qtype: the other 10 questions are guessed from those "
        "(intervals widened); --pilot 25 covers every kind"
    )
    # Every kind, but tokens far more skewed than 11 questions allow (Cochran: n >= 25 G1^2).
    kinds = [strata.kind[q] for q in ids[:4] + ids[10:14] + ids[20:23]]
    skewed = {"calls": [1.0, 2.0] * 5 + [1.0], "tokens": [100.0] * 10 + [5000.0]}
    (cochran,) = warnings(strata, kinds, skewed)
    assert cochran.startswith("tokens skewed (G1 2.8): Cochran's rule n >= 25 G1^2 asks 203 pilot questions")
    assert cochran.endswith("the pilot has 11: the 95% interval is approximate")
    assert warnings(strata, ["k0"], {"calls": [1.0], "tokens": [1.0]})[0].startswith("one pilot question")
    assert warnings(kinds_of([2, 2]), ["k0", "k0", "k1", "k1"], skewed | {"tokens": [1.0, 1.0, 1.0, 90.0]}) == []


def test_a_small_pilot_warns_under_the_table(capsys, in_tmp):
    # Demo: 16 questions of 2 kinds (hops); one pilot question reaches one kind and says nothing of a spread.
    (job,) = estimate(capsys, "method=cot", "llm=scripted", "--pilot", "1")["jobs"]
    assert job["calls"] == {"value": 16.0, "low": 0.0, "high": math.inf}
    assert [w.split(":")[0] for w in job["warnings"]] == [
        "one pilot question says nothing about the spread",
        "the pilot reached 1 of 2 kinds of hops",
    ]
    assert main(["method=cot", "llm=scripted", "--pilot", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("cot-demo-scripted: warning: the pilot reached 1 of 2 kinds of hops")
    # The default pilot covers every kind: 16 < 25 questions, so the whole job, exact, without a warning.
    (job,) = estimate(capsys, "method=cot", "llm=scripted")["jobs"]
    assert (job["pilot"], job["warnings"], job["calls"]) == (16, [], {"value": 16.0, "low": 16.0, "high": 16.0})


def test_the_default_pilot_takes_two_of_every_kind_and_says_so(capsys, pilot_rounds):
    needs_metaqa()
    est = estimate(capsys, "method=cot", "llm=scripted", *METAQA)
    (job,) = est["jobs"]
    assert (est["pilot"], job["pilot"], job["stratified_by"]) == (None, 38, "qtype")
    qtype = {q.id: q.meta["qtype"] for q in datasets.load(replace(dataset_config("metaqa_2hop"), limit=100))}
    ((*ids,),) = pilot_rounds
    assert set(Counter(qtype[qid] for qid in ids).values()) == {2} and len(set(qtype.values())) == 19
    assert main(["method=cot", "llm=scripted", *METAQA]) == 0
    footer = capsys.readouterr().out.splitlines()[5]
    assert footer.endswith(
        "pilot 38 questions per job (by default one of every kind, two of each where that is at most half the job, "
        "at least 25, at most the job; --pilot N to choose)"
    )


@pytest.mark.slow
def test_the_guides_example_holds_every_measured_figure_in_its_interval(capsys, run, pilot_rounds):
    """``python -m kgx.estimate method=lmp,tog,knowpath dataset=metaqa_2hop kg=metaqa dataset.limit=30
    llm=scripted``: a pilot of 5 predicts ToG 80 calls [63-97] against 148 and KnowPath 120 [120-120]
    against 183 without intervals that widen for the kinds it missed; the default pilot holds all twelve
    measured figures."""
    needs_metaqa()
    metaqa_30 = ("dataset=metaqa_2hop", "kg=metaqa", "dataset.limit=30")
    est = estimate(capsys, "method=lmp,tog,knowpath", *metaqa_30, "llm=scripted")
    assert [len(ids) for ids in pilot_rounds] == [25, 25, 25]
    for job in est["jobs"]:
        full = run(job["job"], *metaqa_30, *QUIET).records
        measured = {
            "calls": sum(r.calls for r in full),
            "input_tokens": sum(r.usage.input_tokens for r in full),
            "output_tokens": sum(r.usage.output_tokens for r in full),
        }
        measured["tokens"] = measured["input_tokens"] + measured["output_tokens"]
        for name, actual in measured.items():
            assert job[name]["low"] <= actual <= job[name]["high"], (job["job"], name, job[name], actual)
        assert job["calls"]["high"] > job["calls"]["low"]  # never [x-x] short of the whole job


def test_a_pilot_short_of_its_precision_stops_at_max_pilot_and_says_so(capsys, in_tmp, pilot_rounds):
    demo = ["method=cot", "llm=scripted", "--pilot", "4", "--precision", "0.001", "--max-pilot", "10"]
    assert main(demo) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[:4] == ["cot-demo-scripted", "16", "10", "0"]
    assert lines[-2].endswith("; pilot 10 questions per job")
    # CoT's calls are 1 on every pilot question: not evidence of no spread, so they take the tokens' relative one.
    assert lines[-1] == (
        "cot-demo-scripted: stratified by hops (2 kinds); pilot stopped at --max-pilot 10 "
        "short of ±0.1% (calls ±1.0%, tokens ±1.0%); calls 1 on every pilot question: spread from the tokens' "
        "relative spread"
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
