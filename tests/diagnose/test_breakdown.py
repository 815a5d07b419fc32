"""The failure breakdown (kgx.diagnose.breakdown): categories from a record's facts, the answer call's
prompt, where exploration left the gold path, and the shares a run logs."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from kgx.core.reachability import NO_GOLD_NODE, Reach, Step
from kgx.core.trace import KGEvent, LLMEvent, Trace
from kgx.core.types import Prediction
from kgx.core.usage import Usage
from kgx.diagnose import breakdown
from kgx.diagnose.breakdown import answer_prompt, category, left_at
from kgx.results.figures import shares
from kgx.results.record import Record
from tests.helpers import mlflow_run, swap_method, trace_of

REACHABLE, UNREACHABLE, UNKNOWN = Reach(True, 2, 1), Reach(False, 2), Reach(None, 2, reason="frontier cap")
ABSENT = Reach(None, 2, reason=NO_GOLD_NODE)  # no gold in the KG the question sees: the data's gap


@pytest.mark.parametrize(
    "status, scores, reach, shown, expected",
    [
        ("error", {}, REACHABLE, None, "error"),
        ("fallback", {"hits1": 1.0}, REACHABLE, True, "fallback"),
        ("ok", {"hits1": 1.0}, UNREACHABLE, False, "correct"),  # right from the model's own knowledge
        ("ok", {"hits1": 0.0}, UNREACHABLE, True, "unreachable"),
        ("ok", {"hits1": 0.0, "answer_recall": 0.0}, REACHABLE, False, "not_retrieved"),
        ("ok", {"hits1": 0.0, "answer_recall": 0.0}, UNKNOWN, False, "not_retrieved"),  # not shown unreachable
        ("ok", {"hits1": 0.0, "answer_recall": 0.0}, ABSENT, False, "unreachable"),
        ("ok", {"hits1": 0.0, "answer_recall": 1.0}, REACHABLE, False, "lost"),
        ("ok", {"hits1": 0.0, "answer_recall": 1.0}, REACHABLE, True, "not_answered"),
        ("ok", {"hits1": 0.0}, None, False, "not_answered"),  # io, cot, sc: no KG
        ("ok", {"hits1": 1.0}, None, False, "correct"),
        ("ok", {"hits1": 0.0}, None, None, ""),  # a record written before the breakdown existed
    ],
)
def test_a_question_lands_in_the_first_category_that_holds(status, scores, reach, shown, expected):
    assert category(status, scores, reach, shown) == expected


def _call(content: str, error: str = "") -> LLMEvent:
    return LLMEvent(
        stage="answer",
        model="m",
        messages=[{"role": "system", "content": "Q: Canberra?"}, {"role": "user", "content": content}],
        response="",
        temperature=0.0,
        error=error,
    )


def test_the_answer_prompt_is_the_last_good_call_without_its_question_and_inline_exemplars():
    trace = Trace()
    trace.add(_call("Question: first\nfacts: Sydney"))
    trace.add(_call("Q: exemplar\nA: {Canberra}\n\nQuestion: the capital of Australia?\nfacts: Melbourne"))
    trace.add(_call("Question: a retry that failed\nCanberra", error="invalid JSON"))
    assert answer_prompt(trace) == "facts: Melbourne"
    assert not breakdown.shown(trace, [["Canberra"]])  # only in the exemplar and in the failed call
    assert not breakdown.shown(trace, [["Australia"]])  # the question itself is not evidence
    assert breakdown.shown(trace, [["Melbourne"]])
    tog_style = Trace()  # the triples come before the question line (ToG's reasoning prompt)
    tog_style.add(
        _call(
            "Triples:\n1. (Before the Rain, film.film.starring, Gregoire Colin)\n"
            "Question: what does Gregoire Colin appear in"
        )
    )
    assert breakdown.shown(tog_style, [["Before the Rain"]])
    assert answer_prompt(Trace()) == ""


def _neighbors(entity: str, relation: str, direction: str, capped_from: int = 0) -> KGEvent:
    return KGEvent(
        "neighbors", {"entity": entity, "relation": relation, "direction": direction}, 3, 0.0, capped_from=capped_from
    )


PATHS = [
    [Step("m.a", "r.one", "out", "m.b"), Step("m.b", "r.two", "in", "m.gold")],
    [Step("m.a", "r.three", "out", "m.c"), Step("m.c", "r.four", "out", "m.gold")],
]
NAMES = {"m.a": "Topic", "m.b": "Middle", "m.c": "Other", "m.gold": "Gold"}


def test_left_at_names_the_first_step_not_taken_on_the_path_followed_furthest():
    trace = Trace()
    trace.add(_neighbors("m.a", "r.three", "out"))
    trace.add(_neighbors("m.a", "r.one", "in"))  # the right relation in the wrong direction is not the step
    found = left_at(Reach(True, 2, 2, paths=PATHS, names=NAMES), trace)
    assert (found["depth"], found["relation"], found["direction"], found["entity"]) == (2, "r.four", "out", "Other")
    assert found["path"] == "Topic -r.three-> Other -r.four-> Gold"
    assert "depth 2" in found["why"] and "'Other'" in found["why"]


def test_left_at_a_path_followed_to_its_end_says_whether_a_cap_cut_the_answer():
    trace = Trace()
    trace.add(_neighbors("m.a", "r.one", "out"))
    trace.add(_neighbors("m.b", "r.two", "in", capped_from=250))
    found = left_at(Reach(True, 2, 2, paths=PATHS, names=NAMES), trace)
    assert found["depth"] == 2 and "250 neighbours were cut" in found["why"]
    assert left_at(Reach(True, 2, 2), trace) is None  # no path known: nothing to say


def _record(status: str, scores: dict, reach, shown) -> Record:
    return Record("q", "?", [["x"]], Prediction(answer=""), scores, status, Usage(), reach=reach, shown=shown)


def test_shares_add_up_and_a_method_without_a_kg_has_no_kg_categories():
    kg_run = [
        _record("ok", {"hits1": 1.0}, REACHABLE, True),
        _record("ok", {"hits1": 0.0}, UNREACHABLE, False),
        _record("error", {}, None, None),
        _record("ok", {"hits1": 0.0, "answer_recall": 1.0}, REACHABLE, False),
    ]
    got = shares(kg_run)
    assert got == {
        "failure.correct": 25.0,
        "failure.not_answered": 0.0,
        "failure.lost": 25.0,
        "failure.not_retrieved": 0.0,
        "failure.unreachable": 25.0,
        "failure.fallback": 0.0,
        "failure.error": 25.0,
    }
    io_run = [_record("ok", {"hits1": 1.0}, None, False), _record("ok", {"hits1": 0.0}, None, False)]
    assert shares(io_run) == {
        "failure.correct": 50.0,
        "failure.not_answered": 50.0,
        "failure.fallback": 0.0,
        "failure.error": 0.0,
    }


def test_a_record_keeps_its_facts_through_the_log_and_older_lines_read_as_unclassified():
    record = _record("ok", {"hits1": 0.0, "answer_recall": 1.0}, Reach(True, 2, 1, queries=4, paths=PATHS), False)
    line = json.loads(json.dumps(record.to_dict()))
    assert line["breakdown"] == "lost" and line["reach"]["queries"] == 4 and "paths" not in line["reach"]
    back = Record.from_dict(line)
    assert (back.breakdown, back.reach.reachable, back.reach.distance, back.shown) == ("lost", True, 1, False)
    old = {k: v for k, v in line.items() if k not in ("reach", "shown", "breakdown", "left_at")}
    assert Record.from_dict(old).breakdown == ""


DEMO_GOLD = {
    "demo-001": "Canberra",
    "demo-002": "English",
    "demo-003": "William Shakespeare",
    "demo-005": "Japanese yen",
    "demo-006": "1828",
    "demo-007": "Laozi",
}


def staged(question, ctx):
    """A KG method whose every question ends in a chosen category: one real answer call each."""
    gold = DEMO_GOLD[question.id]
    plan = {
        "demo-001": (gold, [gold], gold),  # answer, evidence, what the answer call sees
        "demo-002": ("Spanish", [gold], gold),
        "demo-003": ("Ben Jonson", [gold], "a summary without it"),
        "demo-005": ("Euro", ["Japan -> capital -> Tokyo"], "Tokyo"),
    }
    if question.id == "demo-006":
        return Prediction(answer="{1900}", answers=["1900"], status="fallback")
    if question.id == "demo-007":
        raise KeyError("a bug in the method")
    answer, evidence, seen = plan[question.id]
    ctx.llm("answer", [{"role": "user", "content": f"Question: {question.text}\nKnowledge: {seen}"}])
    return Prediction(answer="{" + answer + "}", answers=[answer], evidence=evidence)


def test_a_run_logs_reachability_and_the_breakdown_per_question_and_in_mlflow(run, monkeypatch, in_tmp):
    swap_method(monkeypatch, "tog", staged)
    outcome = run(
        "method=tog",
        "method.depth=1",
        "dataset.ids=[demo-001,demo-002,demo-003,demo-005,demo-006,demo-007]",
        "run.max_consecutive_errors=0",
    )
    by_id = {r.id: r for r in outcome.records}
    assert {qid: r.breakdown for qid, r in by_id.items()} == {
        "demo-001": "correct",
        "demo-002": "not_answered",
        "demo-003": "lost",
        "demo-005": "not_retrieved",
        "demo-006": "fallback",
        "demo-007": "error",
    }
    assert all(r.reach.reachable for r in outcome.records)  # every one a hop from its topic
    assert by_id["demo-005"].left_at["depth"] == 1 and by_id["demo-005"].left_at["entity"] == "Japan"
    metrics = mlflow_run(in_tmp, outcome.run_id).data.metrics
    assert metrics["reachable"] == 100.0 and metrics["reach.unknown"] == 0.0
    assert 0 < metrics["reach.kg_queries_per_q"] <= 6
    assert {k: round(v, 2) for k, v in metrics.items() if k.startswith("failure.")} == {
        "failure.correct": 16.67,
        "failure.not_answered": 16.67,
        "failure.lost": 16.67,
        "failure.not_retrieved": 16.67,
        "failure.unreachable": 0.0,
        "failure.fallback": 16.67,
        "failure.error": 16.67,
    }
    trace = trace_of(outcome.out_dir, by_id["demo-005"])
    notes = {e["stage"]: e for e in trace["events"] if e["kind"] == "note"}
    assert notes["reach"]["message"].startswith("a gold answer is 1 hop(s)") and notes["reach"]["data"]["paths"]
    assert notes["failure"]["message"].startswith("left the gold path at depth 1")
    import polars as pl

    table = pl.read_parquet(outcome.out_dir / "predictions.parquet")
    assert dict(zip(table["id"], table["breakdown"]))["demo-003"] == "lost"
    assert dict(zip(table["id"], table["left_at"]))["demo-005"] == 1

    again = run("method=tog", "method.depth=1", "dataset.ids=[demo-001]", "run.force=true")
    assert again.records[0].reach.cached and again.records[0].reach.queries == 0


def test_a_method_without_a_kg_computes_no_reachability(run, in_tmp):
    outcome = run("method=io", "dataset.limit=3")
    assert all(r.reach is None and r.shown is not None for r in outcome.records)
    metrics = mlflow_run(in_tmp, outcome.run_id).data.metrics
    assert "reachable" not in metrics and "failure.not_retrieved" not in metrics
    assert metrics["failure.correct"] + metrics["failure.not_answered"] + metrics["failure.error"] + metrics[
        "failure.fallback"
    ] == pytest.approx(100.0)


def test_describe_reads_as_a_sentence():
    assert breakdown.describe(Reach(False, 1)) == "no gold answer within depth 1 of the topic entities"
    assert "unknown" in breakdown.describe(SimpleNamespace(reachable=None, depth=2, reason="frontier cap"))
