"""JSON schemas as llama.cpp grammars, with string constants escaped as GBNF needs.

llama-cpp-python 0.3.36 writes an enum or const string into GBNF as ``json.dumps(value)`` with
only quotes and newlines escaped, not backslashes. A value that holds a quote or a backslash (a
KG literal offered as a choice, ``"1961-01-21"``, or a name like ``"Weird Al" Yankovic``) gives a
grammar llama.cpp cannot parse, and the process then dies at the first decode. kgx converts the
schema itself with a converter that escapes backslashes too, and hands llama.cpp the grammar.
"""

from __future__ import annotations

import json
import re
from typing import Any

GBNF_ESCAPES = {"\\": "\\\\", '"': '\\"', "\r": "\\r", "\n": "\\n"}
GBNF_SPECIAL = re.compile(r'[\\"\r\n]')


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + GBNF_SPECIAL.sub(lambda m: GBNF_ESCAPES[m.group(0)], text) + '"'


def gbnf(schema: dict[str, Any]) -> str:
    """The GBNF grammar of ``schema``, as llama-cpp-python's own converter builds it, literals fixed."""
    from llama_cpp import llama_grammar

    class Converter(llama_grammar.SchemaConverter):
        def _format_literal(self, literal: str) -> str:
            return gbnf_literal(literal)

    converter = Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    converter.visit(converter.resolve_refs(json.loads(json.dumps(schema)), "schema"), "")
    return converter.format_grammar()


def grammar(schema: dict[str, Any]) -> Any:
    """A ``LlamaGrammar`` for ``create_chat_completion(grammar=...)``."""
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(gbnf(schema), verbose=False)
