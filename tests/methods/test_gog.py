"""Generate-on-Graph on a six-film KG and the bundled demo KG: the Thinking-Searching-Generating loop in
order with its prompts, the Generate action (generations, verification, linking), Finish[unknown]'s
roll back and expansion, the answer without the KG, the call bound, discarded inventions, the config,
and the oracle playing every stage (it generates only what the whole KG's gold path holds)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kgx import datasets
from kgx.core.config import ConfigError, DatasetConfig
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.kg.noise import pair
from kgx.methods import Context, get, gog
from kgx.methods.gog import GoGConfig
from kgx.run.spec import to_run_spec
from tests.doubles import FakeLLM
from tests.films import (
    DIRECTORS,
    HEAT,
    LUMET,
    MANN,
    SERPICO,
    oracle_overrides,
    records,
    write_questions,
)
from tests.inprocess import kgx_main

DEMO = {q.id: q for q in datasets.load(DatasetConfig())}


@pytest.fixture(scope="module")
def demo_kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("demo"))


def run(kg, question: Question, llm: FakeLLM, params: GoGConfig = GoGConfig()):
    trace = Trace()
    ctx = Context(llm=llm, params=params, rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))
    return get("gog")(question, ctx), trace


def offered(call) -> list[str]:
    return call.schema["properties"].get("entities", {}).get("items", {}).get("enum", [])


def act(action: str, entities=(), answers=(), thought: str = "") -> dict:
    return {
        "thought": thought or f"{action} now.",
        "action": action,
        "entities": list(entities),
        "answers": list(answers),
    }


def directors(thoughts: list[dict]):
    """A double that thinks ``thoughts`` in turn, keeps directed_by, and generates Heat's director."""

    def reply(call):
        if call.stage == "think":
            return thoughts.pop(0)
        if call.stage == "filter":
            wanted = [r for r in call.schema["properties"]["relations"]["items"]["enum"] if "directed_by" in r]
            return {"relations": wanted}
        if call.stage == "generate":
            return {"generated": [{"subject": "Heat", "relation": "film.film.directed_by", "object": "Michael Mann"}]}
        if call.stage == "verify":
            return {"verified": call.schema["properties"]["verified"]["items"]["enum"][:1]}
        return {"reasoning": "From what I know.", "answers": ["Michael Mann"]}

    return FakeLLM(default=reply)


# --------------------------------------------------------------------------- the loop


def test_search_then_finish_in_the_papers_order_with_its_prompts(films_kg):
    llm = directors(
        [act("Search", ["Al Pacino"]), act("Search", ["Heat", "Serpico"]), act("Finish", answers=["Michael Mann"])]
    )
    p, trace = run(films_kg, DIRECTORS, llm)
    # Al Pacino has a single relation (starred in, reversed): read without a filter call
    assert llm.stages() == ["think", "think", "filter", "filter", "think"]
    first, second, third = (c for c in llm.calls if c.stage == "think")
    assert offered(first) == ["Al Pacino"] and first.prompt.endswith("Thought 1:")
    assert sorted(offered(second)) == ["Heat", "Serpico"]  # met, not searched yet: the topic is not offered again
    observed = second.prompt.split("Observation 1: ")[1].split("\nEntities you can search:")[0].splitlines()
    assert sorted(observed) == ["(Heat, film.film.starring, Al Pacino)", "(Serpico, film.film.starring, Al Pacino)"]
    assert "Action 2: Search[Heat | Serpico]\nObservation 2: " in third.prompt
    assert "(Heat, film.film.directed_by, Michael Mann)" in third.prompt.split("Observation 2: ")[1]
    filter_call = next(c for c in llm.calls if c.stage == "filter")
    assert filter_call.prompt.startswith("Thought: Search now.\nEntity: Heat\nRelations:\n")
    assert filter_call.temperature == 0.7 and "Question:" not in filter_call.prompt  # the thought leads (Sec. 5.2)
    assert p.answers == ["Michael Mann"] and p.status == "ok" and p.reason == "Finish at step 3"
    assert "(Serpico, film.film.directed_by, Sidney Lumet)" in p.evidence
    assert p.stats == {"steps": 2.0, "searches": 2.0, "generate_used": 0.0, "generated_triples": 0.0}
    assert trace.explanation["nodes"]


def test_generate_chooses_known_triples_generates_n_times_verifies_and_links(films_kg):
    view = films_kg.without(frozenset([pair(HEAT, MANN), pair(SERPICO, LUMET)]))  # no director is left
    llm = directors(
        [
            act("Search", ["Al Pacino"]),
            act("Search", ["Heat", "Serpico"]),
            act("Generate", thought="Who directed Heat?"),
            act("Finish", answers=["Michael Mann"]),
        ]
    )
    p, trace = run(view, DIRECTORS, llm)
    # Heat and Serpico have two relations left each: a filter call each, which keeps neither
    assert llm.stages() == ["think", "think", "filter", "filter", "think", *["generate"] * 3, "verify", "think"]
    generate = next(c for c in llm.calls if c.stage == "generate")
    assert generate.prompt.startswith("Thought: Who directed Heat?\nKnown triples:\n")
    assert "(Heat, film.film.starring, Al Pacino)" in generate.prompt  # chosen by BM25 from what was read
    assert [c.sample for c in llm.calls if c.stage == "generate"] == [0, 1, 2]  # n samples, apart
    verify = next(c for c in llm.calls if c.stage == "verify")
    assert "### 1\n(Heat, film.film.directed_by, Michael Mann)\n### 2" in verify.prompt
    last = llm.calls[-1]
    assert "Action 3: Generate[Who directed Heat?]\nObservation 3: (Heat, film.film.directed_by, Michael Mann)" in (
        last.prompt
    )
    assert "Michael Mann" in offered(last)  # linked to the KG: it can be searched
    assert p.answers == ["Michael Mann"] and p.status == "ok"
    assert "(Heat, film.film.directed_by, Michael Mann)" not in p.evidence  # generated: no KG evidence
    assert p.stats["generate_used"] == 1.0 and p.stats["generated_triples"] == 1.0
    assert "generated: (Heat, film.film.directed_by, Michael Mann)" in trace.explanation["side"]


def test_an_unknown_finish_rolls_back_and_searches_one_hop_further(films_kg):
    thoughts = [
        act("Search", ["Al Pacino"], thought="Find his films_kb."),
        act("Generate", thought="Guess the directors."),
        act("Finish", answers=["unknown"]),
        act("Finish", answers=["Sidney Lumet"]),
    ]
    llm = directors(thoughts)
    p, trace = run(films_kg, DIRECTORS, llm)
    assert llm.stages()[-3:] == ["filter", "filter", "think"]  # the expansion reads Heat and Serpico
    last = llm.calls[-1].prompt
    assert "Generate[" not in last  # rolled back
    assert "Thought 2: Find his films_kb.\nAction 2: Search[" in last and last.endswith("Thought 3:")
    assert [n.message for n in trace.notes("think")] == [
        "Finish[unknown] at step 3: one hop further from the last search"
    ]
    assert p.answers == ["Sidney Lumet"] and p.reason == "Finish at step 4"


def test_without_expansions_left_the_model_answers_without_the_kg(films_kg):
    llm = directors([act("Search", ["Al Pacino"]), act("Finish", answers=["unknown"])])
    p, _ = run(films_kg, DIRECTORS, llm, GoGConfig(max_expansions=0))
    assert llm.stages() == ["think", "think", "answer"]
    answer = llm.calls[-1].prompt
    assert answer == "Topic entities: [Al Pacino]\nQuestion: who directed the films Al Pacino starred in"
    assert p.status == "fallback" and p.evidence == []
    assert p.reason == "Finish[unknown] at step 2: answered without the KG"


def test_steps_that_never_finish_end_in_the_answer_without_the_kg(films_kg):
    llm = directors([act("Generate") for _ in range(2)])
    p, _ = run(films_kg, DIRECTORS, llm, GoGConfig(max_steps=2, samples=1))
    assert llm.stages() == ["think", "generate", "verify", "think", "generate", "verify", "answer"]
    assert p.reason == "no Finish in 2 steps: answered without the KG"


def test_a_search_of_an_entity_not_offered_is_discarded_and_asked_again(films_kg):
    """As a prompted backbone may name one: the schema's enum is not enforced there."""
    llm = directors(
        [act("Search", ["Marlon Brando"]), act("Search", ["Al Pacino"]), act("Finish", answers=["Sidney Lumet"])]
    )
    llm.check_schema = False
    p, _ = run(films_kg, DIRECTORS, llm)
    assert [c.attempt for c in llm.calls if c.stage == "think"] == [0, 1, 0]
    assert llm.discards == [("think", "not an entity to search", {"choice": "Marlon Brando"})]
    assert p.answers == ["Sidney Lumet"]


def test_generation_without_gog_offers_no_generate_action(films_kg):
    llm = directors([act("Search", ["Al Pacino"]), act("Finish", answers=["Sidney Lumet"])])
    run(films_kg, DIRECTORS, llm, GoGConfig(generate=False))
    assert llm.calls[0].schema["properties"]["action"]["enum"] == ["Search", "Finish"]


class Homonyms:
    """A KG in which every name is two entities: each generated name needs a link call."""

    def search(self, text: str, limit: int = 10) -> list[str]:
        return [f"m.{text.lower()[:3]}1", f"m.{text.lower()[:3]}2"][:limit]

    def names(self, ids: list[str]) -> dict[str, str]:
        return {x: x for x in ids}

    def types(self, ids: list[str]) -> dict[str, str]:
        return {x: "Film" if x.endswith("1") else "Person" for x in ids}

    def relations(self, entity: str, direction: str) -> list[str]:
        return []

    def neighbors(self, entity: str, relation: str, direction: str) -> list[str]:
        return []


def test_a_generated_name_the_kg_holds_twice_is_linked_by_a_choice_among_ids():
    params = GoGConfig(max_steps=1, max_search=1, samples=1, max_generated=1)
    seen = []

    def reply(call):
        if call.stage == "think":
            return act("Generate")
        if call.stage == "generate":
            return {"generated": [{"subject": "Heat", "relation": "film.film.directed_by", "object": "Mann"}]}
        if call.stage == "verify":
            return {"verified": call.schema["properties"]["verified"]["items"]["enum"]}
        if call.stage == "link":
            seen.append(call.prompt)
            return {"entity": call.schema["properties"]["entity"]["items"]["enum"][-1:]}
        return {"reasoning": "-", "answers": ["Mann"]}

    llm = FakeLLM(default=reply)
    run(Homonyms(), Question("x", "who directed Heat", {"m.top": "Top"}, [["Mann"]]), llm, params)
    # every call the bound counts: think, one generation, the verification, two links; then the answer
    assert llm.stages() == ["think", "generate", "verify", "link", "link", "answer"]
    assert len(llm.calls) == gog.call_bound(params) == 6
    assert "Entity name: Mann\nCandidates:\n- m.man1: m.man1 (Film)\n- m.man2: m.man2 (Person)" in seen[1]


# --------------------------------------------------------------------------- the bound and the config


def test_the_call_bound_follows_the_algorithm():
    assert gog.call_bound(GoGConfig()) == 67  # 6 x (1 + max(5, 3 + 1 + 2 x 3)) + 1
    assert gog.call_bound(GoGConfig(generate=False)) == 37  # 6 x (1 + 5) + 1
    assert gog.call_bound(GoGConfig(max_steps=2, max_search=8, samples=1)) == 19  # 2 x (1 + 8) + 1


def greedy(call):
    """Searches everything offered, keeps every relation, then generates and keeps everything."""
    if call.stage == "think":
        options = offered(call)
        return act("Search", options) if options else act("Generate")
    if call.stage == "filter":
        return {"relations": call.schema["properties"]["relations"]["items"]["enum"][:3]}
    if call.stage == "generate":
        n = call.schema["properties"]["generated"]["maxItems"]
        return {"generated": [{"subject": f"S{i}", "relation": "r", "object": f"O{i}"} for i in range(n)]}
    if call.stage == "verify":
        return {"verified": call.schema["properties"]["verified"]["items"]["enum"]}
    if call.stage == "link":
        return {"entity": call.schema["properties"]["entity"]["items"]["enum"][:1]}
    return {"reasoning": "-", "answers": ["x"]}


@pytest.mark.parametrize("params", [GoGConfig(), GoGConfig(max_steps=3, max_search=2), GoGConfig(generate=False)])
def test_calls_stay_within_the_bound_on_every_demo_question(demo_kg, params):
    for question in DEMO.values():
        llm = FakeLLM(default=greedy)
        p, _ = run(demo_kg, question, llm, params)
        assert len(llm.calls) <= gog.call_bound(params), question.id
        assert p.status == "fallback" and llm.stages()[-1] == "answer"


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"max_steps": 0}, "method.max_steps"),
        ({"samples": 0}, "method.samples"),
        ({"relations": 0}, "method.relations"),
        ({"max_expansions": -1}, "method.max_expansions"),
        ({"temperature": 3.0}, "method.temperature"),
    ],
)
def test_out_of_range_values_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        GoGConfig(**kwargs)


def test_a_bad_setting_stops_the_run_with_one_line(tmp_path):
    done = kgx_main(tmp_path, "method=gog", "llm=scripted", "method.samples=0")
    assert done.returncode != 0 and "method.samples" in done.stderr and "Traceback" not in done.stderr


def test_the_method_composes_with_the_released_defaults(compose_cfg):
    params = to_run_spec(compose_cfg("method=gog")).method
    assert type(params) is GoGConfig and params == GoGConfig()
    assert (params.max_steps, params.relations, params.per_relation, params.related_triples) == (6, 3, 5, 10)
    assert params.temperature == 0.7 and params.horizon().depth == 5


# --------------------------------------------------------------------------- the oracle


@pytest.fixture(scope="module")
def questions(films_kb) -> Path:
    return write_questions(films_kb.parent, [["Martin Scorsese"]])  # q2: no gold answer in the KG


def oracle_run(tmp_path: Path, films_kb: Path, questions: Path, method: str, share: float) -> dict[str, dict]:
    tmp_path.mkdir(exist_ok=True)
    overrides = [f"method={method}", f"kg.drop={share}", *oracle_overrides(films_kb, questions, tmp_path / "cache")]
    done = kgx_main(tmp_path, *overrides)
    assert done.returncode == 0, done.stderr
    return records(tmp_path)


def test_the_oracle_searches_its_way_to_the_gold_on_the_whole_kg(tmp_path, films_kb, questions):
    got = oracle_run(tmp_path, films_kb, questions, "gog", 0.0)
    assert got["q1"]["scores"]["hits1"] == 1.0 and got["q1"]["prediction"]["stats"]["generate_used"] == 0.0
    assert set(got["q1"]["stages"]) == {"think", "filter"}


def test_the_oracle_generates_what_the_drop_removed_and_tog_cannot(tmp_path, films_kb, questions):
    got = oracle_run(tmp_path / "gog", films_kb, questions, "gog", 1.0)
    assert got["q1"]["scores"]["hits1"] == 1.0 and got["q1"]["kg"]["cut"] == 4
    assert got["q1"]["prediction"]["stats"]["generate_used"] == 1.0 and "verify" in got["q1"]["stages"]
    # q2's gold answer is not in the whole KG: nothing is generated for it, its answer is no gold
    assert got["q2"]["prediction"]["stats"]["generate_used"] == 0.0 and got["q2"]["scores"]["hits1"] == 0.0
    tog = oracle_run(tmp_path / "tog", films_kb, questions, "tog", 1.0)
    assert tog["q1"]["scores"]["hits1"] == 0.0
