"""KnowPath on the demo KG: the three stages, call counts, directions, ablations, bad input, configs."""

from __future__ import annotations

import json
import random

import litellm
import pytest

from kgx.core.config import ConfigError, DatasetConfig, LLMConfig
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.metrics import answer_recall
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.datasets import load
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.llm import scripted
from kgx.llm.client import LLMClient
from kgx.llm.errors import OutputError
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.llm.scripted import reply
from kgx.methods import Context, get
from kgx.methods.answers import clean_answers
from kgx.methods.knowpath import KnowPathConfig
from kgx.methods.knowpath import prompts as prompts
from kgx.methods.knowpath.parse import parse_path
from kgx.run.spec import to_run_spec
from tests.doubles import FakeLLM
from tests.helpers import trace_of

CANBERRA = Question(
    id="demo-019",
    text="what is the majority party now in the country where Canberra is located?",
    topic_entities={"m.04k0": "Canberra"},
    answers=[["Australian Labor Party", "Labor"]],
)
LABOR_TENURE = (
    "(from: 2022-05-23; governmental_body: Australian House of Representatives; party: Australian Labor Party)"
)
IPG = {
    "topic_entities": ["Canberra"],
    "triples": ["(Australia, has capital, Canberra)"],
    "paths": ["Canberra (topic entity) -> capital of -> Australia -> majority party -> Australian Labor Party"],
    "answers": ["Australian Labor Party"],
}
NOT_YET = {"answerable": False, "reasoning": "Not yet.", "answers": ["Australia"]}
ROUND = [  # relation, entity and evaluation replies of the paper's F.1 case, round by round
    ({"Canberra": ["location.country.capital"]}, {"Canberra": ["Australia"]}, NOT_YET),
    ({"Canberra": ["government.governmental_jurisdiction.majority_party"]}, {"Canberra": [LABOR_TENURE]}, NOT_YET),
    (
        {"Canberra": ["government.majority_party_tenure.party"]},
        {"Canberra": ["Australian Labor Party"]},
        {"answerable": True, "reasoning": "The current tenure's party.", "answers": ["Australian Labor Party"]},
    ),
]


@pytest.fixture(scope="module")
def demo_kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("cache"))


def fake_ctx(demo_kg, rounds=ROUND, ipg_replies=(IPG,), check_schema=True, **params):
    trace = Trace()
    llm = FakeLLM(
        trace=trace,
        check_schema=check_schema,
        ipg=list(ipg_replies),
        relation=[r[0] for r in rounds],
        entity=[r[1] for r in rounds],
        evaluation=[r[2] for r in rounds],
    )
    return Context(
        llm=llm, params=KnowPathConfig(**params), rng=random.Random(0), trace=trace, kg=MeteredKG(demo_kg, trace)
    ), llm


def scripted_ctx(demo_kg, max_tokens=512, **params):
    trace, meter = Trace(), Meter()
    client = LLMClient(
        LLMConfig(
            name="scripted",
            model="kgx-scripted/overlap",
            structured_output=True,
            max_tokens=max_tokens,
            input_cost_per_token=0.0,
            output_cost_per_token=0.0,
        ),
        {},
        None,
    )
    return Context(
        llm=QuestionLLM(client, meter, trace),
        params=KnowPathConfig(**params),
        rng=random.Random(0),
        trace=trace,
        kg=MeteredKG(demo_kg, trace),
    ), meter


def notes(ctx, stage=None):
    return [(n.stage, n.message, n.data) for n in ctx.trace.notes(stage)]


def kg_calls(ctx, operation):
    return [e.arguments for e in ctx.trace.events if e.kind == "kg" and e.operation == operation]


# --------------------------------------------------------------------------- the three stages


def test_the_papers_case_is_answered_from_a_directed_subgraph_after_three_rounds(demo_kg):
    ctx, llm = fake_ctx(demo_kg)
    p = get("knowpath")(CANBERRA, ctx)
    assert p.status == "ok" and p.answers == ["Australian Labor Party"]
    assert p.answer == "The current tenure's party. So the answer is {Australian Labor Party}."
    assert p.reason == "answerable after round 3"
    assert llm.stages() == ["ipg"] + ["relation", "entity", "evaluation"] * 3
    assert len(llm.calls) == 1 + 3 * 3
    # Alg. 2: the path reads from the topic entity, each arrow in the edge's true direction.
    last_evaluation = llm.calls[9].prompt
    assert (
        f"Canberra <- location.country.capital <- Australia -> government.governmental_jurisdiction."
        f"majority_party -> {LABOR_TENURE} -> government.majority_party_tenure.party -> Australian Labor Party"
    ) in last_evaluation
    assert p.evidence == [
        "(Australia, location.country.capital, Canberra)",
        f"(Australia, government.governmental_jurisdiction.majority_party, {LABOR_TENURE})",
        f"({LABOR_TENURE}, government.majority_party_tenure.party, Australian Labor Party)",
    ]
    assert answer_recall(p.evidence, CANBERRA.answers)
    assert notes(ctx, "answer") == [("answer", "answerable after round 3", {"rounds": 3, "source": "subgraph"})]
    assert p.stats == {"rounds": 3.0, "answer_from_subgraph": 1.0, "answer_from_inference_path": 0.0}


def test_relations_are_queried_in_the_direction_they_run(demo_kg):
    ctx, _ = fake_ctx(demo_kg)
    get("knowpath")(CANBERRA, ctx)
    queried = kg_calls(ctx, "neighbors")
    assert queried == [
        {"entity": "m.04k0", "relation": "location.country.capital", "direction": "in"},
        {"entity": "m.0_kk", "relation": "government.governmental_jurisdiction.majority_party", "direction": "out"},
        {"entity": "m.0g59ks_", "relation": "government.majority_party_tenure.party", "direction": "out"},
    ]
    assert kg_calls(ctx, "relations")[:2] == [
        {"entity": "m.04k0", "direction": "out"},
        {"entity": "m.04k0", "direction": "in"},
    ]


def test_one_selection_call_per_round_offers_every_subgraph(demo_kg):
    two = Question(
        id="q",
        text="Which river flows in Australia and Canberra?",
        topic_entities={"m.0_kk": "Australia", "m.04k0": "Canberra"},
        answers=[["Molonglo River"]],
    )
    rounds = [
        (
            {"Australia": ["location.country.capital"], "Canberra": ["location.location.containedby"]},
            {"Australia": ["Canberra"], "Canberra": ["Australian Capital Territory"]},
            {"answerable": True, "reasoning": "r", "answers": ["Molonglo River"]},
        )
    ]
    ctx, llm = fake_ctx(demo_kg, rounds=rounds)
    p = get("knowpath")(two, ctx)
    assert llm.stages() == ["ipg", "relation", "entity", "evaluation"]
    schema = llm.calls[1].schema
    assert set(schema["properties"]) == {"Australia", "Canberra"}
    assert "location.country.capital" in schema["properties"]["Australia"]["items"]["enum"]
    assert schema["properties"]["Canberra"]["maxItems"] == 3
    assert 'Subgraph "Australia"' in llm.calls[1].prompt and 'Subgraph "Canberra"' in llm.calls[1].prompt
    assert set(llm.calls[2].schema["properties"]) == {"Australia", "Canberra"}
    assert "(Australia, location.country.capital, Canberra)" in p.evidence
    assert "(Canberra, location.location.containedby, Australian Capital Territory)" in p.evidence


def test_exploration_and_answering_have_their_own_temperatures(demo_kg):
    ctx, llm = fake_ctx(demo_kg, temperature_explore=0.6)
    get("knowpath")(CANBERRA, ctx)
    temps = {(call.stage, call.temperature) for call in llm.calls}
    assert temps == {("ipg", 0.0), ("relation", 0.6), ("entity", 0.6), ("evaluation", 0.0)}


def test_the_inference_path_guides_every_prompt(demo_kg):
    ctx, llm = fake_ctx(demo_kg)
    get("knowpath")(CANBERRA, ctx)
    path = "Canberra -> capital of -> Australia -> majority party -> Australian Labor Party"
    assert all(path in llm.calls[i].prompt for i in range(1, 10))
    assert "List" not in llm.calls[0].prompt and "write 15 knowledge triples" in llm.calls[0].prompt
    assert llm.calls[0].prompt.endswith(f"Question: {CANBERRA.text}")


def test_answerable_in_the_first_round_stops_at_four_calls(demo_kg):
    rounds = [(ROUND[0][0], ROUND[0][1], {"answerable": True, "reasoning": "r", "answers": ["Labor"]})]
    ctx, llm = fake_ctx(demo_kg, rounds=rounds)
    p = get("knowpath")(CANBERRA, ctx)
    assert (p.status, p.answers, len(llm.calls)) == ("ok", ["Labor"], 4)
    assert ctx.trace.explanation["nodes"] == [
        {"id": "m.04k0", "label": "Canberra", "depth": 0, "role": "topic"},
        {"id": "m.0_kk", "label": "Australia", "depth": 1, "role": ""},
    ]
    assert ctx.trace.explanation["edges"] == [
        {"source": "m.0_kk", "target": "m.04k0", "label": "location.country.capital"}
    ]


def test_not_answerable_after_the_last_round_falls_back_to_the_inference_path(demo_kg):
    rounds = [ROUND[0], ROUND[1], (ROUND[2][0], ROUND[2][1], NOT_YET)]
    ctx, llm = fake_ctx(demo_kg, rounds=rounds)
    p = get("knowpath")(CANBERRA, ctx)
    assert p.status == "fallback" and p.answers == ["Australian Labor Party"]
    assert p.reason == "not answerable from the subgraph after 3 round(s): answered from the inference path"
    assert p.stats["answer_from_inference_path"] == 1.0 and p.stats["rounds"] == 3.0
    assert p.answer.startswith("Canberra -> capital of -> Australia")
    assert len(llm.calls) == 10 and answer_recall(p.evidence, CANBERRA.answers)
    assert notes(ctx, "answer")[0][2] == {"rounds": 3, "source": "inference path"}


def test_depth_bounds_the_rounds(demo_kg):
    ctx, llm = fake_ctx(demo_kg, rounds=ROUND[:2] + [(ROUND[2][0], ROUND[2][1], NOT_YET)], depth=2)
    p = get("knowpath")(CANBERRA, ctx)
    assert len(llm.calls) == 1 + 3 * 2 and p.reason.startswith("not answerable from the subgraph after 2 round(s)")


def test_the_explanation_draws_the_directed_subgraph_with_the_inference_path_beside(demo_kg):
    ctx, _ = fake_ctx(demo_kg)
    get("knowpath")(CANBERRA, ctx)
    graph = ctx.trace.explanation
    assert [(n["label"], n["depth"], n["role"]) for n in graph["nodes"]] == [
        ("Canberra", 0, "topic"),
        ("Australia", 1, ""),
        (LABOR_TENURE, 2, ""),
        ("Australian Labor Party", 3, "answer"),
    ]
    assert [(e["source"], e["target"]) for e in graph["edges"]] == [
        ("m.0_kk", "m.04k0"),
        ("m.0_kk", "m.0g59ks_"),
        ("m.0g59ks_", "m.0t89bgt"),
    ]
    assert graph["side"][:2] == [
        "Inference path (the LLM's own knowledge):",
        "Canberra -> capital of -> Australia -> majority party -> Australian Labor Party",
    ]
    assert graph["title"] == CANBERRA.text and "Canberra <- location.country.capital <- Australia" in graph["text"]


# --------------------------------------------------------------------------- ablations


def test_without_ipg_no_inference_path_is_asked_for_or_shown_and_the_fallback_is_the_last_guess(demo_kg):
    rounds = [ROUND[0], ROUND[1], (ROUND[2][0], ROUND[2][1], NOT_YET)]
    ctx, llm = fake_ctx(demo_kg, rounds=rounds, ipg_replies=(), ipg=False)
    p = get("knowpath")(CANBERRA, ctx)
    assert llm.stages() == ["relation", "entity", "evaluation"] * 3
    assert not any("Inference path" in llm.calls[i].prompt or "inference path" in llm.calls[i].prompt for i in range(9))
    assert p.status == "fallback" and p.answers == ["Australia"]
    assert p.reason.endswith("no inference path answer: last evaluation's best guess")
    assert ctx.trace.explanation["side"][0] == "Inference path: none (ipg=false)."


def test_without_exploration_the_inference_path_answers_in_one_call(demo_kg):
    ctx, llm = fake_ctx(demo_kg, exploration=False)
    p = get("knowpath")(CANBERRA, ctx)
    assert llm.stages() == ["ipg"] and kg_calls(ctx, "relations") == []
    assert (p.status, p.answers, p.evidence) == ("ok", ["Australian Labor Party"], [])
    assert p.reason == "exploration=false: answered from the inference path"


def test_without_triples_the_ipg_prompt_and_schema_leave_them_out(demo_kg):
    ctx, llm = fake_ctx(
        demo_kg, ipg_replies=({k: v for k, v in IPG.items() if k != "triples"},), triples=0, exploration=False
    )
    get("knowpath")(CANBERRA, ctx)
    assert "triples" not in llm.calls[0].schema["properties"] and "knowledge triples" not in llm.calls[0].prompt
    ctx, llm = fake_ctx(demo_kg, triples=30, exploration=False)
    get("knowpath")(CANBERRA, ctx)
    assert llm.calls[0].schema["properties"]["triples"]["maxItems"] == 30 and "write 30" in llm.calls[0].prompt


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"ipg": False, "exploration": False}, "method.ipg=false with method.exploration=false"),
        ({"depth": 0}, "method.depth"),
        ({"width": 0}, "method.width"),
        ({"entity_width": 0}, "method.entity_width"),
        ({"triples": -1}, "method.triples"),
        ({"temperature_explore": 2.5}, "method.temperature_explore"),
        ({"temperature_answer": -1.0}, "method.temperature_answer"),
        ({"max_neighbors": 0}, "method.max_neighbors"),
        ({"max_relations": 0}, "method.max_relations"),
        ({"max_retries": -1}, "method.max_retries"),
    ],
)
def test_config_ranges_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        KnowPathConfig(**kwargs)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "text, path, why",
    [
        ("Canberra (topic entity) -> capital of -> Australia -> end", "Canberra -> capital of -> Australia", ""),
        (
            "Canberra → capital of → Australia → majority party → Australian Labor Party (final answer)",
            "Canberra -> capital of -> Australia -> majority party -> Australian Labor Party",
            "",
        ),
        ("Canberra <- capital <- Australia", "Canberra <- capital <- Australia", ""),
        (
            "- Reasoning path: Star Wars: A New Hope -> directed by -> George Lucas",
            "Star Wars: A New Hope -> directed by -> George Lucas",
            "",
        ),
        ("The answer is the Australian Labor Party.", None, "no arrows"),
        ("topic entity -> relation -> entity -> ... -> answer", None, "an empty or placeholder element"),
        ("Canberra -> capital of", None, "fewer elements than entity -> relation -> entity"),
        ("Canberra -> capital of -> Australia -> majority party", None, "it ends on a relation, not an entity"),
    ],
)
def test_inference_paths_parse_defensively(text, path, why):
    assert parse_path(text) == (path, why)


def test_answers_are_taken_out_of_the_sentence_the_paper_asks_for():
    replies = [
        "based on the knowledge, the answer to the question who is it is Australian Labor Party.",
        "The answer is: {Labor}",
        "labor",
        " ",
        "The Hague",
    ]
    assert clean_answers(replies, 5) == ["Australian Labor Party", "Labor", "The Hague"]


def test_an_unparsable_inference_path_is_noted_and_exploration_goes_on_without_it(demo_kg):
    ipg = {**IPG, "paths": ["I think it is Labor."], "answers": ["Labor"]}
    ctx, llm = fake_ctx(demo_kg, ipg_replies=(ipg,))
    p = get("knowpath")(CANBERRA, ctx)
    assert ("ipg", "inference path does not parse: no arrows", {"path": "I think it is Labor."}) in notes(ctx)
    assert ("ipg", "no inference path parsed: exploration proceeds without one", {}) in notes(ctx)
    assert "Inference path" not in llm.calls[1].prompt and p.status == "ok" and len(llm.calls) == 10


def test_an_ipg_reply_that_never_parses_is_searched_for_a_path_whose_end_is_the_answer(demo_kg):
    broken = OutputError(
        "ipg",
        "invalid output after 6 tries: no JSON",
        "Sure!\nPath: Canberra -> capital of -> Australia -> majority party -> Labor\nDone",
    )
    ctx, _ = fake_ctx(demo_kg, ipg_replies=(broken,), exploration=False)
    p = get("knowpath")(CANBERRA, ctx)
    assert p.answers == ["Labor"] and p.answer.startswith("Canberra -> capital of -> Australia")
    assert notes(ctx, "ipg")[0][1].startswith("reply unusable (stage 'ipg': invalid output after 6 tries")


def test_invented_relations_and_entities_are_discarded_counted_and_never_queried(demo_kg):
    rounds = [
        (
            {"Canberra": ["location.country.capital", "location.country.made_up"]},
            {"Canberra": ["Australia", "Atlantis", "Australia"]},  # a repeat is kept once, not discarded
            {"answerable": True, "reasoning": "r", "answers": ["Labor"]},
        )
    ]
    ctx, llm = fake_ctx(demo_kg, rounds=rounds, check_schema=False)  # a prompted backbone may break the enum
    p = get("knowpath")(CANBERRA, ctx)
    assert llm.discards == [
        ("relation", "not among the candidates", {"key": "Canberra", "choice": "location.country.made_up"}),
        ("entity", "not among the candidates", {"key": "Canberra", "choice": "Atlantis"}),
    ]
    assert all(q["relation"] != "location.country.made_up" for q in kg_calls(ctx, "neighbors"))
    assert p.evidence == ["(Australia, location.country.capital, Canberra)"]
    assert (
        "relation",
        "discarded: not among the candidates",
        {"key": "Canberra", "choice": "location.country.made_up"},
    ) in notes(ctx)


def test_a_frontier_without_relations_ends_the_round_early_and_invents_nothing(demo_kg):
    nowhere = Question(id="q", text="What is Nowhere?", topic_entities={"m.0nowhere": "Nowhere"}, answers=[["x"]])
    ctx, llm = fake_ctx(demo_kg)
    p = get("knowpath")(nowhere, ctx)
    assert llm.stages() == ["ipg"] and p.evidence == []
    assert p.status == "fallback" and p.answers == ["Australian Labor Party"]
    assert (
        "relation",
        "the frontier has no relations; this subgraph keeps what it had",
        {"subgraph": "Nowhere"},
    ) in notes(ctx)
    assert ("exploration", "round 1 ended early: no subgraph grew, so exploration stops", {}) in notes(ctx)
    assert notes(ctx, "answer")[0][2] == {"rounds": 1, "source": "inference path"}


def test_a_chosen_relation_without_new_entities_ends_the_round_and_the_subgraph_keeps_what_it_had(demo_kg):
    rounds = [ROUND[0], ({"Canberra": ["location.country.capital"]}, None, None)]
    ctx, llm = fake_ctx(demo_kg, rounds=rounds, ipg_replies=(), ipg=False)
    p = get("knowpath")(CANBERRA, ctx)
    assert llm.stages() == ["relation", "entity", "evaluation", "relation"]
    assert (
        "entity",
        "the chosen relation reaches no new entity",
        {"subgraph": "Canberra", "relation": "location.country.capital"},
    ) in notes(ctx)
    assert p.evidence == ["(Australia, location.country.capital, Canberra)"]
    assert p.status == "fallback" and p.answers == ["Australia"]
    assert notes(ctx, "answer")[0][2] == {"rounds": 2, "source": "last evaluation's best guess"}


def test_without_any_evaluation_the_fallback_evaluates_what_was_found_once(demo_kg):
    nowhere = Question(id="q", text="What is Nowhere?", topic_entities={"m.0nowhere": "Nowhere"}, answers=[["x"]])
    guess = {"answerable": False, "reasoning": "No paths.", "answers": ["Somewhere"]}
    ctx, llm = fake_ctx(demo_kg, rounds=[(None, None, guess)], ipg_replies=(), ipg=False)
    p = get("knowpath")(nowhere, ctx)
    assert llm.stages() == ["evaluation"] and "(no paths found yet)" in llm.calls[0].prompt
    assert (p.status, p.answers) == ("fallback", ["Somewhere"])
    assert p.reason.endswith("no inference path answer: an evaluation of the subgraph as found")


def test_a_selection_that_fails_every_retry_chooses_nothing(demo_kg):
    failed = OutputError("relation", "invalid output after 6 tries: no JSON", "")
    ctx, llm = fake_ctx(demo_kg, rounds=[(failed, None, None)])
    p = get("knowpath")(CANBERRA, ctx)
    assert llm.stages() == ["ipg", "relation"] and p.status == "fallback"
    assert notes(ctx, "relation")[0][1].startswith("selection failed, nothing chosen")


def test_neighbour_and_relation_caps_are_recorded_with_the_kg_call(demo_kg):
    rounds = [
        (
            {"Canberra": ["location.location.containedby"]},
            {"Canberra": ["Australia"]},
            {"answerable": True, "reasoning": "r", "answers": ["x"]},
        )
    ]
    ctx, llm = fake_ctx(demo_kg, rounds=rounds, max_neighbors=1, max_relations=1)
    get("knowpath")(CANBERRA, ctx)
    capped = [(e.operation, e.rows, e.capped_from) for e in ctx.trace.events if e.kind == "kg" and e.capped_from]
    assert capped == [("relations", 1, 2), ("relations", 1, 2), ("neighbors", 1, 2)]
    assert ctx.kg.usage.capped == 3
    assert llm.calls[1].schema["properties"]["Canberra"]["items"]["enum"] == [
        "location.location.containedby",
        "location.country.capital",
    ]


# --------------------------------------------------------------------------- the scripted backbone


def test_on_the_scripted_backbone_calls_stay_within_one_plus_three_per_round(demo_kg):
    for question in load(DatasetConfig()):
        ctx, meter = scripted_ctx(demo_kg)
        p = get("knowpath")(question, ctx)
        rounds = notes(ctx, "answer")[0][2]["rounds"]
        assert 1 <= rounds <= 3 and meter.total().calls <= 1 + 3 * rounds, question.id
        assert meter.total().parse_failures == 0 and p.status in ("ok", "fallback")
        assert set(meter.stages) <= {"ipg", "relation", "entity", "evaluation"}


def test_the_scripted_backbone_stops_when_a_path_covers_the_question(demo_kg):
    ctx, meter = scripted_ctx(demo_kg)
    p = get("knowpath")(CANBERRA, ctx)
    # Round 1 reaches Australia only; round 2's "Canberra <- ... majority_party -> ..." covers the question.
    assert (meter.stages["evaluation"].calls, p.status, p.reason) == (2, "ok", "answerable after round 2")
    assert meter.total().calls == 7 and answer_recall(p.evidence, CANBERRA.answers)
    capital = Question(
        id="q", text="What is the capital of Australia?", topic_entities={"m.0_kk": "Australia"}, answers=[["Canberra"]]
    )
    ctx, meter = scripted_ctx(demo_kg)
    p = get("knowpath")(capital, ctx)
    assert (meter.total().calls, p.status, p.reason) == (4, "ok", "answerable after round 1")
    assert "(Australia, location.country.capital, Canberra)" in p.evidence


# --------------------------------------------------------------------------- reply sizes

FULL_IPG = {  # what a capable model writes for the paper's case: 15 triples, 3 paths
    "topic_entities": ["Canberra"],
    "triples": [
        "(Canberra, capital of, Australia)",
        "(Australia, has capital, Canberra)",
        "(Australia, form of government, federal parliamentary constitutional monarchy)",
        "(Australia, legislature, Parliament of Australia)",
        "(Parliament of Australia, lower house, Australian House of Representatives)",
        "(Australian House of Representatives, majority party, Australian Labor Party)",
        "(Australian Labor Party, leader, Anthony Albanese)",
        "(Anthony Albanese, office held, Prime Minister of Australia)",
        "(Australian Labor Party, in government since, 2022)",
        "(Liberal Party of Australia, status, opposition)",
        "(Canberra, located in, Australian Capital Territory)",
        "(Australian Capital Territory, part of, Australia)",
        "(Australia, head of state, Charles III)",
        "(2022 Australian federal election, won by, Australian Labor Party)",
        "(Australian Senate, upper house of, Parliament of Australia)",
    ],
    "paths": [
        "Canberra -> capital of -> Australia -> majority party -> Australian Labor Party",
        "Canberra -> located in -> Australian Capital Territory -> part of -> Australia -> governed by -> "
        "Australian Labor Party",
        "Canberra -> capital of -> Australia -> legislature -> Parliament of Australia -> majority party -> "
        "Australian Labor Party",
    ],
    "answers": ["Australian Labor Party"],
}


def test_ipg_and_evaluation_ask_for_room_for_their_whole_reply(demo_kg):
    ctx, llm = fake_ctx(demo_kg)
    get("knowpath")(CANBERRA, ctx)
    asked = {(call.stage, call.max_tokens) for call in llm.calls}
    assert asked == {("ipg", 685), ("relation", None), ("entity", None), ("evaluation", 300)}
    assert prompts.ipg_tokens(0, 5) == 310 and prompts.ipg_tokens(30, 1) == 1012


def test_ipg_with_15_triples_is_not_cut_at_a_256_token_backbone_limit(demo_kg, monkeypatch):
    """The full reply outgrows llm=local's max_tokens of 256, so IPG asks for more."""

    def write(messages, schema):
        return (
            json.dumps(FULL_IPG, indent=2) if schema and "triples" in schema["properties"] else reply(messages, schema)
        )

    monkeypatch.setattr(scripted, "reply", write)
    size = litellm.token_counter(model="gpt-3.5-turbo", text=json.dumps(FULL_IPG, indent=2))
    assert 256 < size < prompts.ipg_tokens(15, 5)
    ctx, meter = scripted_ctx(demo_kg, max_tokens=256, triples=15, exploration=False)
    p = get("knowpath")(CANBERRA, ctx)
    [event] = [e for e in ctx.trace.events if e.kind == "llm"]
    assert (event.max_tokens, event.truncated, event.output_tokens) == (685, False, size)
    assert (meter.total().truncated, meter.total().parse_failures) == (0, 0)
    assert notes(ctx, "ipg")[-1][2]["paths"] == FULL_IPG["paths"]
    assert (p.status, p.answers) == ("ok", ["Australian Labor Party"])


def test_an_ipg_reply_longer_than_its_estimate_is_asked_again_with_twice_the_room(demo_kg, monkeypatch):
    long = [
        t[:-1] + ", as stated in the 2022 Australian federal election results published by the Australian "
        "Electoral Commission, which also list every seat, candidate and party vote count)"
        for t in FULL_IPG["triples"]
    ]
    written = json.dumps({**FULL_IPG, "triples": long}, indent=2)
    monkeypatch.setattr(scripted, "reply", lambda messages, schema: written)
    assert 685 < litellm.token_counter(model="gpt-3.5-turbo", text=written) < 2 * 685
    ctx, meter = scripted_ctx(demo_kg, max_tokens=256, exploration=False, max_retries=1)
    p = get("knowpath")(CANBERRA, ctx)
    first, second = [e for e in ctx.trace.events if e.kind == "llm"]
    assert first.error.startswith("truncated at max_tokens=685 (invalid JSON") and second.error == ""
    assert (
        "ipg",
        "reply truncated at max_tokens=685: the retry asks for max_tokens=1370",
        {"max_tokens": 1370},
    ) in notes(ctx, "ipg")
    assert meter.total().truncated == 1 and p.answers == ["Australian Labor Party"]


# --------------------------------------------------------------------------- configs, sweeps, runs


def test_the_method_yaml_holds_the_papers_defaults(compose_cfg):
    spec = to_run_spec(compose_cfg("method=knowpath"))
    assert spec.method == KnowPathConfig()
    assert (spec.method.depth, spec.method.triples, spec.method.temperature_explore) == (3, 15, 0.4)


@pytest.mark.parametrize("dataset", ["cwq", "webqsp", "simpleqa", "webquestions"])
def test_experiment_configs_compose_the_papers_settings(compose_cfg, dataset):
    spec = to_run_spec(compose_cfg(f"+experiment=knowpath_{dataset}"))
    # the defaults, with App. F.3/F.4's "up to 7 ... (length up to 5)" (conf/paper_settings/knowpath_*.yaml)
    paper = KnowPathConfig(width=7, entity_width=7, list_length=5)
    assert spec.method == paper and spec.dataset.name == dataset and spec.kg.name == "freebase"


@pytest.mark.parametrize(
    "variant, method, ipg, exploration",
    [
        ("knowpath_full", "knowpath", True, True),
        ("knowpath_wo_ipg", "knowpath", False, True),
        ("knowpath_wo_se", "knowpath", True, False),
        ("knowpath_io", "io", None, None),
    ],
)
def test_ablation_variants_compose(compose_cfg, variant, method, ipg, exploration):
    spec = to_run_spec(compose_cfg(f"+experiment={variant}"))
    assert spec.method.name == method
    assert (getattr(spec.method, "ipg", None), getattr(spec.method, "exploration", None)) == (ipg, exploration)


@pytest.mark.parametrize(
    "sweep, param, values",
    [
        ("knowpath_temperature", "method.temperature_explore", "0.2,0.4,0.6,0.8,1.0"),
        ("knowpath_triples", "method.triples", "0,15,30,45"),
        ("knowpath_ablation", "+experiment", "knowpath_full,knowpath_wo_ipg,knowpath_wo_se,knowpath_io"),
        ("knowpath_cost", "method", "io,cot,sc,lmp,knowpath,pog,structgpt"),
    ],
)
def test_sweeps_name_the_papers_grids(monkeypatch, sweep, param, values):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas

    monkeypatch.chdir(CONF_DIR.parent)  # conf/config.yaml finds sweeps/ from the repository root
    register_schemas()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            cfg = compose(config_name="config", overrides=[f"+sweeps={sweep}"], return_hydra_config=True)
    finally:
        GlobalHydra.instance().clear()
    assert cfg.hydra.sweeper.params[param] == values
    if sweep in ("knowpath_temperature", "knowpath_triples"):
        assert cfg.method.name == "knowpath"


def test_a_run_logs_the_subgraph_pictures(compose_cfg, in_tmp):
    from kgx.run.execute import execute

    spec = to_run_spec(
        compose_cfg("method=knowpath", "llm=scripted", "run.progress=false", "dataset.limit=2", "run.explain=1")
    )
    out = execute(spec, in_tmp)
    drawn = sorted(p.name for p in (out.out_dir / "explanations").iterdir())
    assert drawn == ["demo-001.png", "demo-001.svg", "demo-001.txt"]
    assert "Inference path" in (out.out_dir / "explanations" / "demo-001.txt").read_text()
    trace = trace_of(out.out_dir, out.records[0])
    assert trace["explanation"]["nodes"][0]["role"] == "topic"
    assert out.summary["llm_calls_per_q"] <= 10 and "total_tokens_per_q.ipg" in out.summary
