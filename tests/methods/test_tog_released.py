"""ToG as its released code runs it (``method.fallback=cot``, ``method.score_per=relation``), and as
CGPE ran it (``method.max_calls``, ``method.topics=clues``): the calls each makes, its bound against
the papers' published call counts, and kgx's own ToG (CGPE's TOG*) staying as it was."""

from __future__ import annotations

import pytest

from kgx.core.config import ConfigError
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.types import Question
from kgx.kg import open_kg
from kgx.methods import cot, tog
from kgx.methods.tog import ToGConfig, ToGRConfig
from tests.methods.test_tog import AUSTRALIA, DEMO, TOKYO, cautious, fake, listed, run

RELEASED = {"fallback": "cot", "score_per": "relation"}
CGPE = {**RELEASED, "temperature_explore": 0.0, "max_calls": 30, "topics": "clues"}


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("kg"))


def test_entities_are_scored_once_per_kept_relation_as_released(kg):
    per_entity, per_relation = fake(cautious), fake(cautious)
    run(kg, AUSTRALIA, ToGConfig(depth=1), per_entity)
    run(kg, AUSTRALIA, ToGConfig(depth=1, score_per="relation"), per_relation)
    assert per_entity.stages() == ["relation_prune", "entity_score", "reasoning", "answer"]
    assert per_relation.stages() == ["relation_prune", *["entity_score"] * 3, "reasoning", "answer"]
    [together] = per_entity.prompts("entity_score")
    alone = per_relation.prompts("entity_score")
    assert together.count("Through ") == 3 and [p.count("Through ") for p in alone] == [1, 1, 1]
    assert sorted(e for p in alone for e in listed(p)) == sorted(listed(together))


def test_a_relation_reaching_one_entity_needs_no_call(kg):
    def one_relation(stage, prompt):
        if stage == "relation_prune":
            return {"relations": [{"relation": "location.country.capital", "score": 1.0}]}
        return cautious(stage, prompt)

    llm = fake(one_relation)
    p, _, _ = run(kg, AUSTRALIA, ToGConfig(depth=1, score_per="relation"), llm)
    assert llm.stages() == ["relation_prune", "reasoning", "answer"]
    assert p.evidence == ["(Australia, location.country.capital, Canberra)"]


def test_at_max_depth_the_released_variant_answers_by_the_released_cot_prompt(kg):
    llm = fake(cautious)
    p, _, _ = run(kg, TOKYO, ToGConfig(depth=1, **RELEASED), llm)
    assert llm.stages()[-1] == "answer" and llm.calls[-1].messages == cot.messages(TOKYO, 6, "tog")
    assert llm.calls[-1].prompt == f"Question: {TOKYO.text}" and len(llm.calls[-1].messages) == 14
    assert p.evidence == [] and p.status == "fallback"
    assert p.reason == "max depth: answered by CoT without the paths (method.fallback=cot)"


@pytest.mark.parametrize(
    "fallback, stages, reason",
    [
        ("cot", ["answer"], "no topic entity: answered by CoT without the paths (method.fallback=cot)"),
        ("paths", ["answer"], "ended at depth 1: no paths found"),
    ],
)
def test_a_question_without_topic_entities_is_answered_by_cot_as_released(kg, fallback, stages, reason):
    llm = fake(cautious)
    p, _, _ = run(kg, Question("q", "Who wrote Hamlet?", {}, [["Shakespeare"]]), ToGConfig(fallback=fallback), llm)
    assert llm.stages() == stages and p.reason == reason
    assert llm.prompts("answer")[0].startswith("Question:" if fallback == "cot" else "Triples:")


def test_the_call_cap_stops_the_search_and_answers_from_its_paths(kg):
    llm = fake(cautious)
    p, trace, _ = run(kg, DEMO["demo-002"], ToGConfig(score_per="relation", max_calls=5), llm)
    assert len(llm.calls) == 6 and llm.stages()[-1] == "answer"
    assert llm.prompts("answer")[0].startswith("Triples:") and p.evidence
    assert p.reason == "call cap: answered from the paths"
    assert [n.message for n in trace.notes("reasoning")][-1] == (
        "5 LLM calls made, method.max_calls=5: the search stops and answers from its paths"
    )


def clue_script(stage: str, prompt: str):
    if stage == "clue_extraction":
        return {"clues": ["Tokyo", "country", "currency"]}
    return cautious(stage, prompt)


def test_cgpe_s_clue_extraction_finds_the_topic_entities(kg):
    llm = fake(clue_script)
    gold_free = Question(TOKYO.id, TOKYO.text, {}, TOKYO.answers)
    p, trace, _ = run(kg, gold_free, ToGConfig(depth=1, **CGPE), llm)
    assert llm.stages()[:2] == ["clue_extraction", "relation_prune"]
    assert "Topic entity: Tokyo" in llm.prompts("relation_prune")[0]
    assert {c.temperature for c in llm.calls} == {0.0}
    assert trace.explanation["nodes"][0]["label"] == "Tokyo"


def test_clues_that_name_no_node_leave_no_topic_entity(kg):
    llm = fake(lambda stage, prompt: {"clues": ["used"]} if stage == "clue_extraction" else cautious(stage, prompt))
    p, _, _ = run(kg, Question(TOKYO.id, TOKYO.text, {}, TOKYO.answers), ToGConfig(**CGPE), llm)
    assert llm.stages() == ["clue_extraction", "answer"] and p.reason.startswith("no topic entity")


@pytest.mark.parametrize(
    "params, bound",
    [
        (ToGConfig(), 22),  # 2ND + D + 1, the paper's
        (ToGConfig(**RELEASED), 40),  # D(N + N^2 + 1) + 1: one entity_score call per kept relation
        (ToGConfig(**RELEASED, topics="clues"), 41),
        (ToGConfig(**CGPE), 31),  # 30 calls, then the answer
        (ToGConfig(max_calls=50), 22),
        (ToGRConfig(**RELEASED), 13),
        (ToGConfig(**RELEASED, prune="bm25"), 4),
    ],
)
def test_the_call_bound_of_each_variant(params, bound):
    assert tog.call_bound(params) == bound


@pytest.mark.parametrize(
    "params, most",
    [(ToGConfig(**RELEASED), 16), (ToGConfig(**RELEASED, max_calls=8), 9), (ToGRConfig(**RELEASED), 12)],
)
def test_the_released_variant_stays_within_its_bound(kg, params, most):
    calls = []
    for question in DEMO.values():
        llm = fake(cautious)
        run(kg, question, params, llm)
        assert len(llm.calls) <= tog.call_bound(params), question.id
        calls.append(len(llm.calls))
    assert max(calls) == most


def test_kgx_s_own_tog_is_unchanged_by_default():
    params = ToGConfig()
    assert (params.fallback, params.score_per, params.topics, params.max_calls) == ("paths", "entity", "gold", None)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"score_per": "path"}, "method.score_per"),
        ({"topics": "ner"}, "method.topics"),
        ({"max_calls": 0}, "method.max_calls"),
    ],
)
def test_bad_values_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        ToGConfig(**kwargs)
