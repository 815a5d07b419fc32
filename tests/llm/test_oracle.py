"""``llm=oracle``: the gold relation chains of the datasets, the hint built from them and the reach
paths, the provider's choices, verdicts and answers on the methods' own prompts, and whole
questions on the demo KG, where the oracle answers what the scripted double cannot."""

from __future__ import annotations

import os
import random
from dataclasses import replace
from types import SimpleNamespace

import pytest

from kgx import datasets
from kgx.core.config import DatasetConfig, LLMConfig
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.datasets import dataset_config, irn
from kgx.diagnose.chain_walk import on_chain
from kgx.diagnose.gold_path import GoldHint, chain, gold_hint, limit, without_round_trips
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.llm.cache import ResponseCache
from kgx.llm.client import LLMClient
from kgx.llm.errors import LLMError
from kgx.llm.meter import Meter
from kgx.llm.oracle import OracleLLM
from kgx.llm.oracle_evidence import Evidence
from kgx.llm.question import QuestionLLM
from kgx.llm.scripted import ScriptedLLM
from kgx.methods import Context, get, kit
from kgx.methods.answers import answers_schema, sufficiency_schema
from kgx.methods.cgpe import prompts as cgpe_prompts
from kgx.methods.cgpe.question_phrases import clue_pattern, phrases, same_characters
from kgx.methods.knowpath import prompts as knowpath_prompts
from kgx.methods.lmp import LMPConfig
from kgx.methods.lmp import prompts as lmp_prompts
from kgx.methods.structgpt import prompts as structgpt_prompts
from kgx.methods.tog import ToGConfig
from kgx.methods.tog import prompts as tog_prompts
from kgx.run.spec import to_run_spec
from tests import wc2014

ORACLE = LLMConfig(name="oracle", model="kgx-oracle/gold", structured_output="json_schema", backoff_s=0.0)
SCRIPTED = LLMConfig(name="scripted", model="kgx-scripted/overlap", structured_output="json_schema", backoff_s=0.0)
CAPITAL, CURRENCY = "location.country.capital", "location.country.currency_used"
YEN = ["Japanese yen", "Yen", "JPY"]
# Demo-015 (Tokyo <-capital- Japan -currency_used-> Japanese yen) as the runner hands it over.
TOKYO_GOLD = GoldHint(
    [YEN], [(CAPITAL, "in"), (CURRENCY, "out")], ["Japan", "Japanese yen", "m.0kiv", "m.0dsn7"], ["Tokyo"]
)
# ... once the method's KG calls returned the gold's names (what the oracle may answer from).
TOKYO_SEEN = replace(TOKYO_GOLD, shown=["Japanese yen", "Yen"])


def ask(cfg: LLMConfig, messages, schema, gold=None, stages=None, cache=None):
    """One call through the client as a method makes it: (parsed reply, the question's meter)."""
    meter = Meter()
    llm = QuestionLLM(LLMClient(cfg, stages or {}, cache, sleep=lambda s: None), meter, Trace(), gold=gold)
    return llm("stage", messages, schema=schema), meter


def shared_data() -> None:
    """Skip without the shared benchmark data; CI must have it."""
    if os.environ.get("KGX_DATA_DIR"):
        return
    if os.environ.get("CI"):
        pytest.fail("CI must set KGX_DATA_DIR: the gold chains are read from the real MetaQA/PathQuestion files")
    pytest.skip("KGX_DATA_DIR is unset: MetaQA and PathQuestion are shared data")


def first(name: str) -> Question:
    return datasets.load(replace(dataset_config(name), limit=1))[0]


def step(source: str, relation: str, direction: str, target: str) -> SimpleNamespace:
    return SimpleNamespace(source=source, relation=relation, direction=direction, target=target)


# --------------------------------------------------------------------------- gold chains


@pytest.mark.parametrize(
    "name, qtype, expected",
    [
        ("metaqa_1hop", "actor_to_movie", [("film.film.starring", "in")]),
        ("metaqa_2hop", "actor_to_movie_to_director", [("film.film.starring", "in"), ("film.film.directed_by", "out")]),
        (
            "metaqa_3hop",
            "movie_to_director_to_movie_to_language",
            [("film.film.directed_by", "out"), ("film.film.directed_by", "in"), ("film.film.language", "out")],
        ),
    ],
)
def test_metaqa_question_types_become_relation_chains_of_the_kg(name, qtype, expected):
    shared_data()
    question = first(name)
    assert question.meta["qtype"] == qtype
    assert chain(question, "metaqa") == expected
    # A KG that does not name MetaQA's relations (Freebase's nt) has no chain to offer.
    assert chain(question, "nt") is None


def test_pathquestion_gold_paths_become_relation_chains():
    shared_data()
    pq, pql = first("pq_2h"), first("pql_3h")
    assert chain(pq, "pathquestion") == [("people.person.spouse_s", "out"), ("people.person.nationality", "out")]
    # PQL's relations are Freebase ids spelled __domain__type__property. Its path walks a self-loop
    # three times (Robin_Hood -recording-> Robin_Hood): a round trip, led once (the answer is the subject).
    assert pql.meta["path"][1::2] == ["__music__release_track__recording"] * 3
    assert chain(pql, "pathquestion") == [("music.release_track.recording", "out")]


def test_wc2014_inverse_relations_are_their_forward_relation_walked_backwards(tmp_path):
    _, questions = wc2014.write(tmp_path)
    one, two, both = irn.irn(questions, DatasetConfig(name="wc", loader="irn", path=str(questions)))
    assert chain(one, "custom") == [("plays_in_club", "out")]
    assert chain(two, "custom") == [("plays_in_club", "out"), ("is_in_country", "out")]
    assert chain(both, "custom") == [("plays_in_club", "in"), ("plays_for_country", "in")]
    assert chain(Question("q", "no gold path"), "custom") is None


def test_the_hint_takes_the_chain_and_the_entities_of_the_paths_that_follow_it():
    question = Question(
        "q",
        "which person directed the movies starred by Ann",
        {"m.ann": "Ann"},
        [["Bo"]],
        {"qtype": "actor_to_movie_to_director", "hops": 2},
    )
    follows = [
        step("m.ann", "film.film.starring", "in", "m.film"),
        step("m.film", "film.film.directed_by", "out", "m.bo"),
    ]
    shortcut = [
        step("m.ann", "film.film.written_by", "in", "m.other"),
        step("m.other", "film.film.directed_by", "out", "m.bo"),
    ]
    reach = SimpleNamespace(
        paths=[shortcut, follows], names={"m.film": "Film", "m.other": "Other", "m.bo": "Bo"}, gold_ids=["m.bo"]
    )
    hint = gold_hint(question, reach, "metaqa")
    assert hint.relations == [("film.film.starring", "in"), ("film.film.directed_by", "out")]
    assert hint.entities == ["Film", "Bo", "m.film", "m.bo"]  # not the shortcut's Other, not the topic
    assert (hint.answers, hint.topics) == ([["Bo"]], ["Ann"])
    assert hint.chains == [[("film.film.starring", "in"), ("film.film.directed_by", "out")]]
    assert hint.depths == {"m.ann": 0, "Ann": 0, "m.film": 1, "Film": 1, "m.bo": 2, "Bo": 2}
    assert GoldHint.from_dict(hint.to_dict()) == hint
    # Without a chain the reach paths give the relations; without reach only the dataset's own path.
    plain = replace(question, meta={})
    assert gold_hint(plain, reach, "metaqa").relations == [
        ("film.film.written_by", "in"),
        ("film.film.directed_by", "out"),
        ("film.film.starring", "in"),
    ]
    assert gold_hint(plain, reach, "metaqa").chains == [  # each reach path a chain of its own, in order
        [("film.film.written_by", "in"), ("film.film.directed_by", "out")],
        [("film.film.starring", "in"), ("film.film.directed_by", "out")],
    ]
    pq = Question("p", "q", {}, [["uk"]], {"path": ["fred", "spouse", "ernest", "nationality", "uk"], "hops": 2})
    chain_pq = [("people.person.spouse_s", "out"), ("people.person.nationality", "out")]
    depths_pq = {"fred": 0, "ernest": 1, "uk": 2}
    assert gold_hint(pq, None, "pathquestion") == GoldHint(
        [["uk"]], chain_pq, ["ernest", "uk"], ["fred"], [chain_pq], depths_pq
    )


def test_a_gold_path_that_returns_to_an_entity_is_led_without_the_round_trip():
    # PQ-3H "the gender of daughter of abigail's parent": the daughter is abigail herself. Standing at
    # abigail, the oracle takes her gender, as a method that never walks back to where it came from can.
    path = ["abigail", "parents", "david", "children", "abigail", "gender", "female"]
    pq = Question("p", "the gender of daughter of abigail 's parent ?", {}, [["female"]], {"path": path, "hops": 3})
    gender = [("people.person.gender", "out")]
    assert gold_hint(pq, None, "pathquestion") == GoldHint(
        [["female"]], gender, ["female"], ["abigail"], [gender], {"abigail": 0, "female": 1}
    )
    assert without_round_trips(["a", "r1", "b", "r2", "c", "r3", "b"]) == ["a", "r1", "b"]
    assert without_round_trips(["a", "r1", "b", "r2", "a", "r3", "c", "r4", "a", "r5", "d"]) == ["a", "r5", "d"]
    # A path whose answer is its subject keeps one way back to it: a step to lead with.
    assert without_round_trips(["a", "children", "b", "parents", "a"]) == ["a", "children", "b", "parents", "a"]
    assert without_round_trips(["a", "r", "a", "r", "a", "r", "a"]) == ["a", "r", "a"]


# --------------------------------------------------------------------------- choices


def relation_call(
    labels: list[str],
    k: int = 2,
    question: str = "Which currency is used in the country whose capital is Tokyo?",
    topic: str = "Tokyo",
):
    prompt = tog_prompts.relation_prompt(question, topic, labels, k)
    return tog_prompts.messages("relation_prune", prompt, True), tog_prompts.scored_schema(
        "relations", "relation", labels, 1, k
    )


def test_a_relation_choice_takes_the_gold_relation_the_scripted_model_passes_over():
    labels = ["film.film.directed_by (reverse)", "film.film.starring (reverse)", "film.film.written_by (reverse)"]
    messages, schema = relation_call(
        labels, 1, "which person directed the movies starred by John Krasinski", "John Krasinski"
    )
    gold = GoldHint([["Sam Mendes"]], [("film.film.starring", "in"), ("film.film.directed_by", "out")], [])
    scripted, _ = ask(SCRIPTED, messages, schema)
    oracle, _ = ask(ORACLE, messages, schema, gold=gold)
    assert scripted == {"relations": [{"relation": "film.film.directed_by (reverse)", "score": 1.0}]}
    # directed_by is on the gold chain, but forwards from the movie: walked back from the actor it is no lead.
    assert oracle == {"relations": [{"relation": "film.film.starring (reverse)", "score": 1.0}]}


# PQ-3H: claudius -parents-> nero_claudius_drusus -children-> livilla -spouse_s-> julius_caesar_drusus
PARENTS, CHILDREN, SPOUSE = "people.person.parents", "people.person.children", "people.person.spouse_s"
CLAUDIUS = GoldHint(
    [["julius_caesar_drusus"]],
    [(PARENTS, "out"), (CHILDREN, "out"), (SPOUSE, "out")],
    ["nero_claudius_drusus", "livilla", "julius_caesar_drusus"],
    ["claudius"],
    [[(PARENTS, "out"), (CHILDREN, "out"), (SPOUSE, "out")]],
    {"claudius": 0, "nero_claudius_drusus": 1, "livilla": 2, "julius_caesar_drusus": 3},
)


@pytest.mark.parametrize(
    "followed, offered, expected",
    [
        ([], [PARENTS, "people.person.place_of_birth", "people.person.places_lived", SPOUSE], PARENTS),
        ([PARENTS], [PARENTS, SPOUSE, CHILDREN], CHILDREN),
        ([PARENTS, CHILDREN], [CHILDREN, PARENTS, SPOUSE], SPOUSE),
    ],
)
def test_a_single_choice_takes_the_next_unwalked_step_of_the_chain(followed, offered, expected):
    question = "claudius 's dad 's kid 's couple ?"
    prompt = structgpt_prompts.relation_prompt(question, ["claudius"], followed, offered, 1)
    schema = kit.choice_schema({"relations": offered}, 1, 1)
    oracle, _ = ask(ORACLE, structgpt_prompts.messages("relation_selection", prompt), schema, gold=CLAUDIUS)
    assert oracle == {"relations": [expected]}


def test_where_a_prompt_stands_is_the_deepest_gold_entity_it_shows():
    # ToG names the entity it expands: at the father, the chain's next step is children, not parents again.
    messages, schema = relation_call([PARENTS, SPOUSE, CHILDREN], 1, "claudius 's dad 's kid 's couple ?", "claudius")
    assert ask(ORACLE, messages, schema, gold=CLAUDIUS)[0]["relations"][0]["relation"] == PARENTS
    messages, schema = relation_call(
        [PARENTS, SPOUSE, CHILDREN], 1, "claudius 's dad 's kid 's couple ?", "nero_claudius_drusus"
    )
    assert ask(ORACLE, messages, schema, gold=CLAUDIUS)[0]["relations"][0]["relation"] == CHILDREN


def test_a_relation_in_the_wrong_direction_is_no_gold_and_nothing_is_invented():
    labels = [CAPITAL, "location.location.containedby", "location.location.geolocation"]  # capital only forwards
    messages, schema = relation_call(labels)
    oracle, _ = ask(ORACLE, messages, schema, gold=TOKYO_GOLD)
    scripted, _ = ask(SCRIPTED, messages, schema)
    assert oracle == scripted  # no gold candidate: the scripted choice, among the offered ones
    assert {r["relation"] for r in oracle["relations"]} <= set(labels)


def test_bare_relations_match_either_direction_where_no_direction_is_shown():
    offers = {"Tokyo": ["location.location.containedby", CAPITAL, "location.location.geolocation"]}
    messages = knowpath_prompts.relations(
        "Which currency is used in the country whose capital is Tokyo?",
        ["Tokyo"],
        None,
        [("Tokyo", ["Tokyo"], offers["Tokyo"])],
        2,
    )
    reply, _ = ask(ORACLE, messages, kit.choice_schema(offers, 1, 2), gold=TOKYO_GOLD)
    assert reply == {"Tokyo": [CAPITAL]}


def test_entity_scores_go_to_the_entities_on_the_gold_path():
    labels = ["Kyoto", "Japan", "Honshu"]
    prompt = tog_prompts.entity_prompt(
        "Which currency is used in the country whose capital is Tokyo?",
        "Tokyo",
        [(f"{CAPITAL} (reverse)", ["Japan"]), ("location.location.containedby", ["Kyoto", "Honshu"])],
    )
    messages = tog_prompts.messages("entity_score", prompt, True)
    schema = tog_prompts.scored_schema("scores", "entity", labels, 3, 3)
    reply, _ = ask(ORACLE, messages, schema, gold=TOKYO_GOLD)
    assert {s["entity"]: s["score"] for s in reply["scores"]} == {"Japan": 1.0, "Kyoto": 0.0, "Honshu": 0.0}


def test_clues_name_the_topic_entities_before_the_scripted_phrases():
    question = "Which writer influenced both James Joyce and Arthur Miller?"
    gold = GoldHint([["Henrik Ibsen"]], [], [], ["James Joyce", "Arthur Miller"])
    hint = list(phrases(question, 8))
    schema = cgpe_prompts.clues_schema(hint, 6, 8, clue_pattern(question, 8))
    scripted, _ = ask(SCRIPTED, cgpe_prompts.clues(question, hint), schema)
    oracle, _ = ask(ORACLE, cgpe_prompts.clues(question, hint), schema, gold=gold)
    assert "James Joyce and Arthur Miller" in scripted["clues"]  # which would swallow both names
    assert oracle["clues"][:2] == ["James Joyce", "Arthur Miller"]
    assert not {"James Joyce and Arthur Miller", "James", "Miller"} & set(oracle["clues"])


@pytest.mark.parametrize(
    "question, topic",
    [
        ("who directed After Dark, My Sweet", "After Dark, My Sweet"),
        ("what films did the director of Caro diario direct", "Caro diario"),
        ("which actors starred in Good Will Hunting", "Good Will Hunting"),
        ("what is the charles_iv_of_france 's wife 's parents 's other half ?", "charles_iv_of_france"),
        ("how did caesonia's husband die", "caesonia"),
    ],
)
def test_clues_are_written_freely_so_a_title_with_small_words_and_commas_is_one_clue(question, topic):
    hint = list(phrases(question, 8))
    schema = cgpe_prompts.clues_schema(hint, 6, 8, clue_pattern(question, 8))
    assert topic in hint and schema["properties"]["clues"]["items"]["examples"] == hint
    oracle, _ = ask(ORACLE, cgpe_prompts.clues(question, hint), schema, gold=GoldHint([["x"]], [], [], [topic]))
    assert oracle["clues"][0] == topic and not {"Dark", "Sweet", "Caro", "Good", "Hunting"} & set(oracle["clues"])


@pytest.mark.parametrize(
    "question, topic, clue",
    [
        ("who starred in Logan's Run", "Logan's Run", "Logan 's Run"),  # read as CGPE reads "'s"
        ("who directed Ro.Go.Pa.G.?", "Ro.Go.Pa.G.", "Ro.Go.Pa.G."),  # the name's final period kept
        ("what university did romney graduated from?", "Mitt Romney", "Mitt Romney"),
        ("where did hugo chavez go to school?", "Hugo Chávez", "Hugo Chávez"),
        ("what religion was king louis xiv?", "Louis XIV of France", "Louis XIV of France"),
        ("Which of JFK's brother held the latest governmental position?", "John F. Kennedy", "John F. Kennedy"),
    ],
)
def test_clues_name_the_topic_as_the_kg_does(question, topic, clue):
    hint = list(phrases(question, 8))
    schema = cgpe_prompts.clues_schema(hint, 6, 8, clue_pattern(question, 8, (topic,)))
    oracle, _ = ask(ORACLE, cgpe_prompts.clues(question, hint), schema, gold=GoldHint([["x"]], [], [], [topic]))
    assert oracle["clues"][0] == clue and same_characters(topic, clue)  # an initial node (Sec. 3.3)
    taken = {w.lower() for w in clue.replace("'s", "").split()} | {"romney", "chavez", "jfk"}
    assert not taken & {c.lower() for c in oracle["clues"][1:]}


def test_answers_come_from_kg_texts_the_prompt_shows_never_from_its_own_words_or_a_longer_name():
    schema = {"type": "object", "properties": {"answers": answers_schema(5)}, "required": ["answers"]}

    def answer(prompt: str, gold: GoldHint) -> list[str]:
        messages = [{"role": "user", "content": f"{prompt}\nQuestion: q?"}]
        return ask(ORACLE, messages, schema, gold=gold)[0]["answers"]

    lyon = GoldHint([["Lyon"]], [], [], shown=["Lyon"], holding=["Lyon Office"])
    assert answer("Triples:\n(Acme, has_office, Lyon Office)", lyon) == ["unknown"]
    assert answer("Triples:\n(Acme, has_office, Lyon Office)\n(Lyon Office, in, Lyon)", lyon) == ["Lyon"]
    fifteen = GoldHint([["15"]], [], [])  # nothing retrieved states it
    assert answer("Write 15 knowledge triples.\n(Acme, sector, Robotics)", fifteen) == ["unknown"]
    vienna = GoldHint([["1,897,310"], ["May 1, 1990"]], [], [], shown=["1.89731e+06", "1990-05-01"])
    shown = "(Vienna, population, 1.89731e+06)\n(Vienna, founding_date, 1990-05-01)"
    assert answer(shown, vienna) == ["1,897,310", "May 1, 1990"]
    assert answer(shown, replace(vienna, reachable=False)) == ["unknown"]  # beyond the method's depth


def test_evidence_keeps_the_retrieved_texts_that_state_or_hold_a_gold():
    gold = GoldHint([["Aragorn"], ["7692024"], ["j_presper_eckert"]], [], [], named={"m.4": "j_presper_eckert"})
    evidence = Evidence(gold)
    evidence.watch("names", {"m.1": "(actor: Viggo Mortensen; character: Aragorn)", "m.2": "Aragorn II Elessar"})
    evidence.watch("neighbors", ['"7.69202e+06"', "m.3", "m.4", "m.5"])  # m.4: a topic, its own answer
    hint = evidence.hint(GoldHint([["Aragorn"], ["7692024"]], [], []))
    assert (hint.shown, hint.holding) == (["7.69202e+06", "Aragorn", "j_presper_eckert"], ["Aragorn II Elessar"])
    assert Evidence(replace(gold, topics=["Aragorn"])).hint(gold).shown == ["Aragorn"]  # its own answer


KRASINSKI = GoldHint(
    [["Sam Mendes"]],
    [("film.film.starring", "in"), ("film.film.directed_by", "out")],
    ["Away We Go", "Sam Mendes"],
    ["John Krasinski"],
    depths={"John Krasinski": 0, "Away We Go": 1, "Sam Mendes": 2},
)


def test_cgpe_matches_take_their_clue_from_the_gold_step_and_leave_off_path_candidates_out():
    question, unused = (
        "which person directed the movies starred by John Krasinski",
        ["person directed", "movies starred"],
    )
    options = ["(none, Away We Go)", "(none, Leatherheads)"]
    messages = cgpe_prompts.exact(question, "John Krasinski", unused, options)
    oracle, _ = ask(ORACLE, messages, cgpe_prompts.exact_schema(options, unused), gold=KRASINSKI)
    assert oracle == {"matches": [{"candidate": "(none, Away We Go)", "clue": "movies starred"}]}
    options = ["(none, Sam Mendes)", "(none, Jim Jarmusch)"]
    messages = cgpe_prompts.exact(question, "Away We Go", unused[:1], options)
    oracle, _ = ask(ORACLE, messages, cgpe_prompts.exact_schema(options, unused[:1]), gold=KRASINSKI)
    assert oracle == {"matches": [{"candidate": "(none, Sam Mendes)", "clue": "person directed"}]}
    # No candidate on the gold path: every matching keeps none (the scripted double keeps some).
    pairs = ["(film.film.written_by (reverse), none)", "(film.film.genre (reverse), none)"]
    messages = cgpe_prompts.fuzzy(question, "John Krasinski", unused, pairs)
    scripted, _ = ask(SCRIPTED, messages, cgpe_prompts.fuzzy_schema(pairs))
    oracle, _ = ask(ORACLE, messages, cgpe_prompts.fuzzy_schema(pairs), gold=KRASINSKI)
    assert scripted["keep"] and oracle == {"keep": []}
    options = ["(none, Leatherheads)", "(none, Nobody Walks)"]
    messages = cgpe_prompts.rough(question, "John Krasinski", unused, options)
    assert ask(ORACLE, messages, cgpe_prompts.rough_schema(options), gold=KRASINSKI)[0] == {"scores": []}


def test_a_miss_is_a_method_limit_where_the_kg_walks_the_gold_chain_else_a_kg_gap():
    edges = {("m.ann", "starring", "in"): ["m.film"], ("m.film", "directed_by", "out"): ["m.bo"]}
    kg = SimpleNamespace(neighbors=lambda e, r, d: edges.get((e, r, d), []), names=lambda ids: {"m.film": "Film"})
    question = Question(
        "q", "q", {"m.ann": "Ann"}, [["Bo"]], {"path": ["Ann", "starring_inverse", "F", "directed_by", "Bo"]}
    )
    reach = SimpleNamespace(gold_ids=["m.bo"])
    assert limit(question, reach, kg, "custom")["limit"] == "method"
    assert on_chain(kg, ["m.ann"], [("starring", "in"), ("directed_by", "out")], {"m.bo"}) == [
        {"m.ann"},
        {"m.film"},
        {"m.bo"},
    ]
    # The oracle knows every middle node of the chain walked to a gold answer, not only the reach paths'.
    hint = gold_hint(question, SimpleNamespace(gold_ids=["m.bo"], paths=[], names={}), "custom", kg)
    assert (hint.depths["m.film"], hint.depths["Film"]) == (1, 1) and "Film" in hint.entities
    question.meta["path"] = ["Ann", "starring_inverse", "F", "written_by", "Bo"]
    assert limit(question, reach, kg, "custom") == {
        "limit": "kg",
        "limit_why": "a KG gap: the gold chain reaches no gold answer in the KG",
    }
    # Without a dataset chain the reach paths are the gold, and they are KG paths.
    assert limit(Question("q", "q", {"m.ann": "Ann"}, [["Bo"]]), reach, kg, "custom")["limit"] == "method"


# --------------------------------------------------------------------------- verdicts and answers


def reasoning_call(triples: str, question: str = "Which currency is used in the country whose capital is Tokyo?"):
    messages = tog_prompts.messages("reasoning", tog_prompts.triples_prompt(question, triples), True)
    return messages, sufficiency_schema(5)


def test_sufficient_only_once_a_gold_answer_is_shown_and_answered_with_its_first_alias():
    messages, schema = reasoning_call(f"1. (Japan, {CAPITAL}, Tokyo); (Japan, {CURRENCY}, Yen)")
    reply, _ = ask(ORACLE, messages, schema, gold=TOKYO_SEEN)
    assert (reply["sufficient"], reply["answers"]) == (True, ["Japanese yen"])
    reply, _ = ask(ORACLE, messages, schema, gold=TOKYO_GOLD)
    assert (reply["sufficient"], reply["answers"]) == (False, [])  # shown, but no KG call returned it
    messages, schema = reasoning_call(f"1. (Japan, {CAPITAL}, Tokyo)", "Is the yen used where Tokyo is the capital?")
    reply, _ = ask(ORACLE, messages, schema, gold=TOKYO_SEEN)
    assert (reply["sufficient"], reply["answers"]) == (False, [])  # the question's own "yen" is not evidence


def test_a_gold_answer_in_a_worked_example_is_not_shown():
    messages, schema = reasoning_call("1. (Kenya, location.country.capital, Nairobi)")
    assert "Kenyan shilling" in messages[2]["content"] + messages[3]["content"]  # ToG's exemplar
    reply, _ = ask(ORACLE, messages, schema, gold=GoldHint([["Kenyan shilling"]], [], []))
    assert reply["sufficient"] is False


def test_answers_are_the_gold_answers_shown_else_an_honest_miss():
    gold = GoldHint([["English Language", "English"], ["French Language", "French"]], [], [], shown=["English"])
    schema = {"type": "object", "properties": {"answers": answers_schema(5)}, "required": ["answers"]}
    shown = lmp_prompts.answer(
        "What languages are official in Canada?", "Canada:\n1. Canada's official language: English.", "hits"
    )
    reply, _ = ask(ORACLE, shown, schema, gold=gold)
    assert reply == {"answers": ["English Language"]}
    unseen = lmp_prompts.answer("What languages are official in Canada?", "Canada:\n1. Its capital is Ottawa.", "hits")
    reply, _ = ask(ORACLE, unseen, schema, gold=gold)
    assert reply == {"answers": ["unknown"]}


def test_fact_summaries_are_the_facts_and_keep_the_gold_names_they_were_given():
    members = ", ".join(f"Province {i}" for i in range(30))  # the gold name at the end of a long fact
    facts = [
        f"The entity Japan has relation location.location.contains with following entities: {members}, Japanese yen.",
        f"The entity Japan has relation {CAPITAL} with following entities: Tokyo.",
    ]
    messages = lmp_prompts.transform("What currency is used in Japan?", "Japan", facts, [])
    schema = {
        "type": "object",
        "required": ["facts"],
        "properties": {
            "facts": {"type": "array", "items": {"type": "string", "maxLength": 200}, "minItems": 2, "maxItems": 2}
        },
    }
    scripted, _ = ask(SCRIPTED, messages, schema)
    oracle, _ = ask(ORACLE, messages, schema, gold=GoldHint([YEN], [], []))
    assert all("Japanese yen" not in s for s in scripted["facts"])
    assert oracle["facts"][1] == facts[1]  # no gold name in it: the fact itself, which LMP accepts
    assert oracle["facts"][0].endswith(": Japanese yen") and len(oracle["facts"][0]) == 200


# --------------------------------------------------------------------------- the client


def test_an_oracle_call_without_the_gold_fails_clearly():
    messages, schema = reasoning_call("1. (Japan, location.country.capital, Tokyo)")
    with pytest.raises(LLMError, match="llm 'oracle' .*: llm=oracle needs the question's gold") as info:
        ask(ORACLE, messages, schema)
    assert info.value.kind == "llm.oracle"


def test_the_client_wants_gold_when_any_backbone_is_the_oracle():
    assert LLMClient(ORACLE, {}, None).wants_gold()
    assert LLMClient(SCRIPTED, {"reasoning": ORACLE}, None).wants_gold()
    assert not LLMClient(SCRIPTED, {"answer": SCRIPTED}, None).wants_gold()
    assert LLMClient(ORACLE, {}, None).preflight() == 0  # nothing to reach before a question gives the gold


def test_only_the_oracle_receives_the_gold(monkeypatch):
    seen: list[dict] = []
    for handler in (ScriptedLLM, OracleLLM):

        def spy(self, *args, original=handler.completion, **kwargs):
            seen.append(dict(kwargs["optional_params"]))
            return original(self, *args, **kwargs)

        monkeypatch.setattr(handler, "completion", spy)
    meter, trace = Meter(), Trace()
    llm = QuestionLLM(
        LLMClient(SCRIPTED, {"reasoning": ORACLE}, None, sleep=lambda s: None), meter, trace, gold=TOKYO_GOLD
    )
    trace.watch("names", {"m.0kiv": "Japanese yen", "m.0dsn7": "Japan"})  # what the method's KG calls returned
    messages, schema = reasoning_call("1. (Japan, location.country.currency_used, Japanese yen)")
    assert llm("answer", messages, schema=schema)["answers"] != ["Japanese yen"]  # the scripted double
    assert llm("reasoning", messages, schema=schema)["answers"] == ["Japanese yen"]
    sent = replace(TOKYO_GOLD, shown=["Japanese yen"]).to_dict()
    assert "kgx_gold" not in seen[0] and seen[1]["kgx_gold"] == sent


def test_calls_and_tokens_are_metered_like_the_scripted_double():
    messages, schema = reasoning_call("1. (Japan, location.country.currency_used, Japanese yen)")
    _, scripted = ask(SCRIPTED, messages, schema)
    _, oracle = ask(ORACLE, messages, schema, gold=TOKYO_GOLD)
    s, o = scripted.total(), oracle.total()
    assert (o.calls, o.billed_calls, o.input_tokens) == (1, 1, s.input_tokens)
    assert 0 < o.output_tokens and o.cost_usd == 0.0
    with pytest.raises(LLMError, match="transient"):  # failure_rate and the retry budget, as scripted
        ask(replace(ORACLE, failure_rate=0.999, max_retries=0), messages, schema, gold=TOKYO_GOLD)


def test_cached_replies_belong_to_their_gold(tmp_path):
    cache = ResponseCache(tmp_path / "llm.sqlite")
    messages, schema = reasoning_call("1. (Japan, location.country.currency_used, Japanese yen)")
    other = GoldHint([["Swedish krona"]], [], [])
    first_reply, _ = ask(ORACLE, messages, schema, gold=TOKYO_SEEN, cache=cache)
    second_reply, _ = ask(ORACLE, messages, schema, gold=other, cache=cache)
    again, meter = ask(ORACLE, messages, schema, gold=TOKYO_SEEN, cache=cache)
    assert (first_reply["sufficient"], second_reply["sufficient"]) == (True, False)
    assert again == first_reply and meter.total().cached_calls == 1


def test_llm_oracle_composes(compose_cfg):
    llm = to_run_spec(compose_cfg("llm=oracle")).llm
    assert (llm.model, llm.structured_output, llm.input_cost_per_token) == ("kgx-oracle/gold", "json_schema", 0.0)


# --------------------------------------------------------------------------- whole questions


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("kg"))


def solve(kg, params, cfg: LLMConfig, gold=None):
    """Demo-015 by the method of ``params``: (prediction, meter)."""
    question = next(q for q in datasets.load(DatasetConfig()) if q.id == "demo-015")
    trace, meter = Trace(), Meter()
    llm = QuestionLLM(LLMClient(cfg, {}, None, sleep=lambda s: None), meter, trace, gold=gold)
    ctx = Context(llm=llm, params=params, rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))
    return get(params.name)(question, ctx), meter


def tokyo_reach(kg) -> SimpleNamespace:
    """Demo-015's gold path as kgx.diagnose.reach reports it."""
    path = [step("m.0va0", CAPITAL, "in", "m.0kiv"), step("m.0kiv", CURRENCY, "out", "m.0dsn7")]
    return SimpleNamespace(paths=[path], names=kg.names(["m.0kiv", "m.0dsn7"]), gold_ids=["m.0dsn7"])


@pytest.mark.parametrize("params", [ToGConfig(), LMPConfig(depth=2)], ids=["tog", "lmp"])
def test_the_oracle_answers_a_demo_question_the_scripted_double_misses(kg, params):
    question = next(q for q in datasets.load(DatasetConfig()) if q.id == "demo-015")
    gold = gold_hint(question, tokyo_reach(kg), "nt")
    assert gold.relations == [(CAPITAL, "in"), (CURRENCY, "out")] and "Japan" in gold.entities
    scripted, _ = solve(kg, params, SCRIPTED)
    oracle, meter = solve(kg, params, ORACLE, gold)
    assert "Japanese yen" not in scripted.answers
    assert oracle.answers == ["Japanese yen"] and oracle.status == "ok"
    assert any("Japanese yen" in e for e in oracle.evidence)
    assert meter.total().calls >= 3 and meter.total().input_tokens > 0


def test_the_gold_is_no_parameter_of_the_client():
    """Only the oracle needs a question's gold: it reaches the oracle's request through the question's
    LLM (kgx.llm.oracle_gold.given), not through the signature every backbone's call shares."""
    import inspect

    from kgx.llm.client import LLMClient
    from kgx.llm.oracle_gold import QUESTION_GOLD, given

    assert "gold" not in inspect.signature(LLMClient.complete).parameters
    with given("hint"):  # type: ignore[arg-type]
        assert QUESTION_GOLD.get() == "hint"
    assert QUESTION_GOLD.get() is None
