"""Every dataset config against the full public files in ``$KGX_DATA_DIR`` (CI sets it to the
shared data): the counts of the data README, and known records read field by field."""

from __future__ import annotations

import os
from collections import Counter
from functools import cache

import pytest

from kgx.core.sources import name_id
from kgx.datasets import dataset_config, load

pytestmark = pytest.mark.skipif(
    not os.environ.get("KGX_DATA_DIR"), reason="KGX_DATA_DIR is unset: point it at the shared benchmark data"
)

COUNTS = {
    "cwq": 3531,
    "grailqa": 1000,
    "simpleqa": 1000,
    "webquestions": 2032,
    "webqsp": 1639,
    "webqsp_parses": 1000,
    "metaqa_1hop": 9947,
    "metaqa_2hop": 14872,
    "metaqa_3hop": 14274,
    "pq_2h": 1908,
    "pq_3h": 5198,
    "pql_2h": 1594,
    "pql_3h": 1031,
}


@cache
def questions(name: str):
    return load(dataset_config(name))


def by_id(name: str, qid: str):
    return next(q for q in questions(name) if q.id == qid)


@pytest.mark.parametrize("name, count", sorted(COUNTS.items()))
def test_counts_match_the_data_readme(name, count):
    assert len(questions(name)) == count
    assert all(q.text.strip() for q in questions(name))


def test_cwq_record_answer_names_and_types():
    q = questions("cwq")[0]
    assert q.id == "WebQTest-832_c334509bb5e02cacae1ba2e80c176499"
    assert q.text == "Lou Seal is the mascot for the team that last won the World Series when?"
    assert q.topic_entities == {"m.03_dwn": "Lou Seal"} and q.answers == [["2014 World Series"]]
    assert q.meta == {"compositionality_type": "composition"}
    jfk = by_id("cwq", "WebQTest-743_0a8cdba29cf260283b7c890b3609c0b9")
    assert jfk.answers == [["Robert F. Kennedy"], ["Ted Kennedy"]]  # ToG's answer, then PoG's name
    assert sum(not q.topic_entities for q in questions("cwq")) == 11
    assert Counter(q.meta["compositionality_type"] for q in questions("cwq")) == {
        "conjunction": 1575,
        "composition": 1546,
        "comparative": 213,
        "superlative": 197,
    }


def test_webqsp_record_and_questions_without_gold():
    q = by_id("webqsp", "WebQTest-1198")
    assert q.text == "who influenced samuel taylor coleridge?"
    assert q.topic_entities == {"m.078w2": "Samuel Taylor Coleridge"}
    assert len(q.answers) == 10 and ["Immanuel Kant"] in q.answers
    assert by_id("webqsp", "WebQTest-238").answers == []  # WebQSP.json lists no answer
    assert sum(not q.answers for q in questions("webqsp")) == 58


def test_webqsp_parses_record_with_mids_and_values():
    q = by_id("webqsp_parses", "WebQTest-1198")
    assert q.answers[0] == ["Giambattista Vico", "m.015_hb"] and len(q.answers) == 10
    viggo = by_id("webqsp_parses", "WebQTest-1092")
    assert viggo.answers == [["Aragorn", "m.0gwlg"]] and len(viggo.topic_entities) == 3
    assert sum(any(a == ["2005"] for a in q.answers) for q in questions("webqsp_parses")) >= 1


def test_grailqa_record_and_levels():
    q = by_id("grailqa", "2101960008000")
    assert q.text == "which play is produced by the illusion?"
    assert q.topic_entities == {"m.0yrlqjm": "The Illusion"} and q.answers == [["The Illusion", "m.0yrltsn"]]
    assert q.meta == {"level": "i.i.d.", "function": "none"}
    assert by_id("grailqa", "2105436005000").answers == [["1"]]  # a count: a value, no mid
    assert Counter(q.meta["level"] for q in questions("grailqa")) == {
        "zero-shot": 562,
        "i.i.d.": 240,
        "compositional": 198,
    }


def test_simpleqa_and_webquestions_records():
    q = questions("simpleqa")[0]
    assert (q.id, q.text, q.answers) == (
        "simpleqa-00000",
        "where is the madam satan located",
        [["United States of America"]],
    )
    assert q.topic_entities == {"m.02qkg8m": "Madam Satan"} and q.meta == {"relation": "country"}
    w = questions("webquestions")[0]
    assert (w.id, w.text) == ("webquestions-00000", "what does jamaican people speak?")
    assert w.answers == [["Jamaican Creole English Language"], ["Jamaican English"]]


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_metaqa_hops_come_from_the_question_types(hops):
    assert {q.meta["hops"] for q in questions(f"metaqa_{hops}hop")} == {hops}


def test_metaqa_records():
    q = questions("metaqa_2hop")[0]
    assert (q.id, q.text) == ("metaqa_2hop-00001", "which person directed the movies starred by John Krasinski")
    assert q.topic_entities == {name_id("John Krasinski"): "John Krasinski"}
    assert q.answers == [["Nancy Meyers"], ["Sam Mendes"], ["George Clooney"], ["Ken Kwapis"], ["Luke Greenfield"]]
    assert q.meta == {"qtype": "actor_to_movie_to_director", "hops": 2}
    last = questions("metaqa_3hop")[-1]
    assert last.id == "metaqa_3hop-14274" and last.answers == [["2009"]]


def test_pathquestion_records():
    q = questions("pq_2h")[0]
    assert q.text == "which nationality is frederica_of_mecklenburg-strelitz 's couple ?"
    assert q.topic_entities == {name_id("frederica_of_mecklenburg-strelitz"): "frederica_of_mecklenburg-strelitz"}
    assert q.answers == [["united_kingdom", "united kingdom"]]
    assert q.meta == {
        "path": [
            "frederica_of_mecklenburg-strelitz",
            "spouse",
            "ernest_augustus_i_of_hanover",
            "nationality",
            "united_kingdom",
        ],
        "hops": 2,
    }
    two = by_id("pq_3h", "pq_3h-00013")
    assert two.answers == [["gabriel_de_borbon", "gabriel de borbon"], ["charles_iv_of_spain", "charles iv of spain"]]
    rating = by_id("pql_2h", "pql_2h-00215")
    assert rating.answers == [["PG_(USA)", "PG (USA)"]] and rating.meta["path"][-1] == "PG_(USA)"
    for name, hops in (("pq_2h", 2), ("pq_3h", 3), ("pql_2h", 2), ("pql_3h", 3)):
        assert {q.meta["hops"] for q in questions(name)} == {hops}, name
