"""The scripted backbone's numbers: prompt-derived, in range, and scored selections adding up to 1."""

from __future__ import annotations

import json

import pytest

from kgx.llm.scripted import instance, reply
from kgx.llm.structured import parse_json

QUESTION = "which person directed the movies starred by John Krasinski"
RELATIONS = [
    "film.film.genre (reverse)",
    "film.film.directed_by (reverse)",
    "film.film.starring (reverse)",
    "film.film.written_by (reverse)",
]


def scored(choices: list[str], max_items: int | None = None, min_items: int = 1) -> dict:
    item = {
        "type": "object",
        "required": ["relation", "score"],
        "properties": {"relation": {"enum": choices}, "score": {"type": "number", "minimum": 0, "maximum": 1}},
    }
    schema = {"type": "array", "items": item, "minItems": min_items}
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def test_scored_choices_are_distinct_ranked_by_overlap_and_add_up_to_one():
    out = instance(scored(RELATIONS, 3), "prompt", QUESTION)
    # "directed" overlaps the question; the others tie at zero and keep their order
    assert [o["relation"] for o in out] == [
        "film.film.directed_by (reverse)",
        "film.film.genre (reverse)",
        "film.film.starring (reverse)",
    ]
    assert [o["score"] for o in out] == [0.5, 0.25, 0.25]


def test_every_choice_is_scored_when_the_array_must_hold_them_all():
    out = instance(scored(RELATIONS, 4, 4), "prompt", QUESTION)
    assert sorted(o["relation"] for o in out) == sorted(RELATIONS)
    assert sum(o["score"] for o in out) == pytest.approx(1.0)


def test_many_choices_still_add_up_to_one_in_hundredths():
    choices = [f"entity {i}" for i in range(150)]
    out = instance(scored(choices), "prompt", "what about entity 7")
    cents = [round(o["score"] * 100) for o in out]
    assert len(out) == 150 and sum(cents) == 100 and min(cents) >= 0
    assert out[0]["relation"] == "entity 7" and cents[0] == max(cents)


def test_a_scored_reply_passes_its_own_schema():
    schema = {"type": "object", "required": ["relations"], "properties": {"relations": scored(RELATIONS, 2)}}
    text = reply([{"role": "user", "content": f"Relations: ...\nQuestion: {QUESTION}"}], schema)
    assert parse_json(text, schema) == json.loads(text)
    assert sum(r["score"] for r in json.loads(text)["relations"]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "schema, prompt, value",
    [
        ({"type": "number", "minimum": 0, "maximum": 1}, "Movies by John Krasinski:\nQuestion: " + QUESTION, 0.5),
        ({"type": "number", "minimum": 0, "maximum": 1}, "Question: " + QUESTION, 0.0),
        ({"type": "number", "minimum": 2}, "person movies starred directed John Krasinski\nQuestion: " + QUESTION, 3.0),
        ({"type": "integer", "minimum": 1, "maximum": 11}, "Krasinski movies\nQuestion: " + QUESTION, 4),
        ({"type": "integer", "minimum": 1}, "Krasinski movies\nQuestion: " + QUESTION, 1),
    ],
)
def test_numbers_are_the_share_of_question_words_the_prompt_mentions(schema, prompt, value):
    # question words: person directed movies starred john krasinski (6)
    assert instance(schema, prompt, QUESTION) == value
