"""The question loop's fast paths give what the slow ones gave.

Replies are checked by jsonschema-rs and only worded by jsonschema, and the scripted backbone
counts tokens with litellm's counting built once: both must decide and count exactly as before.
"""

from __future__ import annotations

import itertools
import json
import random

import jsonschema
import litellm
import pytest

from kgx.llm.scripted import TOKEN_MODEL, count_prompt, count_text
from kgx.llm.structured import parse_json
from kgx.methods.answers import answers_schema

# Every keyword kgx's schemas use: type, properties, required, items, enum, min/maxItems,
# min/maxLength, minimum/maximum.
SCHEMAS = [
    {"type": "object", "properties": {"answers": answers_schema()}, "required": ["answers"]},
    {
        "type": "object",
        "properties": {
            "choice": {"type": "string", "enum": ["a", "b"]},
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "depth": {"type": "integer", "minimum": 1, "maximum": 3},
            "done": {"type": "boolean"},
        },
        "required": ["choice", "score"],
    },
    {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}, "minItems": 1, "maxItems": 2},
    {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 4}}},
    },
]
VALUES = [
    None,
    True,
    False,
    0,
    1,
    1.0,
    2,
    0.5,
    -1,
    3,
    4,
    "",
    "a",
    "b",
    "x",
    "ab",
    "é€ab",
    "abcde",
    [],
    ["x"],
    ["x", "y"],
    ["x", "y", "z"],
    ["w"],
    [1],
    {},
    {"answers": []},
    {"answers": ["Mark Twain"]},
    {"answers": [""]},
    {"answers": ["x" * 121]},
    {"answers": ["a"] * 6},
    {"answers": "Mark Twain"},
    {"choice": "a", "score": 0.5},
    {"choice": "c", "score": 0.5},
    {"choice": "a", "score": 1.5},
    {"choice": "a", "score": True},
    {"choice": "a", "score": 1, "depth": 1.0},
    {"choice": "a", "score": 1, "depth": 2.5},
    {"choice": "a", "score": 1, "done": 0},
    {"choice": "a"},
    {"facts": ["ab", "abcd"]},
    {"facts": ["a"]},
    {"facts": ["abcde"]},
    {"facts": ["é€"]},
]


def python_verdict(schema: dict, value: object) -> bool:
    return jsonschema.validators.validator_for(schema)(schema).is_valid(value)


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_replies_are_accepted_and_refused_as_jsonschema_decides(schema):
    verdicts = []
    for value in VALUES:
        try:
            parse_json(json.dumps(value) if isinstance(value, (dict, list)) else json.dumps([value]), schema)
            verdicts.append(True)
        except ValueError:
            verdicts.append(False)
    expected = [python_verdict(schema, v if isinstance(v, (dict, list)) else [v]) for v in VALUES]
    assert verdicts == expected
    assert any(expected) and not all(expected)  # the values test both sides of every schema


def test_a_refused_reply_is_still_worded_by_jsonschema():
    with pytest.raises(ValueError, match=r"output does not match the schema: 'c' is not one of \['a', 'b'\]"):
        parse_json('{"choice": "c", "score": 0.5}', SCHEMAS[1])


PROMPTS = [
    [{"role": "user", "content": "Question: who directed Garfield?"}],
    [
        {"role": "system", "content": "You answer from the facts."},
        {"role": "user", "content": "Facts:\nGarfield -film.film.directed_by-> Peter Hewitt\nQuestion: who?"},
    ],
    [
        {"role": "user", "content": "é€ " * 50},
        {"role": "assistant", "content": "{x}"},
        {"role": "user", "content": "again", "name": "kgx"},
    ],
    [{"role": "user", "content": "long " * 40_000}],  # past litellm's exact-count limit: extrapolated alike
]


@pytest.mark.parametrize("messages", PROMPTS, ids=range(len(PROMPTS)))
def test_the_scripted_backbone_counts_tokens_as_litellm_does(messages):
    assert count_prompt(messages) == litellm.token_counter(model=TOKEN_MODEL, messages=messages)
    for text in itertools.chain((m["content"] for m in messages), ["", "{Peter Hewitt}"]):
        assert count_text(text) == litellm.token_counter(model=TOKEN_MODEL, text=text, count_response_tokens=True)


def test_counting_line_by_line_is_litellms_count_of_the_chunk():
    """Lines after a line break are counted apart (``scripted._count_chunk``): on texts mixing
    line breaks, spaces, punctuation, digits, contractions and non-Latin script, the count is
    litellm's."""
    rng = random.Random(35)
    parts = list("abc XYZ.,;:'\"\n\r\t 0123456789é€中-_()[]{}") + ["'s", "'ll", "\n\n", " \n", "\t\n", ".\n", "\u00a0"]
    for _ in range(300):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 2500)))
        assert count_text(text) == litellm.token_counter(model=TOKEN_MODEL, text=text, count_response_tokens=True)
