"""Pins each scoring rule in kgx.core.metrics on hand-made cases."""

from __future__ import annotations

import pytest

from kgx.core.metrics import (
    QUESTION_METRICS,
    answer_recall,
    complete_match,
    em,
    f1,
    hit_any,
    hits1,
    hits1_tog,
    normalize,
    partial_match,
    score,
)
from kgx.core.types import Prediction, Question
from kgx.results.record import Record

OBAMA = [["Barack Obama", "Obama", "Barack Hussein Obama II"]]
# Three gold answers, with aliases.
LANGS = [["English", "English Language"], ["Spanish", "Español"], ["French"]]


# --------------------------------------------------------------------------- normalize


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The Beatles", "beatles"),
        ("  A  Tale of   Two Cities ", "tale of two cities"),
        ("An apple, the pear & a plum!", "apple pear plum"),
        ("U.S.", "us"),
        ("Barack_Obama", "barackobama"),
        ("Theatre", "theatre"),  # "the" only as a whole word
        ("Anne", "anne"),
        ("St. John's", "st johns"),
        ("", ""),
        ("the", ""),
        ("...", ""),
        ("Line\nbreak\ttab", "line break tab"),
    ],
)
def test_normalize(text, expected):
    assert normalize(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1.5 and -3", "1.5 and -3"),
        ("7,692,024", "7692024"),
        ("2003-04-05", "20030405"),
        ("5,.3", "53"),  # the point's neighbour is the comma in the text as given
        ("b'-5", "b-5"),  # the dash follows no word character there: it starts a number
        ("x-1 .5 5. -.5", "x1 5 5 5"),
        ("the 2 a-team", "2 ateam"),
    ],
)
def test_normalize_keeps_a_numbers_point_and_sign(text, expected):
    assert normalize(text) == expected


def test_normalize_equals_the_one_pass_rule_on_random_text():
    """The rule as one substitution (each mark decided where it stands, articles as whole words)
    against ``normalize``, which splits it for speed, on text built of the characters that matter."""
    import random
    import re
    import string

    punct = re.compile(r"(?!(?<=\d)\.\d)(?!(?<!\w)-\d)[" + re.escape(string.punctuation) + "]")
    articles = re.compile(r"\b(a|an|the)\b")

    def rule(text: str) -> str:
        return " ".join(articles.sub(" ", punct.sub("", text.lower())).split())

    rng = random.Random(35)
    alphabet = ["a", "an", "the", "t", "he", "n", "x", "_", "é", "’", "«", " ", "\n", "1", "5", ".", "-", ",", "'"]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) + "0"  # a digit: the slow path
        assert normalize(text) == rule(text), text


# --------------------------------------------------------------------------- hits1


@pytest.mark.parametrize(
    "answers, gold, expected",
    [
        (["Barack Obama"], OBAMA, True),
        (["obama"], OBAMA, True),  # alias, case
        (["the Barack Obama."], OBAMA, True),  # article + punctuation
        (["Barack Hussein Obama, II"], OBAMA, True),
        (["Michelle Obama"], OBAMA, False),  # containment is not equality
        (["Barack"], OBAMA, False),
        (["Joe Biden", "Barack Obama"], OBAMA, False),  # only the FIRST answer counts
        (["French", "Joe Biden"], LANGS, True),  # any gold answer
        (["ESPAÑOL"], LANGS, True),  # unicode lowercasing
        (["Espanol"], LANGS, False),  # accents are not folded
        ([], OBAMA, False),
        ([""], OBAMA, False),
        (["   "], OBAMA, False),
        (["the"], [["The"]], False),  # normalises to "" on both sides: never a match
        (["Obama"], [], False),
    ],
)
def test_hits1(answers, gold, expected):
    assert hits1(answers, gold) is expected


def test_hits1_bare_string_gold_is_one_alias_not_characters():
    # ["Obama"] must not be read as the aliases "O", "b", "a", ...
    assert hits1(["b"], ["Obama"]) is False
    assert hits1(["Obama"], ["Obama"]) is True


# --------------------------------------------------------------------------- hits1_tog


@pytest.mark.parametrize(
    "text, gold, expected",
    [
        ("The answer is {Barack Obama}.", OBAMA, True),
        ("{barackobama}", OBAMA, True),  # spaces removed on both sides
        ("{BARACK  OBAMA}", OBAMA, True),
        ("{Obama}", [["Barack Obama"]], True),  # prediction inside gold
        ("{Barack Obama, 44th president}", [["Barack Obama"]], True),  # gold inside prediction
        ("{Obama.}", [["Obama"]], True),  # punctuation kept, but containment
        ("{Joe Biden}", OBAMA, False),
        ("{French} and {Barack Obama}", OBAMA, False),  # first braces only
        ("{Barack Obama} and {French}", OBAMA, True),
        ("Barack Obama was president.", OBAMA, True),  # no braces: whole text
        ("I think it was Joe Biden.", OBAMA, False),
        ("{Spanish}", LANGS, True),  # any gold answer
        ("{Barack Obama", OBAMA, True),  # unclosed brace: rest of the text
        ("} {Barack Obama}", OBAMA, True),  # stray closing brace before the group
        # Traps ToG's own code counts as hits:
        ("", OBAMA, False),
        ("{}", OBAMA, False),
        ("{ }", OBAMA, False),
        ("The answer is {}.", OBAMA, False),
        ("{Yes}", OBAMA, False),
        ("{No}", OBAMA, False),
        ("{yes.}", OBAMA, False),
        ("Yes", [["Yesenia"]], False),  # bare verdict, would be contained in the gold alias
        ("{Yes}", [["Yesenia"]], False),
        # A leading verdict followed by a real answer: the real answer is scored.
        ("{Yes}. The answer is {Barack Obama}.", OBAMA, True),
        ("{Yes}. The answer is {Joe Biden}.", OBAMA, False),
        # Verdicts count when the gold literally is yes/no.
        ("{Yes}", [["Yes"]], True),
        ("{No}", [["yes"]], False),
        ("{no}", [["No"]], True),
        # Empty gold aliases never match.
        ("{anything}", [[""]], False),
        ("{anything}", [], False),
    ],
)
def test_hits1_tog(text, gold, expected):
    assert hits1_tog(text, gold) is expected


def test_hits1_tog_short_prediction_containment_is_kept():
    # Part of ToG's published rule: a very short prediction hits through containment.
    assert hits1_tog("{1}", [["1961"]]) is True
    assert hits1_tog("{a}", [["Barack Obama"]]) is True
    # hits1 is the strict counterpart.
    assert hits1(["1"], [["1961"]]) is False


# --------------------------------------------------------------------------- hit_any


@pytest.mark.parametrize(
    "text, answers, gold, expected",
    [
        # gold alias inside the output text
        ("I believe it was Barack Obama.", [], OBAMA, True),
        ("THE OBAMA administration", [], OBAMA, True),  # alias "Obama", normalised
        ("It was Joe Biden.", ["Joe Biden"], OBAMA, False),
        ("Languages: French, German", [], LANGS, True),
        # list item inside a gold alias
        ("", ["Obama"], [["Barack Obama"]], True),
        ("no idea", ["Joe Biden", "Barack"], OBAMA, True),  # any item
        ("", ["The Barack Obama!"], OBAMA, True),
        # empty items never match (they are substrings of everything)
        ("", [""], OBAMA, False),
        ("", ["  "], OBAMA, False),
        ("", ["the", "."], OBAMA, False),
        ("", [], OBAMA, False),
        # item containing the gold (not item-in-gold) is caught via the text only
        ("", ["Barack Obama Jr"], [["Barack Obama"]], False),
        ("Barack Obama Jr", ["Barack Obama Jr"], [["Barack Obama"]], True),
        # no usable gold
        ("anything", ["anything"], [], False),
        ("anything", ["anything"], [["the"]], False),
    ],
)
def test_hit_any(text, answers, gold, expected):
    assert hit_any(text, answers, gold) is expected


def test_hit_any_plain_substring_consequences():
    # Consequences of LMP's plain substring matching, pinned on purpose.
    assert hit_any("a business deal", [], [["US"]]) is True  # "us" in "business"
    assert hit_any("born in 1995", [], [["5"]]) is True
    assert hit_any("", ["x"], [["Xbox"]]) is True  # one-character item in gold
    # Strict rules reject the same cases.
    assert hits1(["business"], [["US"]]) is False
    assert em(["x"], [["Xbox"]]) is False


# --------------------------------------------------------------------------- em / f1


@pytest.mark.parametrize(
    "answers, gold, expected_em, expected_f1",
    [
        (["Barack Obama"], OBAMA, True, 1.0),
        (["Obama", "barack obama", "OBAMA"], OBAMA, True, 1.0),  # aliases and duplicates
        (["English", "Spanish", "French"], LANGS, True, 1.0),
        (["french", "English Language", "español"], LANGS, True, 1.0),
        # 2 of 3 gold with 1 wrong prediction: P = R = 2/3.
        (["English", "Spanish", "German"], LANGS, False, 2 / 3),
        # 2 of 3 gold, no wrong prediction: P = 1, R = 2/3, F1 = 0.8.
        (["English", "Spanish"], LANGS, False, 0.8),
        # all 3 gold plus 1 wrong: P = 3/4, R = 1, F1 = 6/7.
        (["English", "Spanish", "French", "German"], LANGS, False, 6 / 7),
        # 1 of 3 gold, 3 wrong: P = 1/4, R = 1/3, F1 = 2/7.
        (["French", "German", "Italian", "Dutch"], LANGS, False, 2 / 7),
        (["German"], LANGS, False, 0.0),
        # Empty strings are ignored, not counted as wrong predictions.
        (["Barack Obama", "", "  "], OBAMA, True, 1.0),
        # Partial strings are not matches.
        (["Obama administration"], OBAMA, False, 0.0),
        # Empty-set convention (SQuAD v2 no-answer).
        ([], OBAMA, False, 0.0),
        ([""], OBAMA, False, 0.0),
        (["Obama"], [], False, 0.0),
        ([], [], True, 1.0),
        ([], [["", "the"]], True, 1.0),  # gold with no usable alias counts as empty
    ],
)
def test_em_f1(answers, gold, expected_em, expected_f1):
    assert em(answers, gold) is expected_em
    assert f1(answers, gold) == pytest.approx(expected_f1)


def test_f1_brief_example_value():
    assert round(f1(["English", "Spanish", "German"], LANGS), 3) == 0.667


def test_em_f1_two_aliases_of_one_answer_are_both_correct():
    # Precision 2/2 (both are aliases of gold answer 1), recall 1/2.
    gold = [["Barack Obama", "Obama"], ["Joe Biden"]]
    assert em(["Obama", "Barack Obama"], gold) is False
    assert f1(["Obama", "Barack Obama"], gold) == pytest.approx(2 / 3)


def test_em_f1_duplicate_gold_answers_count_once():
    gold = [["Paris"], ["paris."], ["Lyon"]]
    assert f1(["Paris"], gold) == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert em(["Paris", "Lyon"], gold) is True


# --------------------------------------------------------------------------- answer_recall


@pytest.mark.parametrize(
    "evidence, gold, expected",
    [
        (["(Hawaii, people.person.place_of_birth, Barack Obama)"], OBAMA, True),
        (["Obama was born in Honolulu."], OBAMA, True),
        (["(m.02mjmr, born_in, Honolulu)", "The 44th president, OBAMA!"], OBAMA, True),
        (["(Joe Biden, vice_president_of, United States)"], OBAMA, False),
        (["(Spain, official_language, Spanish)"], LANGS, True),
        ([], OBAMA, False),
        ([""], OBAMA, False),
        (["anything"], [], False),
        (["anything"], [[""]], False),
        # Items are tested one by one, never joined.
        (["Barack", "Obama Sr."], [["Barack Obama"]], False),
        # Punctuation is deleted, so underscores glue words together.
        (["(Barack_Obama, profession, Lawyer)"], [["Barack Obama"]], False),
        # Plain substring: a short alias hits inside a longer word.
        (["(Apple, industry, business)"], [["US"]], True),
    ],
)
def test_answer_recall(evidence, gold, expected):
    assert answer_recall(evidence, gold) is expected


# --------------------------------------------------------------------------- score


def _question(answers=None):
    return Question(id="q1", text="Who was the 44th US president?", answers=answers or OBAMA)


def test_question_metrics_names():
    assert QUESTION_METRICS == (
        "hits1",
        "hits1_tog",
        "hit_any",
        "em",
        "f1",
        "partial_match",
        "complete_match",
        "answer_recall",
    )


@pytest.mark.parametrize(
    "answers, partial, complete",
    [
        (["Spanish"], True, False),  # one of three gold answers
        (["English Language", "Español", "French", "German"], True, True),  # all, an extra tolerated
        (["German", "Italian"], False, False),
        ([], False, False),
        (["english", "ENGLISH", "spanish"], True, False),  # duplicates count once
    ],
)
def test_partial_and_complete_match(answers, partial, complete):
    assert partial_match(answers, LANGS) is partial
    assert complete_match(answers, LANGS) is complete


def test_complete_match_needs_a_gold_answer():
    assert complete_match(["anything"], []) is False and partial_match([], []) is False


def test_score_all_hits():
    pred = Prediction(
        answer="The answer is {Barack Obama}.",
        answers=["Barack Obama"],
        evidence=["(United States, president, Barack Obama)"],
    )
    assert score(_question(), pred) == {name: 1.0 for name in QUESTION_METRICS}


def test_score_mixed():
    pred = Prediction(
        answer="{English, Spanish}",
        answers=["English", "Spanish", "German"],
        evidence=["(Mexico, official_language, Spanish)"],
        status="fallback",  # scored normally
    )
    s = score(_question(LANGS), pred)
    assert list(s) == list(QUESTION_METRICS)
    assert s["hits1"] == 1.0
    assert s["hits1_tog"] == 1.0  # "english,spanish" contains "english"
    assert s["hit_any"] == 1.0
    assert s["em"] == 0.0
    assert s["f1"] == pytest.approx(2 / 3)
    assert s["partial_match"] == 1.0 and s["complete_match"] == 0.0  # French is missing
    assert s["answer_recall"] == 1.0
    assert all(isinstance(v, float) for v in s.values())


def test_score_misses_and_tog_traps():
    pred = Prediction(answer="{Yes}", answers=[], evidence=["(Joe Biden, vp, US)"])
    assert score(_question(), pred) == {name: 0.0 for name in QUESTION_METRICS}


def test_score_error_status_is_zero_everywhere():
    pred = Prediction(
        answer="{Barack Obama}",
        answers=["Barack Obama"],
        evidence=["Barack Obama"],
        status="error",
        reason="timeout",
    )
    assert score(_question(), pred) == {name: 0.0 for name in QUESTION_METRICS}


# --------------------------------------------------------------------------- per run

# The figures every run logs, whatever its method (per-stage and stat.* figures come on top).
RUN_METRICS: tuple[str, ...] = (
    *QUESTION_METRICS,
    "llm_calls_per_q",
    "input_tokens_per_q",
    "output_tokens_per_q",
    "total_tokens_per_q",
    "latency_s_per_q",
    "latency_s_p95",
    "cost_usd",
    "billed_calls",
    "cached_calls",
    "billed_tokens",
    "parse_failures",
    "truncated",
    "retries",
    "kg_queries_per_q",
    "kg_latency_s_per_q",
    "kg_capped_per_q",
    "fallback_rate",
    "errors",
    "errors.infra",
    "n_questions",
    "wall_s",
)


def _record(
    hit: float,
    calls: int,
    tokens_in: int,
    latency: float,
    *,
    status="ok",
    unpriced=0,
    cost=0.01,
    cached=0,
    stage="answer",
):
    usage = {
        "calls": calls,
        "billed_calls": calls - cached,
        "cached_calls": cached,
        "input_tokens": tokens_in,
        "output_tokens": 10,
        "billed_input_tokens": tokens_in if not cached else 0,
        "billed_output_tokens": 10 if not cached else 0,
        "latency_s": latency,
        "cost_usd": cost,
        "unpriced_calls": unpriced,
        "retries": 1,
        "parse_failures": 0,
    }
    scores = {name: hit for name in QUESTION_METRICS}
    stats = {"rounds": float(calls)} if stage == "select" else {}
    return Record.from_dict(
        {
            "id": f"q{hit}{calls}",
            "scores": scores,
            "usage": usage,
            "stages": {stage: usage},
            "latency_s": latency,
            "status": status,
            "prediction": {"answer": "", "stats": stats},
            "kg": {"queries": calls * 2, "latency_s": 0.01 * calls, "errors": 0, "capped": calls - 2},
        }
    )


def test_summarize_averages_over_every_question_errors_included():
    from kgx.results.figures import summarize

    records = [
        _record(1.0, 2, 100, 1.0),
        _record(0.0, 4, 300, 3.0, status="error", cached=4),
        _record(1.0, 3, 200, 2.0, stage="select", status="fallback"),
    ]
    s = summarize(records, wall_s=5.5)
    assert set(RUN_METRICS) <= set(s)
    assert s["hits1"] == pytest.approx(200 / 3) and s["errors"] == 1 and s["n_questions"] == 3
    assert s["llm_calls_per_q"] == 3 and s["input_tokens_per_q"] == 200 and s["total_tokens_per_q"] == 210
    assert s["latency_s_per_q"] == 2.0 and s["latency_s_p95"] == 3.0
    assert s["billed_calls"] == 5 and s["cached_calls"] == 4 and s["billed_tokens"] == 320
    assert s["cost_usd"] == pytest.approx(0.03) and s["retries"] == 3 and s["wall_s"] == 5.5
    assert s["llm_calls_per_q.answer"] == 2 and s["llm_calls_per_q.select"] == 1
    assert s["kg_queries_per_q"] == 6 and s["kg_latency_s_per_q"] == pytest.approx(0.03)
    assert s["fallback_rate"] == pytest.approx(100 / 3) and s["kg_capped_per_q"] == 1
    assert s["stat.rounds"] == 1.0  # 3 rounds on one question of three, missing counts as 0


def test_summarize_reports_unknown_cost_as_nan():
    import math

    from kgx.results.figures import summarize

    assert math.isnan(summarize([_record(1.0, 1, 10, 0.1, unpriced=1)], 1.0)["cost_usd"])


def test_p95_is_nearest_rank():
    from kgx.results.figures import p95

    assert p95(list(range(1, 21))) == 19 and p95([4.0]) == 4.0 and p95([]) == 0.0
