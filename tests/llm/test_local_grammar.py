"""The grammar kgx builds for the local model: string constants escaped the GBNF way."""

from __future__ import annotations

import pytest

from kgx.llm.local_grammar import gbnf, gbnf_literal

pytest.importorskip("llama_cpp")


def test_quotes_backslashes_and_newlines_are_escaped():
    assert gbnf_literal("plain") == r'"plain"'
    assert gbnf_literal('say "hi"') == r'"say \"hi\""'
    assert gbnf_literal("a\\b\n") == r'"a\\b\n"'


def test_an_enum_of_literals_becomes_one_alternative_per_value():
    rules = gbnf({"type": "object", "properties": {"v": {"enum": ['"2018"', "x"]}}, "required": ["v"]})
    # the JSON text of '"2018"' is "\"2018\"": every backslash and quote of it escaped once more
    assert r'v ::= "\"\\\"2018\\\"\"" | "\"x\""' in rules
