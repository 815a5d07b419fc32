"""Numbers and dates scored as values: the case table of every metric's rule,
the value reader, and reachability / the failure breakdown on a tiny KG holding numeric literals."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kgx.core.gold import prepared
from kgx.core.metrics import answer_recall, em, hit_any, hits1, hits1_tog, normalize, score
from kgx.core.reachability import Step
from kgx.core.trace import LLMEvent, Trace
from kgx.core.types import Horizon, Prediction, Question
from kgx.core.values import Date, as_printed, parse, values_in
from kgx.diagnose import breakdown
from kgx.diagnose.reach import Reacher
from kgx.kg import EmbeddedKG, build_store

# Each rule as one prediction text meets one gold answer (a single alias).
RULES = {
    "hits1": lambda pred, gold: hits1([pred], gold),  # exact (GraftNet, NSM, RoG Hits@1)
    "em": lambda pred, gold: em([pred], gold),  # exact, over answer sets
    "hits1_tog": lambda pred, gold: hits1_tog("{" + pred + "}", gold),  # ToG, PoG, KnowPath, LMP: containment
    "hit_any": lambda pred, gold: hit_any(pred, [pred], gold),  # LMP's Hit / RoG eval_hit: either way
    "answer_recall": lambda pred, gold: answer_recall([pred], gold),  # the gold stated in the evidence
}

CASES = [
    # prediction, gold, metric (its paper's rule), expected
    # floats as Virtuoso prints them (%g, 6 significant digits): the printed side's precision decides
    ("7.69202e+06", "7692024", "hits1", True),
    ("7.69202E6", "7692024", "em", True),
    ("7692024", "7.69202e+06", "hits1", True),  # the gold is the print
    ("7.69202e+06", "7692030", "hits1", False),  # outside the printed precision
    ("7692020", "7692024", "hits1", False),  # both written in full: exact
    ("7.69202e+06", "7692024", "hits1_tog", True),
    ("(Texas, population, 7.69202e+06)", "7692024", "answer_recall", True),
    # the point is not deleted: 1.5 is never 15
    ("1.5", "15", "hits1", False),
    ("15", "1.5", "em", False),
    ("1.5", "15", "hits1_tog", False),
    ("1.5", "15", "hit_any", False),
    ("(X, ratio, 1.5)", "15", "answer_recall", False),
    # thousands separators and a trailing .0 are values too; ints equal floats
    ("7,692,024", "7692024", "hits1", True),
    ("7692024", "7,692,024", "em", True),
    ("about 7,692,024 people", "7692024", "hits1_tog", True),
    ("population 7692024.0", "7,692,024", "hit_any", True),
    ("15.0", "15", "hits1", True),
    ("1.50", "1.5", "em", True),
    # negative numbers keep their sign
    ("-3.5", "3.5", "hits1", False),
    ("-3.5", "-3.50", "hits1", True),
    ("\u22123.5", "-3.5", "em", True),  # a typographic minus
    ("(X, low, -40)", "40", "answer_recall", True),  # substring, as published: "40" is in "-40"
    # dates against years, per rule
    ("1961-08-04", "1961", "hits1", False),  # exact: a year is not a date
    ("1961", "1961-08-04", "em", False),
    ("1961-08-04", "1961", "hits1_tog", True),  # ToG: the gold is in the answer
    ("1961", "1961-08-04", "hits1_tog", True),  # ToG: the answer is in the gold
    ("August 4, 1961", "1961", "hit_any", True),  # gold in the text
    ("1961", "August 4, 1961", "hit_any", True),  # an item within the gold
    ("(Obama, born, 1961-08-04)", "1961", "answer_recall", True),  # the evidence states the year
    ("(Obama, born, 1961)", "1961-08-04", "answer_recall", False),  # the date is not in the evidence
    # dates in other written forms
    ("August 4, 1961", "1961-08-04", "hits1", True),
    ("4 Aug. 1961", "1961-08-04", "em", True),
    ("Aug 4th, 1961", "1961-08-04", "hits1_tog", True),
    ("1961-08-04T00:00:00Z", "1961-08-04", "hits1", True),
    ("August 1961", "1961-08-04", "hits1", False),
    ("August 1961", "1961-08", "em", True),
    ("(Obama, born, 4 August 1961)", "1961-08-04", "answer_recall", True),
    # a number inside other words is not the answer under the exact rule
    ("Apollo 11", "11", "hits1", False),
]


@pytest.mark.parametrize("prediction, gold, metric, expected", CASES)
def test_number_and_date_cases_follow_each_metrics_rule(prediction, gold, metric, expected):
    assert RULES[metric](prediction, [[gold]]) is expected


def test_the_case_table_covers_every_rule_and_at_least_twelve_cases():
    assert len(CASES) >= 12 and {metric for *_, metric, _ in CASES} == set(RULES)


def test_normalize_keeps_a_decimal_point_and_a_minus_sign():
    assert [normalize(t) for t in ("1.5", "-3", "7,692,024", "1961-08-04", "U.S.", "Jay-Z 2", "v1.")] == [
        "1.5",
        "-3",
        "7692024",
        "19610804",
        "us",
        "jayz 2",
        "v1",
    ]


def test_the_reader_sees_whole_values_and_values_in_text():
    assert parse(" 1.5. ") == parse("1.50") and parse("1.5").number == Decimal("1.5")
    assert parse("1961").date == Date(1961) and parse("1961").number == 1961  # a year is both
    assert parse("Aug. 4th, 1961").date == Date(1961, 8, 4) and parse("1961-08").date == Date(1961, 8)
    for not_a_value in ("1.5 km", "Apollo 11", "1961-02-30", "2010-13", "m.06w2sn5", "", "1,5"):
        assert parse(not_a_value) is None, not_a_value
    found = values_in("m.06w2sn5 and g.1234 (B-52) had 7,692,024 on 4 August 1961, -3.5 in 1990-1995")
    assert [v.date or v.number for v in found] == [
        Decimal(7692024),
        Date(1961, 8, 4),
        Decimal("-3.5"),
        Date(1990),
        Date(1995),
    ]
    assert as_printed(Decimal(7692024)) == Decimal("7.69202e6") and as_printed(Decimal(0)) == 0


def test_a_long_gold_list_is_indexed_not_scanned():
    gold = [[str(n), f"{n:,}"] for n in range(1_000_000, 1_005_000)]  # 5,000 answers, 10,000 aliases
    evidence = [f"(x, count, {n})" for n in range(2_000_000, 2_002_000)] + ["(x, count, 1.00499e+06)"]
    assert answer_recall(evidence, gold) and hits1(["1,004,999"], gold) and not hits1(["1.5"], gold)


def test_a_hundred_thousand_gold_aliases_are_deduplicated_in_one_pass():
    """Gold answers deduplicated against a list would hang scoring on a question with 100k
    aliases. 50,000 answers of which 25,000 distinct, and one answer of 50,000 aliases: compared
    with each other that would be ~10^9 set comparisons; indexed, a second or two."""
    repeated = [[f"Answer {i % 25_000}", f"answer {i % 25_000}."] for i in range(50_000)]
    gold = [[f"Alias {i}" for i in range(50_000)], *repeated]
    assert len(prepared(gold).groups) == 25_001
    q = Question(id="q", text="?", answers=gold)
    figures = score(q, Prediction(answer="{Answer 24999}", answers=["Answer 24999", "alias 49999"]))
    assert figures["hits1"] == 1.0 and figures["f1"] == pytest.approx(4 / 25_003)  # 2 of 25,001 answers, each once


# --------------------------------------------------------------------------- on a tiny KG

NS = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
NAME = f"<{NS}type.object.name>"
# Texas's population as Virtuoso prints an xsd:float (a plain literal here: Oxigraph would print the
# float in full), Oklahoma's as an xsd:int, a birth date, and a ratio 1.5 that is not 15.
TRIPLES = f"""
<{NS}m.tx> {NAME} "Texas"@en .
<{NS}m.tx> <{NS}location.statistical_region.population> "7.69202e+06" .
<{NS}m.ok> {NAME} "Oklahoma"@en .
<{NS}m.ok> <{NS}location.statistical_region.population> "3959353"^^<{XSD}int> .
<{NS}m.bo> {NAME} "Barack Obama"@en .
<{NS}m.bo> <{NS}people.person.date_of_birth> "1961-08-04"^^<{XSD}date> .
<{NS}m.x> {NAME} "Gear"@en .
<{NS}m.x> <{NS}engineering.gear.ratio> "1.5"^^<{XSD}decimal> .
"""
POPULATION, BORN = "location.statistical_region.population", "people.person.date_of_birth"


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> EmbeddedKG:
    root = tmp_path_factory.mktemp("values")
    (root / "kg.nt").write_text(TRIPLES)
    return EmbeddedKG(build_store([root / "kg.nt"], "nt", root / "store"))


def _reach(kg, topic, gold):
    return Reacher(kg, "values", None).check(Question("q", "?", {topic: topic}, [[gold]]), Horizon(1))


@pytest.mark.parametrize(
    "topic, gold, literal",
    [
        ("m.tx", "7692024", '"7.69202e+06"'),  # the float print states the gold within its precision
        ("m.tx", "7,692,024", '"7.69202e+06"'),
        ("m.ok", "3959353", '"3959353"'),  # met from the gold side: the typed literal itself
        ("m.ok", "3,959,353", '"3959353"'),
        ("m.bo", "1961", '"1961-08-04"'),  # a full date states a gold year
        ("m.bo", "August 4, 1961", '"1961-08-04"'),
    ],
)
def test_a_gold_number_or_date_is_reached_as_the_literal_the_kg_holds(kg, topic, gold, literal):
    reach = _reach(kg, topic, gold)
    assert (reach.reachable, reach.distance) == (True, 1)
    relation = BORN if topic == "m.bo" else POPULATION
    assert reach.paths == [[Step(topic, relation, "out", literal)]]


def test_a_value_the_kg_does_not_state_is_not_reached(kg):
    assert _reach(kg, "m.x", "15").reachable is None  # "1.5" is not 15 (it was, by deleting the point)
    assert _reach(kg, "m.tx", "7692030").reachable is None  # outside the print's precision
    assert _reach(kg, "m.bo", "1961-08-05").reachable is None


def _answer_call(kg, topic: str, relation: str) -> Trace:
    """A trace whose answer call was shown the topic's one fact, as a KG method would show it."""
    (value,) = kg.neighbors(topic, relation, "out")
    trace = Trace()
    trace.add(
        LLMEvent(
            stage="answer",
            model="m",
            response="",
            temperature=0.0,
            messages=[
                {
                    "role": "user",
                    "content": f"Triples:\n({kg.names([topic])[topic]}, {relation}, {value[1:-1]})\n"
                    "Question: how many?",
                }
            ],
        )
    )
    return trace


def test_a_number_in_the_evidence_shown_counts_as_retrieved(kg):
    texas = _answer_call(kg, "m.tx", POPULATION)
    assert breakdown.shown(texas, [["7692024"]]) and not breakdown.shown(texas, [["7692030"]])
    assert not breakdown.shown(_answer_call(kg, "m.x", "engineering.gear.ratio"), [["15"]])
    obama = _answer_call(kg, "m.bo", BORN)
    assert breakdown.shown(obama, [["1961"]]) and not breakdown.shown(obama, [["1962"]])


def test_the_breakdown_of_a_numeric_question_reads_values(kg):
    question = Question("q", "How many people live in Texas?", {"m.tx": "Texas"}, [["7692024"]])
    evidence = ["(Texas, location.statistical_region.population, 7.69202e+06)"]
    wrong = score(question, Prediction(answer="{7 million}", answers=["7 million"], evidence=evidence))
    right = score(question, Prediction(answer="{7.69202e+06}", answers=["7.69202e+06"], evidence=evidence))
    reach = _reach(kg, "m.tx", "7692024")
    shown = breakdown.shown(_answer_call(kg, "m.tx", POPULATION), question.answers)
    assert wrong["answer_recall"] == 1.0 and breakdown.category("ok", wrong, reach, shown) == "not_answered"
    assert right["hits1"] == 1.0 and breakdown.category("ok", right, reach, shown) == "correct"
