"""Per-question choices are checked without compiling a validator per question.

A schema whose only per-question part is a string enum is validated as its shape (compiled once)
plus a membership check: the verdicts and the wording of a wrong choice must be exactly what
validating against the whole schema gives.
"""

from __future__ import annotations

import json

import jsonschema
import jsonschema_rs
import pytest

from kgx.llm import structured
from kgx.llm.schema_shape import EVERY_ITEM, shape_of
from kgx.llm.structured import parse_json
from kgx.methods.cgpe.prompts import exact_schema, rough_schema
from kgx.methods.kit import choice_schema
from kgx.methods.tog.prompts import scored_schema

LABELS = ["film.film.directed_by", "film.film.written_by", "film.film.starred_actors"]
SCHEMAS = {
    "tog": scored_schema("relations", "relation", LABELS, 1, 2),
    "kit": choice_schema({"entities": ["Garfield", "Peter Hewitt"], "relations": LABELS}, 1, 2),
    "cgpe rough": rough_schema(["Garfield", "Peter Hewitt"]),
    "cgpe exact": exact_schema(["Garfield", "Peter Hewitt"], ["director", "writer"]),
    "array of choices": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1},
    "typed enum": {"type": "object", "properties": {"pick": {"type": "string", "enum": ["a", "b"]}}},
    "mixed enum": {"type": "object", "properties": {"pick": {"enum": ["a", 1, None]}}},  # stays in the shape
    "integer enum": {"type": "object", "properties": {"pick": {"type": "integer", "enum": ["a"]}}},  # ditto
}
REPLIES = [
    None,
    "a",
    "c",
    1,
    [],
    {},
    {"pick": "a"},
    {"pick": "c"},
    {"pick": 1},
    {"pick": None},
    {"relations": []},
    {"relations": [{"relation": "film.film.directed_by", "score": 0.7}]},
    {
        "relations": [
            {"relation": "film.film.directed_by", "score": 0.7},
            {"relation": "film.film.written_by", "score": 0.3},
        ]
    },
    {"relations": [{"relation": "film.film.produced_by", "score": 0.7}]},
    {"relations": [{"relation": "film.film.directed_by", "score": 1.7}]},
    {"relations": [{"relation": 3, "score": 0.7}]},
    {"relations": [{"score": 0.7}]},
    {"relations": "film.film.directed_by"},
    {"entities": ["Garfield"], "relations": ["film.film.written_by"]},
    {"entities": ["Garfield"], "relations": ["film.film.produced_by"]},
    {"entities": ["Jon Arbuckle"], "relations": ["film.film.written_by"]},
    {"entities": [], "relations": ["film.film.written_by"]},
    {"entities": "Garfield", "relations": ["film.film.written_by"]},
    {"scores": [{"candidate": "Garfield", "score": 7}]},
    {"scores": [{"candidate": "Odie", "score": 7}]},
    {"scores": [{"candidate": "Garfield", "score": 11}]},
    {"scores": [{"candidate": "Garfield", "score": 7}, {"candidate": "Odie", "score": 11}]},
    {"matches": [{"candidate": "Peter Hewitt", "clue": "director"}]},
    {"matches": [{"candidate": "Peter Hewitt", "clue": "actor"}]},
    {"matches": [{"candidate": "Peter Hewitt"}]},
]


def whole_schema_error(schema: dict, value: object) -> str | None:
    """What validating against the whole schema says (in sorted-key order, which decides which of
    two errors jsonschema names, as kgx always had it): None when it accepts ``value``."""
    schema = json.loads(json.dumps(schema, sort_keys=True))
    validator = jsonschema.validators.validator_for(schema)(schema)
    if validator.is_valid(value):
        return None
    return jsonschema.exceptions.best_match(validator.iter_errors(value)).message


@pytest.mark.parametrize("name", SCHEMAS)
def test_verdicts_and_wording_are_those_of_the_whole_schema(name):
    schema = SCHEMAS[name]
    got, expected = [], []
    for reply in REPLIES:
        value = reply if isinstance(reply, (dict, list)) else [reply]  # parse_json reads objects and arrays
        try:
            parse_json(json.dumps(value), schema)
            got.append(None)
        except ValueError as exc:
            got.append(str(exc).removeprefix("output does not match the schema: "))
        expected.append(whole_schema_error(schema, value))
    assert got == expected
    assert any(e is None for e in expected) and any(e for e in expected)  # both sides of every schema


def test_a_wrong_choice_names_the_choice_and_its_options():
    with pytest.raises(ValueError, match=r"'film.film.produced_by' is not one of \['film.film.directed_by', "):
        parse_json('{"relations": [{"relation": "film.film.produced_by", "score": 0.5}]}', SCHEMAS["tog"])


def test_the_shape_has_the_choices_taken_out_and_knows_where_they_were():
    shape = shape_of(SCHEMAS["tog"])
    assert "enum" not in shape.schema_json
    assert shape.choices == ((("relations", EVERY_ITEM, "relation"), frozenset(LABELS)),)
    assert shape_of(SCHEMAS["mixed enum"]).choices == ()
    assert '"enum": ["a", 1, null]' in shape_of(SCHEMAS["mixed enum"]).schema_json


def test_schemas_that_differ_only_in_their_choices_compile_once(monkeypatch):
    compiled = []

    def counting(schema, *args, **kwargs):
        compiled.append(schema)
        return original(schema, *args, **kwargs)

    original = jsonschema_rs.validator_for
    monkeypatch.setattr(jsonschema_rs, "validator_for", counting)
    structured._validator.cache_clear()
    for question in range(50):
        labels = [f"relation.{question}.{i}" for i in range(5)]
        schema = scored_schema("relations", "relation", labels, 1, 3)
        reply = {"relations": [{"relation": labels[question % 5], "score": 1.0}]}
        assert parse_json(json.dumps(reply), schema) == reply
        with pytest.raises(ValueError, match="is not one of"):
            parse_json(json.dumps({"relations": [{"relation": "relation.x", "score": 1.0}]}), schema)
    assert len(compiled) == 1
    assert structured._validator.cache_info().misses == 1


def test_a_schema_that_is_not_json_schema_is_kgxs_fault_not_the_replys():
    """The shape is checked against its metaschema once, by jsonschema-rs; a bad schema raises
    SchemaError (a method's bug, surfaced), never the ValueError that makes a reply retried."""
    structured._validator.cache_clear()
    bad = {"type": "object", "properties": {"answers": {"type": "strin"}}}
    for _ in range(2):  # a failed build is not cached as a validator
        with pytest.raises(jsonschema.SchemaError, match="not a valid JSON schema: .*strin"):
            parse_json('{"answers": "x"}', bad)
    assert not isinstance(jsonschema.SchemaError("x"), ValueError)
