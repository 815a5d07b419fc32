"""CGPE on the bundled demo KG and on a three-node chain, with the shared LLM double answering by
matching rules and with the scripted backbone: clues, initial nodes, the four matching steps,
termination and merging, the ablation switches, fallbacks, caps, the per-stage backbones and the
configs that run it."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from omegaconf import OmegaConf

from kgx.core.config import ConfigError, LLMConfig
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.trace import LLMEvent, Trace
from kgx.core.types import Question
from kgx.kg import EmbeddedKG, build_store, open_kg
from kgx.kg.metered import MeteredKG
from kgx.llm.client import LLMClient
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.methods import Context, get
from kgx.methods.cgpe import CGPEConfig
from kgx.methods.cgpe import clue_paths as paths
from kgx.methods.cgpe.prompts import ASKED
from kgx.methods.cgpe.question_phrases import clue_pattern, names_first, phrases, written
from kgx.methods.kit import Hop
from kgx.run.spec import to_run_spec
from tests.doubles import Call, FakeLLM

REPO = Path(__file__).resolve().parents[2]
CAPITAL = Question(id="q1", text="What is the capital of Australia?", answers=[["Canberra"]])
NS = "http://rdf.freebase.com/ns/"


def triple(s: str, p: str, o: str) -> str:
    obj = o if o.startswith('"') else f"<{NS}{o}>"
    return f"<{NS}{s}> <{NS}{p}> {obj} .\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """Alpha -x.chain.next-> Beta -x.chain.next-> Gamma: Beta is the middle of the chain."""
    src = tmp_path_factory.mktemp("src") / "chain.nt"
    src.write_text(
        triple("m.a", "type.object.name", '"Alpha"@en')
        + triple("m.b", "type.object.name", '"Beta"@en')
        + triple("m.c", "type.object.name", '"Gamma"@en')
        + triple("m.a", "x.chain.next", "m.b")
        + triple("m.b", "x.chain.next", "m.c")
    )
    return EmbeddedKG(build_store([src], "nt", tmp_path_factory.mktemp("kg") / "chain"))


def matcher(
    clues: list[str] | list[list[str]],
    keep: Callable[[str], bool] = lambda o: True,
    score: Callable[[str], int] = lambda o: 5,
    match: Optional[Callable[[str, list[str]], Optional[str]]] = None,
    answers: tuple[str, ...] = ("Canberra",),
    check_schema: bool = True,
) -> FakeLLM:
    """The LLM double answering by rules: the clues (a list of replies: one per try, the last
    repeated), then each matching step decided by a rule over the option text, then the answers."""
    match = match or (lambda option, unused: unused[0])
    tries = clues if clues and isinstance(clues[0], list) else [clues]

    def reply(call: Call) -> dict[str, Any]:
        if call.stage == "clue_extraction":
            return {"clues": tries[min(call.attempt, len(tries) - 1)]}
        if call.stage == "answer":
            return {"answers": list(answers)}
        props = call.schema["properties"]
        if "keep" in props:
            return {"keep": [o for o in props["keep"]["items"]["enum"] if keep(o)]}
        if "scores" in props:
            options = props["scores"]["items"]["properties"]["candidate"]["enum"]
            return {"scores": [{"candidate": o, "score": score(o)} for o in options]}
        item = props["matches"]["items"]["properties"]
        unused = item["clue"]["enum"]
        return {"matches": [{"candidate": o, "clue": c} for o in item["candidate"]["enum"] if (c := match(o, unused))]}

    return FakeLLM(default=reply, check_schema=check_schema)


def stages(llm: FakeLLM) -> Counter[str]:
    return Counter(llm.stages())


def context(llm, kg, **params) -> Context:
    trace = Trace()
    return Context(llm=llm, params=CGPEConfig(**params), rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))


def capital_matcher(**kw) -> FakeLLM:
    return matcher(
        ["capital", "Australia"],
        keep=lambda o: "country.capital" in o,
        score=lambda o: 9 if "Canberra" in o else 0,
        **kw,
    )


# --------------------------------------------------------------------------- the algorithm


def test_every_call_uses_the_method_temperature_and_retry_budget(demo):
    llm = capital_matcher()
    get("cgpe")(CAPITAL, context(llm, demo, temperature=0.3, max_retries=1))
    assert len(llm.calls) == 5 and {(c.temperature, c.retries) for c in llm.calls} == {(0.3, 1)}


def test_question_phrases_are_the_clue_candidates():
    spans = phrases("which person directed the movies starred by John Krasinski", 8)
    assert list(spans)[:3] == ["person directed", "movies starred", "John Krasinski"]
    assert {"person", "movies", "Krasinski"} <= set(spans) and "the movies" not in spans
    assert "The Lord of the Rings" in phrases("Who directed The Lord of the Rings?", 8)
    assert list(phrases("what movies did Ginger Rogers act in", 8))[:3] == ["movies", "Ginger Rogers", "act"]
    assert list(phrases("which nationality is frederica_of_mecklenburg-strelitz 's couple ?", 8)) == [
        "nationality",
        "frederica_of_mecklenburg-strelitz",
        "couple",
    ]


@pytest.mark.parametrize(
    "question, title",
    [
        ("who directed After Dark, My Sweet", "After Dark, My Sweet"),
        ("which actors starred in Good Will Hunting", "Good Will Hunting"),
        ("what films did the director of Caro diario direct", "Caro diario"),
        ("Who wrote the movie Cooking with Stella?", "Cooking with Stella"),
    ],
)
def test_titles_with_small_words_and_commas_are_hinted_whole_and_fit_the_clue_form(question, title):
    hint = phrases(question, 8)
    assert title in hint and title in names_first(list(hint))[:2]  # "Caro diario direct" may lead
    assert re.search(clue_pattern(question, 8), title) and not re.search(clue_pattern(question, 8), "China")
    assert title in written([title.split()[-1], title], question)


def test_written_clues_keep_the_question_order_and_drop_only_what_a_longer_clue_holds():
    songs = "Which songs are fight songs of the Pittsburgh Steelers?"
    assert written(["Pittsburgh Steelers", "fight songs", "songs", "Steelers"], songs) == [
        "songs",
        "fight songs",
        "Pittsburgh Steelers",
    ]
    assert written(
        ["film maker", "Hunting", "Good Will Hunting", "good will hunting", "film"], "who made Good Will Hunting"
    ) == [
        "Good Will Hunting",
        "film maker",
    ]


def test_a_clue_the_phrase_rules_do_not_offer_is_still_a_clue(demo):
    """The phrase list is a hint, not a cage: the model's own phrase of question words is kept."""
    llm = matcher(["the capital of Australia"], answers=("Canberra",))
    ctx = context(llm, demo)
    get("cgpe")(CAPITAL, ctx)
    [call] = [c for c in llm.calls if c.stage == "clue_extraction"]
    items = call.schema["properties"]["clues"]["items"]
    assert "the capital of Australia" not in items["examples"] and items["type"] == "string"
    assert ctx.trace.notes("clue_extraction")[-1].data == {"clues": ["the capital of Australia"]}


def test_a_part_of_a_name_is_widened_to_the_question_phrase_naming_a_node_when_no_clue_names_one(demo):
    steelers = Question(id="q4", text="Which songs are fight songs of the Pittsburgh Steelers?", answers=[["Renegade"]])
    ctx = context(matcher(["fight songs", "Steelers"], answers=("Renegade",)), demo)
    get("cgpe")(steelers, ctx)
    notes = {n.message: n.data for n in ctx.trace.notes("path_exploration")}
    assert notes["no clue names a KG node: clues widened to the question's phrases"] == {
        "widened": {"Steelers": "Pittsburgh Steelers"}
    }
    assert [r["clue"] for r in notes["1 initial nodes"]["roots"]] == ["Pittsburgh Steelers"]


def test_full_pipeline_follows_fuzzy_rough_and_exact_matching_to_the_answer(demo):
    llm = capital_matcher()
    ctx = context(llm, demo)
    p = get("cgpe")(CAPITAL, ctx)
    assert p.answers == ["Canberra"] and p.answer == "{Canberra}"
    assert p.status == "ok" and p.reason == "clue_coverage"
    assert p.stats["ended_clue_coverage"] == 1.0 and p.stats["ended_dead_end"] == 0.0
    assert p.evidence == ["(Australia, location.country.capital, Canberra)"]
    assert stages(llm) == {"clue_extraction": 1, "path_exploration": 3, "answer": 1}
    fuzzy, rough, exact = [c.schema for c in llm.calls if c.stage == "path_exploration"]
    assert "(location.country.capital, City/Town/Village)" in fuzzy["properties"]["keep"]["items"]["enum"]
    candidates = rough["properties"]["scores"]["items"]["properties"]["candidate"]["enum"]
    assert candidates == ["(City/Town/Village, Canberra)"]
    assert exact["properties"]["matches"]["items"]["properties"]["clue"]["enum"] == ["capital"]
    answer_prompt = llm.calls[-1].prompt
    assert "(Australia, location.country.capital, Canberra)" in answer_prompt
    assert answer_prompt.endswith("Question: What is the capital of Australia?")
    notes = [n.message for n in ctx.trace.notes("path_exploration")]
    assert notes[0] == "1 initial nodes" and notes[-1] == "ended: clue_coverage"
    graph = ctx.trace.explanation
    assert {(n["label"], n["role"]) for n in graph["nodes"]} == {("Australia", "topic"), ("Canberra", "answer")}
    assert graph["edges"] == [{"source": "m.0_kk", "target": "m.04k0", "label": "location.country.capital"}]


def test_character_matching_takes_the_next_node_without_the_llm(demo):
    llm = matcher(["Canberra", "Australia"])
    ctx = context(llm, demo)
    p = get("cgpe")(Question(id="q", text="Is Canberra in Australia?"), ctx)
    assert stages(llm) == {"clue_extraction": 1, "answer": 1}
    assert [n.data["matched"] for n in ctx.trace.notes() if n.message == "character matching"] == [
        [{"node": "m.0_kk", "clue": "Australia"}]
    ]
    assert p.reason == "clue_coverage" and p.evidence == [
        "(Canberra, location.location.containedby, Australia)",
        "(Australia, location.country.capital, Canberra)",
        "(Australia, location.location.contains, Canberra)",
    ]
    assert [(e["source"], e["label"]) for e in ctx.trace.explanation["edges"]] == [
        ("m.04k0", "location.location.containedby"),
        ("m.0_kk", "location.country.capital; location.location.contains"),
    ]


def test_without_character_matching_the_llm_matches_a_named_neighbour(demo):
    llm = matcher(["Canberra", "Australia"], keep=lambda o: "capital" in o, score=lambda o: 3)
    p = get("cgpe")(Question(id="q", text="Is Canberra in Australia?"), context(llm, demo, character_matching=False))
    assert stages(llm) == {"clue_extraction": 1, "path_exploration": 3, "answer": 1}
    assert p.evidence == ["(Australia, location.country.capital, Canberra)"]


def test_without_llm_pruning_an_unnamed_next_node_is_a_dead_end(demo):
    llm = capital_matcher()
    ctx = context(llm, demo, llm_pruning=False)
    p = get("cgpe")(CAPITAL, ctx)
    assert stages(llm) == {"clue_extraction": 1, "answer": 1}
    assert (p.reason, p.status, p.evidence) == ("dead_end", "fallback", [])
    assert "dead end: no candidate is named like an unused clue" in [n.message for n in ctx.trace.notes()]


def test_rough_matching_drops_zero_scores_and_top_k_keeps_the_best(demo):
    scores = {"Canberra": 9, "Queensland": 4, "Victoria": 7}
    llm = matcher(
        ["city", "Australia"],
        keep=lambda o: "contains" in o and "reverse" not in o,
        score=lambda o: next((s for name, s in scores.items() if name in o), 0),
    )
    ctx = context(llm, demo, rough_top_k=2)
    p = get("cgpe")(Question(id="q", text="Which city is in Australia?"), ctx)
    rough = next(n for n in ctx.trace.notes() if n.message.startswith("rough matching"))
    assert rough.data["scores"] == {"(City/Town/Village, Canberra)": 9, "(Australian State, Victoria)": 7}
    assert rough.message == "rough matching kept 2 of 9 (label, entity) pairs"
    assert p.evidence == [
        "(Australia, location.location.contains, Canberra)",
        "(Australia, location.location.contains, Victoria)",
    ]


def test_exact_matching_forks_and_every_complete_fork_is_evidence(demo):
    llm = matcher(
        ["official languages", "Canada"], keep=lambda o: "official_language" in o, answers=("English", "French")
    )
    q = Question(id="q", text="What are the official languages of Canada?", answers=[["English"], ["French"]])
    p = get("cgpe")(q, context(llm, demo))
    assert len(p.evidence) == 2 and all("location.country.official_language" in t for t in p.evidence)
    assert p.reason == "clue_coverage" and stages(llm)["path_exploration"] == 3


def test_replies_outside_the_options_are_discarded_and_counted(demo):
    llm = capital_matcher(
        match=lambda option, unused: "population" if "Canberra" in option else None, check_schema=False
    )  # past the schema, to the method's own check
    p = get("cgpe")(CAPITAL, context(llm, demo))
    assert [reason for _, reason, _ in llm.discards] == [
        "exact matching: unknown or repeated candidate, or unknown clue"
    ]
    assert p.reason == "dead_end" and p.status == "fallback" and p.evidence == []


def test_a_path_from_the_middle_of_a_chain_is_merged_with_its_other_half(chain):
    llm = matcher(["first", "Beta", "last"], match=lambda o, unused: "first" if "Alpha" in o else "last")
    ctx = context(llm, chain)
    p = get("cgpe")(Question(id="q", text="What comes first and last around Beta?"), ctx)
    assert p.reason == "merged" and p.status == "ok"
    assert p.evidence == ["(Alpha, x.chain.next, Beta)", "(Beta, x.chain.next, Gamma)"]
    assert ctx.trace.notes()[-1].data["chosen"] == [["m.a", "m.b", "m.c"]]


def test_without_termination_paths_run_on_and_do_not_merge(chain):
    llm = matcher(["first", "Beta", "last"], match=lambda o, unused: "first" if "Alpha" in o else "last")
    p = get("cgpe")(
        Question(id="q", text="What comes first and last around Beta?"), context(llm, chain, termination=False)
    )
    assert p.reason == "dead_end" and stages(llm)["path_exploration"] == 3
    assert p.evidence == ["(Beta, x.chain.next, Gamma)", "(Alpha, x.chain.next, Beta)"]


def test_merge_joins_opposite_halves_only():
    clues = ["a", "b", "c"]
    left = paths.Path(("m.b", "m.a"), ("b", "a"), ((Hop("r", "in"),),))
    right = paths.Path(("m.b", "m.c"), ("b", "c"), ((Hop("r", "out"),),))
    merged = paths.merge(right, left, clues)
    assert merged == paths.Path(("m.a", "m.b", "m.c"), ("a", "b", "c"), ((Hop("r", "out"),), (Hop("r", "out"),)))
    assert paths.merge(right, right, clues) is None
    assert paths.merge(right, paths.Path(("m.b", "m.d"), ("b", "c"), ((Hop("r", "out"),),)), clues) is None
    assert len(paths.merges([right], [left, right], clues)) == 1


@pytest.mark.parametrize("max_steps, calls, reason", [(1, 3, "dead_end"), (3, 9, "clue_coverage")])
def test_without_termination_each_path_takes_at_most_max_steps(demo, max_steps, calls, reason):
    """Two forks (Canberra, Australian Capital Territory) at step 1; with room, both take step 2."""
    llm = matcher(
        ["capital", "city", "Australia"],
        keep=lambda o: "contains" in o,
        score=lambda o: 1,
        match=lambda o, unused: unused[0] if "Capital" in o or "Canberra" in o else None,
    )
    p = get("cgpe")(
        Question(id="q", text="capital city Australia"), context(llm, demo, termination=False, max_steps=max_steps)
    )
    assert stages(llm)["path_exploration"] == calls and p.reason == reason


def test_clues_naming_no_node_are_answered_without_a_path_as_fallback(demo):
    llm = matcher(["Atlantis"], answers=("Poseidonis",))
    p = get("cgpe")(Question(id="q", text="What is the capital of Atlantis?"), context(llm, demo))
    assert (p.status, p.reason, p.answers, p.evidence) == ("fallback", "no_initial_node", ["Poseidonis"], [])
    assert stages(llm) == {"clue_extraction": 1, "answer": 1}
    assert "No path in the knowledge graph" in llm.calls[-1].prompt


def test_a_question_without_content_words_is_answered_without_clues(demo):
    llm = matcher([], answers=("?",))
    p = get("cgpe")(Question(id="q", text="What is it?"), context(llm, demo))
    assert (p.status, p.reason) == ("fallback", "no_clues") and stages(llm) == {"answer": 1}


def test_neighbour_caps_reach_the_kg_and_are_recorded(demo):
    llm = capital_matcher()
    ctx = context(llm, demo, max_neighbors=1, max_relations=3)
    get("cgpe")(CAPITAL, ctx)
    assert ctx.kg.usage.capped >= 2
    capped = [e for e in ctx.trace.events if getattr(e, "capped_from", 0)]
    assert {e.operation for e in capped} == {"relations", "neighbors"}


def test_types_label_entities_by_notable_type_and_skip_untyped(demo, chain):
    assert demo.types(["m.0_kk", "m.04k0", '"AU"']) == {"m.0_kk": "Country", "m.04k0": "City/Town/Village"}
    assert demo.types(["m.08l3"]) == {"m.08l3": "Dated Integer"}  # a CVT: type.object.type, no notable type
    assert chain.types(["m.a"]) == {}


# --------------------------------------------------------------------------- one clue, repeated clues


def ended(trace: Trace) -> tuple[str, int]:
    """How exploration ended and after how many rounds of steps (the last exploration note)."""
    note = trace.notes("path_exploration")[-1]
    return note.message, note.data["steps"]


def test_an_initial_node_alone_covers_no_clue():
    root = paths.Path(("m.a",), ("Alpha",))
    assert root.unused(["Alpha"]) == [] and not root.covers(["Alpha"])
    assert root.extend("m.b", ASKED, (Hop("x.chain.next", "out"),)).covers(["Alpha"])
    assert not root.extend("m.b", "Beta", (Hop("x.chain.next", "out"),)).covers(["Alpha", "Gamma"])


def test_a_clue_given_twice_is_asked_again_and_a_distinct_reply_used(demo):
    llm = matcher(
        [["Australia", "Australia"], ["capital", "Australia"]],
        keep=lambda o: "country.capital" in o,
        score=lambda o: 9 if "Canberra" in o else 0,
    )
    ctx = context(llm, demo)
    p = get("cgpe")(CAPITAL, ctx)
    assert [c.attempt for c in llm.calls if c.stage == "clue_extraction"] == [0, 1]
    assert [(n.message, n.data) for n in ctx.trace.notes("clue_extraction")] == [
        ("2 clues", {"clues": ["capital", "Australia"]})
    ]
    assert p.evidence == ["(Australia, location.country.capital, Canberra)"] and p.reason == "clue_coverage"


def test_one_clue_after_the_retries_still_takes_a_step_towards_the_answer(demo):
    """The topic entity as every clue: used once, its initial node takes one step, matching the
    neighbours against the answer to the question, before clue coverage can end exploration."""
    llm = matcher(
        [["Australia", "Australia"]], keep=lambda o: "country.capital" in o, score=lambda o: 9 if "Canberra" in o else 0
    )
    ctx = context(llm, demo, max_retries=2)
    p = get("cgpe")(CAPITAL, ctx)
    assert [c.attempt for c in llm.calls if c.stage == "clue_extraction"] == [0, 1, 2]
    assert [(n.message, n.data.get("clues")) for n in ctx.trace.notes("clue_extraction")] == [
        ("clues repeated after the retries: each used once", ["Australia", "Australia"]),
        ("1 clues", ["Australia"]),
    ]
    assert stages(llm) == {"clue_extraction": 3, "path_exploration": 3, "answer": 1}
    fuzzy, rough, exact = [c for c in llm.calls if c.stage == "path_exploration"]
    assert f"Clues the path has not used yet: {ASKED}\n" in fuzzy.prompt
    assert exact.schema["properties"]["matches"]["items"]["properties"]["clue"]["enum"] == [ASKED]
    assert ended(ctx.trace) == ("ended: clue_coverage", 1)
    assert (p.reason, p.status) == ("clue_coverage", "ok")
    assert p.evidence == ["(Australia, location.country.capital, Canberra)"]
    assert p.stats["ended_clue_coverage"] == 1.0 and sum(p.stats.values()) == 1.0
    assert ctx.trace.explanation["side"][-1] == f"Australia [Australia] -> Canberra [{ASKED}]"


def test_one_clue_whose_step_finds_nothing_is_a_dead_end_not_coverage(demo):
    llm = matcher(["Australia"])
    ctx = context(llm, demo, llm_pruning=False)
    p = get("cgpe")(CAPITAL, ctx)
    assert stages(llm) == {"clue_extraction": 1, "answer": 1}
    assert ended(ctx.trace) == ("ended: dead_end", 1)
    assert (p.reason, p.status, p.evidence) == ("dead_end", "fallback", [])
    assert p.stats["ended_dead_end"] == 1.0 and p.stats["ended_clue_coverage"] == 0.0
    assert "dead end: no candidate is named like an unused clue" in [n.message for n in ctx.trace.notes()]


def test_without_termination_a_one_clue_initial_node_steps_too(chain):
    llm = matcher(["Beta"], match=lambda o, unused: unused[0] if "Gamma" in o else None)
    ctx = context(llm, chain, termination=False)
    p = get("cgpe")(Question(id="q", text="What comes after Beta?"), ctx)
    assert stages(llm)["path_exploration"] == 3 and ended(ctx.trace) == ("ended: clue_coverage", 1)
    assert p.evidence == ["(Beta, x.chain.next, Gamma)"]


def test_the_client_asks_again_warmer_when_clues_repeat(demo):
    """Through the real client: every try repeats the clue, each at a higher temperature; the
    parse failures are counted, and the distinct clue is used."""
    cfg = LLMConfig(
        name="scripted",
        model="kgx-scripted/overlap",
        structured_output=True,
        input_cost_per_token=0.0,
        output_cost_per_token=0.0,
        backoff_s=0.0,
    )
    twice = LLMConfig(
        **{**cfg.__dict__, "name": "twice", "extra": {"mock_response": '{"clues": ["Australia", "Australia"]}'}}
    )
    meter, trace = Meter(), Trace()
    llm = QuestionLLM(LLMClient(cfg, {"clue_extraction": twice}, None, sleep=lambda s: None), meter, trace)
    p = get("cgpe")(
        CAPITAL,
        Context(
            llm=llm, params=CGPEConfig(max_retries=2), rng=random.Random(0), trace=trace, kg=MeteredKG(demo, trace)
        ),
    )
    clue_calls = [e for e in trace.events if isinstance(e, LLMEvent) and e.stage == "clue_extraction"]
    assert [(e.attempt, e.temperature) for e in clue_calls] == [(0, 0.0), (1, 0.2), (2, 0.4)]
    assert all("clues given more than once: Australia" in e.error for e in clue_calls)
    assert (meter.stages["clue_extraction"].calls, meter.stages["clue_extraction"].parse_failures) == (3, 3)
    assert [n.data["clues"] for n in trace.notes("clue_extraction")] == [["Australia", "Australia"], ["Australia"]]
    assert (meter.stages["path_exploration"].calls, meter.stages["path_exploration"].parse_failures) == (3, 0)
    assert ended(trace) == ("ended: clue_coverage", 1) and p.reason == "clue_coverage" and len(p.evidence) == 2


# --------------------------------------------------------------------------- backbones and configs


def test_scripted_backbone_makes_one_clue_call_matching_calls_in_threes_and_one_answer(demo):
    cfg = LLMConfig(
        name="scripted",
        model="kgx-scripted/overlap",
        structured_output=True,
        input_cost_per_token=0.0,
        output_cost_per_token=0.0,
    )
    meter, trace = Meter(), Trace()
    llm = QuestionLLM(LLMClient(cfg, {}, None, sleep=lambda s: None), meter, trace)
    p = get("cgpe")(
        CAPITAL, Context(llm=llm, params=CGPEConfig(), rng=random.Random(0), trace=trace, kg=MeteredKG(demo, trace))
    )
    calls = {stage: usage.calls for stage, usage in meter.stages.items()}
    assert calls["clue_extraction"] == 1 and calls["answer"] == 1 and calls["path_exploration"] % 3 == 0
    assert [n.data["clues"] for n in trace.notes("clue_extraction")] == [["capital", "Australia"]]
    assert p.reason in ("clue_coverage", "merged", "dead_end") and p.status in ("ok", "fallback")


def test_config_ranges_name_the_field():
    with pytest.raises(ConfigError, match="method.max_paths"):
        CGPEConfig(max_paths=0)
    with pytest.raises(ConfigError, match="method.rough_top_k"):
        CGPEConfig(rough_top_k=0)
    with pytest.raises(ConfigError, match="method.temperature"):
        CGPEConfig(temperature=3.0)
    with pytest.raises(ConfigError, match="method.max_retries"):
        CGPEConfig(max_retries=-1)


def test_experiments_and_stage_backbones_compose(compose_cfg):
    spec = to_run_spec(
        compose_cfg(
            "+experiment=cgpe_metaqa",
            "llm=scripted",
            "+llm.stages.clue_extraction=local",
            "+llm.stages.answer=scripted",
        )
    )
    assert (spec.method.name, spec.dataset.name, spec.kg.name) == ("cgpe", "metaqa_2hop", "metaqa")
    assert {s: c.name for s, c in spec.stages.items()} == {"clue_extraction": "local", "answer": "scripted"}
    spec = to_run_spec(compose_cfg("+experiment=cgpe_pathquestion"))
    assert (spec.dataset.name, spec.kg.name) == ("pq_2h", "pathquestion")
    spec = to_run_spec(compose_cfg("+experiment=cgpe_llm_pruning"))
    assert (spec.method.llm_pruning, spec.method.character_matching, spec.method.termination) == (True, False, False)
    assert to_run_spec(compose_cfg("+experiment=cgpe_answer_only")).method.name == "io"


def test_sweeps_mirror_the_papers_tables():
    backbones = OmegaConf.load(REPO / "sweeps" / "cgpe_backbones.yaml").hydra.sweeper.params
    assert dict(backbones) == {
        f"+llm.stages.{s}": "scripted,local" for s in ("clue_extraction", "path_exploration", "answer")
    }
    ablation = OmegaConf.load(REPO / "sweeps" / "cgpe_ablation.yaml").hydra.sweeper.params
    assert ablation["+experiment"] == "cgpe_answer_only,cgpe_llm_pruning,cgpe_character_matching,cgpe_full"
