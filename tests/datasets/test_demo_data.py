"""Sanity checks for the bundled demo dataset (``kgx/datasets/demo``).

The KG is loaded into an in-memory Oxigraph store and every question is checked against it: topic
entities and gold answers must exist with the stated English names, and each gold answer must be
reachable from a topic entity within ``meta.hops`` hops (CVT nodes count as a hop, as in Freebase).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pyoxigraph
import pytest

DEMO_DIR = Path(__file__).resolve().parents[2] / "kgx/datasets/demo"
KG_PATH = DEMO_DIR / "kg.nt"
QUESTIONS_PATH = DEMO_DIR / "questions.jsonl"

NS = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
NAME = f"<{NS}type.object.name>"
TYPE = f"<{NS}type.object.type>"
NOTABLE = f"<{NS}common.topic.notable_types>"
MID_RE = re.compile(r"^m\.0[a-z0-9_]{3,6}$")

CVT_TYPES = {
    "people.sibling_relationship",
    "people.marriage",
    "education.education",
    "government.government_position_held",
    "government.political_party_tenure",
    "government.majority_party_tenure",
    "measurement_unit.dated_integer",
    "sports.sports_league_participation",
    "music.group_membership",
    "organization.organization_relationship",
}
QUESTION_TYPES = {"1hop", "2hop", "3hop", "4hop", "conjunction", "comparison", "superlative"}
MIN_TYPE_COUNTS = {"1hop": 6, "2hop": 6, "3hop": 6, "4hop": 3, "conjunction": 4, "comparison": 4, "superlative": 4}

# (topic entity name, first gold answer name) of the case studies from the LMP and KnowPath papers.
CASE_STUDIES = {
    "canberra majority party": ("Canberra", "Australian Labor Party"),
    "zhang jue sacred text": ("Zhang Jue", "Tao Te Ching"),
    "league cup 2002": ("Football League Cup", "Blackburn Rovers F.C."),
    "jfk brothers": ("John F. Kennedy", "Robert F. Kennedy"),
    "renegade fight song": ("Renegade", "Pennsylvania"),
    "sampson salter blowers": ("Sampson Salter Blowers", "Massachusetts"),
    "arthur miller / lucian": ("Arthur Miller", "William Shakespeare"),
}


# ----------------------------------------------------------------------------- fixtures / helpers
@pytest.fixture(scope="module")
def store():
    s = pyoxigraph.Store()
    s.load(path=str(KG_PATH), format=pyoxigraph.RdfFormat.N_TRIPLES)
    return s


@pytest.fixture(scope="module")
def questions():
    with QUESTIONS_PATH.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def iri(mid: str) -> str:
    return f"<{NS}{mid}>"


def mid_of(node) -> str | None:
    if isinstance(node, pyoxigraph.NamedNode) and node.value.startswith(NS + "m."):
        return node.value[len(NS) :]
    return None


def select(store, query: str):
    return list(store.query(query))


def english_names(store, mid: str) -> list[str]:
    rows = select(store, f'SELECT ?n WHERE {{ {iri(mid)} {NAME} ?n FILTER(langMatches(lang(?n), "en")) }}')
    return [r["n"].value for r in rows]


def all_mids(store) -> set[str]:
    rows = select(
        store,
        f"""
        SELECT DISTINCT ?x WHERE {{
          {{ ?x ?p ?o }} UNION {{ ?s ?p ?x }}
          FILTER(isIRI(?x) && STRSTARTS(STR(?x), "{NS}m."))
        }}""",
    )
    return {mid_of(r["x"]) for r in rows}


def cvt_mids(store) -> set[str]:
    values = " ".join(f"<{NS}{t}>" for t in sorted(CVT_TYPES))
    rows = select(store, f"SELECT DISTINCT ?x WHERE {{ VALUES ?t {{ {values} }} ?x {TYPE} ?t }}")
    return {mid_of(r["x"]) for r in rows}


def neighbours(store, mid: str) -> set[str]:
    """Entity-valued neighbours of ``mid`` in either direction (literals and schema nodes excluded)."""
    rows = select(
        store,
        f"""
        SELECT DISTINCT ?n WHERE {{
          {{ {iri(mid)} ?p ?n }} UNION {{ ?n ?p {iri(mid)} }}
          FILTER(isIRI(?n) && STRSTARTS(STR(?n), "{NS}m."))
        }}""",
    )
    return {mid_of(r["n"]) for r in rows}


def bfs(store, start: str, max_hops: int) -> dict[str, int]:
    """Undirected BFS from ``start``; returns {mid: distance} for nodes within ``max_hops``."""
    dist = {start: 0}
    frontier = [start]
    for depth in range(1, max_hops + 1):
        nxt = []
        for node in frontier:
            for n in neighbours(store, node):
                if n not in dist:
                    dist[n] = depth
                    nxt.append(n)
        frontier = nxt
    return dist


def literal_values(store, mid: str) -> set[str]:
    rows = select(store, f"SELECT ?o WHERE {{ {iri(mid)} ?p ?o FILTER(isLiteral(?o)) }}")
    return {r["o"].value for r in rows}


# ----------------------------------------------------------------------------- KG tests
def test_kg_size(store):
    assert len(store) >= 600


def test_kg_file_uses_full_iris_only():
    for lineno, line in enumerate(KG_PATH.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        assert line.startswith("<") and line.endswith(" ."), f"line {lineno}: {line!r}"
        assert "#" not in line.split("> ", 2)[0], f"line {lineno}: comment/fragment in subject"
        for ref in re.findall(r"<([^>]*)>", line):
            assert ref.startswith(NS) or ref.startswith(XSD), f"line {lineno}: foreign IRI {ref}"
        assert not re.search(r"(^|\s)ns:", line), f"line {lineno}: prefixed name"


def test_mids_are_freebase_shaped(store):
    mids = all_mids(store)
    assert mids
    bad = sorted(m for m in mids if not MID_RE.match(m))
    assert not bad, bad


def test_every_entity_has_exactly_one_english_name_and_a_type(store):
    cvts = cvt_mids(store)
    entities = all_mids(store) - cvts
    assert len(entities) > 100
    problems = {}
    for mid in sorted(entities):
        names = english_names(store, mid)
        if len(names) != 1:
            problems[mid] = names
    assert not problems, problems
    untyped = [
        mid
        for mid in sorted(entities)
        if not store.query(f"ASK {{ {{ {iri(mid)} {TYPE} ?t }} UNION {{ {iri(mid)} {NOTABLE} ?t }} }}")
    ]
    assert not untyped, untyped


def test_type_nodes_are_named(store):
    rows = select(
        store,
        f"""
        SELECT DISTINCT ?t WHERE {{
          {{ ?x {TYPE} ?t }} UNION {{ ?x {NOTABLE} ?t }}
          FILTER NOT EXISTS {{ ?t {NAME} ?n FILTER(langMatches(lang(?n), "en")) }}
        }}""",
    )
    assert not rows, [r["t"].value for r in rows]


def test_cvt_nodes_exist_and_are_unnamed(store):
    cvts = cvt_mids(store)
    assert len(cvts) >= 15
    named = [m for m in cvts if store.query(f"ASK {{ {iri(m)} {NAME} ?n }}")]
    assert not named, named
    # every CVT is wired to at least two entities, as n-ary facts are
    for m in cvts:
        assert len(neighbours(store, m)) >= 1, m
    sibling_cvts = select(store, f"SELECT ?x WHERE {{ ?x {TYPE} <{NS}people.sibling_relationship> }}")
    assert len(sibling_cvts) >= 8


def test_some_entities_have_non_english_names(store):
    rows = select(store, f'SELECT ?x ?n WHERE {{ ?x {NAME} ?n FILTER(!langMatches(lang(?n), "en")) }}')
    assert len(rows) >= 5
    names = {r["n"].value for r in rows}
    assert "Australie" in names


def test_typed_literals_present(store):
    dates = select(store, f"SELECT ?o WHERE {{ ?s ?p ?o FILTER(datatype(?o) = <{XSD}date>) }} LIMIT 5")
    ints = select(store, f"SELECT ?o WHERE {{ ?s ?p ?o FILTER(datatype(?o) = <{XSD}integer>) }} LIMIT 5")
    assert dates and ints


# ----------------------------------------------------------------------------- question tests
REQUIRED_FIELDS = {"id", "question", "topic_entities", "answers", "answer_ids", "meta"}


def test_question_count_and_fields(questions):
    assert len(questions) == 48
    ids = [q["id"] for q in questions]
    assert len(set(ids)) == len(ids)
    for q in questions:
        assert REQUIRED_FIELDS <= set(q), q["id"]
        assert re.match(r"^demo-\d{3}$", q["id"])
        assert isinstance(q["question"], str) and q["question"].strip()
        assert isinstance(q["topic_entities"], dict) and q["topic_entities"], q["id"]
        assert q["answers"] and all(
            isinstance(a, list) and a and all(isinstance(x, str) for x in a) for a in q["answers"]
        ), q["id"]
        assert len(q["answer_ids"]) == len(q["answers"]), q["id"]
        meta = q["meta"]
        assert meta["type"] in QUESTION_TYPES, q["id"]
        assert isinstance(meta["hops"], int) and 1 <= meta["hops"] <= 4, q["id"]
        assert isinstance(meta["source"], str) and meta["source"], q["id"]
        if meta["type"].endswith("hop"):
            assert meta["hops"] == int(meta["type"][0]), q["id"]


def test_question_type_coverage(questions):
    counts = Counter(q["meta"]["type"] for q in questions)
    for qtype, minimum in MIN_TYPE_COUNTS.items():
        assert counts[qtype] >= minimum, (qtype, counts)
    assert sum(1 for q in questions if len(q["answers"]) > 1) >= 5
    comparisons = [q for q in questions if q["meta"]["type"] == "comparison"]
    for q in comparisons:
        assert len(q["topic_entities"]) == 2 and len(q["answer_ids"]) == 1, q["id"]
        assert q["answer_ids"][0] in q["topic_entities"], q["id"]


def test_case_studies_present(questions):
    found = {}
    for label, (topic, answer) in CASE_STUDIES.items():
        for q in questions:
            if (
                topic in q["topic_entities"].values()
                and q["answers"][0][0] == answer
                and q["meta"]["source"].startswith("case study")
            ):
                found[label] = q["id"]
    assert set(found) == set(CASE_STUDIES), set(CASE_STUDIES) - set(found)
    assert sum(q["meta"]["source"].startswith("case study") for q in questions) == len(CASE_STUDIES)


def test_case_study_details(questions):
    by_answer = {q["answers"][0][0]: q for q in questions if q["meta"]["source"].startswith("case study")}
    zhang = by_answer["Tao Te Ching"]
    assert {a[0] for a in zhang["answers"]} == {"Tao Te Ching", "Zhuangzi", "Daozang"}
    jfk = by_answer["Robert F. Kennedy"]
    assert [a[0] for a in jfk["answers"]] == ["Robert F. Kennedy"]
    assert "November 6, 1962" in jfk["question"]
    assert by_answer["William Shakespeare"]["meta"]["type"] == "conjunction"
    assert len(by_answer["William Shakespeare"]["topic_entities"]) == 2


def test_topic_entities_exist_with_names(store, questions):
    for q in questions:
        for mid, name in q["topic_entities"].items():
            assert MID_RE.match(mid), (q["id"], mid)
            assert english_names(store, mid) == [name], (q["id"], mid, name)


def test_answer_ids_exist_with_names(store, questions):
    for q in questions:
        for aid, aliases in zip(q["answer_ids"], q["answers"]):
            if MID_RE.match(aid):
                assert english_names(store, aid) == [aliases[0]], (q["id"], aid, aliases[0])
            else:  # literal answer: the value itself, present as a literal in the KG
                assert aliases[0] == aid, q["id"]
                assert select(store, f'SELECT ?s WHERE {{ ?s ?p ?o FILTER(isLiteral(?o) && STR(?o) = "{aid}") }}'), (
                    q["id"],
                    aid,
                )


def test_answers_reachable_within_hops(store, questions):
    cache: dict[tuple[str, int], dict[str, int]] = {}
    for q in questions:
        hops = q["meta"]["hops"]
        reach: dict[str, int] = {}
        for topic in q["topic_entities"]:
            key = (topic, hops)
            if key not in cache:
                cache[key] = bfs(store, topic, hops)
            for mid, d in cache[key].items():
                reach[mid] = min(d, reach.get(mid, d))
        for aid in q["answer_ids"]:
            if MID_RE.match(aid):
                assert aid in reach, (q["id"], aid, "not within", hops, "hops")
            else:  # a literal sits one edge beyond an entity
                holders = [m for m, d in reach.items() if d <= hops - 1 and aid in literal_values(store, m)]
                assert holders, (q["id"], aid, "literal not within", hops, "hops")


def test_jfk_brothers_position_dates(store):
    """The LMP case study must be decidable from the KG: exactly one brother held a position before 1962-11-06."""
    rows = select(
        store,
        f"""
        SELECT DISTINCT ?name WHERE {{
          ?jfk <{NS}type.object.name> "John F. Kennedy"@en .
          ?jfk <{NS}people.person.sibling_s> ?rel .
          ?rel <{NS}people.sibling_relationship.sibling> ?sib .
          FILTER(?sib != ?jfk)
          ?sib <{NS}people.person.gender> ?g . ?g <{NS}type.object.name> "Male"@en .
          ?sib <{NS}government.politician.government_positions_held> ?pos .
          ?pos <{NS}government.government_position_held.from> ?from .
          FILTER(?from < "1962-11-06"^^<{XSD}date>)
          ?sib <{NS}type.object.name> ?name .
        }}""",
    )
    assert [r["name"].value for r in rows] == ["Robert F. Kennedy"]
    siblings = select(
        store,
        f"""
        SELECT DISTINCT ?sib WHERE {{
          ?jfk <{NS}type.object.name> "John F. Kennedy"@en .
          ?jfk <{NS}people.person.sibling_s> ?rel . ?rel <{NS}people.sibling_relationship.sibling> ?sib .
          FILTER(?sib != ?jfk) }}""",
    )
    assert len(siblings) == 8


def test_league_cup_2002_winner(store):
    rows = select(
        store,
        f"""
        SELECT ?champ WHERE {{
          ?cup <{NS}type.object.name> "Football League Cup"@en .
          ?ev <{NS}time.event.instance_of_recurring_event> ?cup ;
              <{NS}time.event.start_date> ?d ;
              <{NS}sports.sports_championship_event.champion> ?team .
          FILTER(YEAR(?d) = 2002)
          ?team <{NS}type.object.name> ?champ .
        }}""",
    )
    assert [r["champ"].value for r in rows] == ["Blackburn Rovers F.C."]


def test_canberra_current_majority_party(store):
    rows = select(
        store,
        f"""
        SELECT ?party WHERE {{
          ?country <{NS}location.country.capital> ?c . ?c <{NS}type.object.name> "Canberra"@en .
          ?country <{NS}government.governmental_jurisdiction.majority_party> ?t .
          ?t <{NS}government.majority_party_tenure.party> ?p .
          FILTER NOT EXISTS {{ ?t <{NS}government.majority_party_tenure.to> ?end }}
          ?p <{NS}type.object.name> ?party .
        }}""",
    )
    assert [r["party"].value for r in rows] == ["Australian Labor Party"]
