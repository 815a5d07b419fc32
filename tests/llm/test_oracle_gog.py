"""How the oracle plays GoG's own requests (kgx.llm.oracle_gog): its Thinking, its generations from the
gold chain (never where the whole KG holds no gold answer within the method's depth, never an unnamed
node), its verification; and that no other method's request is read as GoG's."""

from __future__ import annotations

from dataclasses import replace

from kgx.diagnose.gold_path import GoldHint
from kgx.llm.oracle import Judge
from kgx.methods.gog import prompts as gog_prompts
from kgx.methods.gog.prompts import think_schema
from kgx.methods.kit import choice_schema, triple_text

STARRING, DIRECTED = ("film.film.starring", "in"), ("film.film.directed_by", "out")
# Al Pacino -starring(in)-> Heat / Serpico -directed_by-> Michael Mann / Sidney Lumet
GOLD = GoldHint(
    [["Michael Mann"], ["Sidney Lumet"]],
    [STARRING, DIRECTED],
    ["Heat", "Serpico", "m.heat", "m.serpico"],
    ["Al Pacino"],
    [[STARRING, DIRECTED]],
    {"Al Pacino": 0, "Heat": 1, "Serpico": 1, "m.heat": 1, "(character: Frank; film: Serpico)": 1, "m.mann": 2},
    reachable=True,
)


def judge(prompt: str, gold: GoldHint = GOLD) -> Judge:
    return Judge(gold, [{"role": "user", "content": prompt}])


def think(prompt: str, searchable: list[str], gold: GoldHint = GOLD) -> dict:
    schema = think_schema(list(gog_prompts.ACTIONS), searchable, 5, 5)
    return judge(prompt, gold).value(schema)


def generation(prompt: str, gold: GoldHint = GOLD) -> list[dict]:
    return judge(prompt, gold).value(gog_prompts.generate_schema(3))["generated"]


def test_it_searches_the_topic_first_then_the_gold_entities_in_the_chains_order():
    first = think(
        gog_prompts.think_prompt("who directed Al Pacino's films", ["Al Pacino"], "", ["Al Pacino"], 1), ["Al Pacino"]
    )
    assert (first["action"], first["entities"]) == ("Search", ["Al Pacino"])
    history = "Thought 1: x\nAction 1: Search[Al Pacino]\nObservation 1: (Heat, film.film.starring, Al Pacino)"
    offered = ["Ronin", "Heat", "Serpico"]
    second = think(
        gog_prompts.think_prompt("who directed Al Pacino's films", ["Al Pacino"], history, offered, 2), offered
    )
    assert (second["action"], second["entities"]) == ("Search", ["Heat", "Serpico"])


def test_it_finishes_with_the_gold_answers_it_was_shown():
    history = "Observation 2: (Heat, film.film.directed_by, Michael Mann)"
    shown = replace(GOLD, shown=["Michael Mann"])
    reply = think(gog_prompts.think_prompt("q", ["Al Pacino"], history, ["Michael Mann"], 3), ["Michael Mann"], shown)
    assert (reply["action"], reply["answers"]) == ("Finish", ["Michael Mann"])
    unseen = think(gog_prompts.think_prompt("q", ["Al Pacino"], history, ["Michael Mann"], 3), ["Michael Mann"])
    assert unseen["action"] != "Finish" or unseen["answers"] == ["unknown"]  # named in a prompt is not retrieved


def test_with_nothing_left_to_search_it_generates_the_next_step_of_the_chain():
    history = "Thought 2: x\nAction 2: Search[Heat]\nObservation 2: (Heat, film.film.release_year, 1995)"
    reply = think(gog_prompts.think_prompt("q", ["Al Pacino"], history, ["1995"], 3), ["1995"])
    assert reply["action"] == "Generate" and "Heat" in reply["thought"] and "film.film.directed_by" in reply["thought"]
    generated = generation(gog_prompts.generate_prompt(reply["thought"], [triple_text("Heat", "r", "1995")], 3))
    assert generated == [
        {"subject": "Heat", "relation": "film.film.directed_by", "object": "Michael Mann"},
        {"subject": "Heat", "relation": "film.film.directed_by", "object": "Sidney Lumet"},
    ]


def test_a_first_hop_is_written_in_the_kgs_direction_and_names_no_unnamed_node():
    generated = generation(gog_prompts.generate_prompt("The triples lack the film.film.starring of Al Pacino.", [], 3))
    # starring is walked backwards from the actor: the films are its subjects; the CVT label is never one
    assert generated == [
        {"subject": "Heat", "relation": "film.film.starring", "object": "Al Pacino"},
        {"subject": "Serpico", "relation": "film.film.starring", "object": "Al Pacino"},
    ]


def test_nothing_is_generated_where_the_whole_kg_holds_no_gold_answer_within_reach():
    prompt = gog_prompts.generate_prompt("The triples lack the film.film.directed_by of Heat.", [], 3)
    assert generation(prompt, replace(GOLD, reachable=False)) == []
    assert generation(prompt, replace(GOLD, reachable=None)) == []
    history = "Observation 2: (Heat, film.film.release_year, 1995)"
    unreachable = think(
        gog_prompts.think_prompt("q", ["Al Pacino"], history, ["1995"], 3), ["1995"], replace(GOLD, reachable=False)
    )
    assert (unreachable["action"], unreachable["answers"]) == ("Finish", ["unknown"])


def test_it_verifies_the_generated_triples_on_the_gold_path():
    kept = triple_text("Heat", "film.film.directed_by", "Michael Mann")
    wrong = [
        triple_text("Heat", "film.film.directed_by", "Ridley Scott"),
        triple_text("Heat", "film.film.genre", "Michael Mann"),
    ]
    schema = choice_schema({"verified": [*wrong, kept]}, 0, 3)
    assert judge(gog_prompts.verify_prompt("t", [[kept], wrong], 3)).value(schema) == {"verified": [kept]}


def test_other_methods_requests_are_not_read_as_gogs():
    from kgx.llm import oracle_gog

    triples = {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}  # KnowPath's
    assert oracle_gog.reply(judge("x"), triples, "triples") is None
    action = {"type": "object", "properties": {"action": {"enum": ["continue", "stop"]}}}
    assert oracle_gog.reply(judge("x"), action, "") is None
