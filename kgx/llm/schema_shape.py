"""A reply schema split into its shape, the same for every question, and its choices, which differ.

Methods ask the LLM to pick among this question's candidates (ToG's ``scored_schema``, CGPE's
phrases, the kit's options), so their schemas carry a per-question ``enum`` of strings and are
never the same twice: a validator cached per schema was rebuilt on every call, 1.1 ms of checking
the schema itself against the metaschema, against 0.5 µs for validating a reply. The
shape replaces each such enum by ``{"type": "string"}``, so it compiles once per method and stage;
membership is then a set lookup at the places the enums were. Accepting a reply when it matches
the shape and each choice is among its enum is exactly what validating against the whole schema
decides, since a string enum holds only for a string that is one of its values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

# A place in a reply: property names from the root, ``EVERY_ITEM`` for each element of an array.
EVERY_ITEM = None
Place = tuple[Optional[str], ...]


@dataclass(frozen=True)
class Shape:
    schema_json: str  # the schema with its choices' enums replaced by {"type": "string"}, sorted keys
    choices: tuple[tuple[Place, frozenset[str]], ...]  # where each enum was, and its values

    def outside(self, value: Any) -> bool:
        """Whether a reply that matches the shape names a choice outside its enum."""
        return any(_outside(value, place, allowed) for place, allowed in self.choices)


def shape_of(schema: dict[str, Any]) -> Shape:
    """The shape of ``schema`` and its choices. Only enums reached from the root through
    ``properties`` and ``items`` are taken out (where a reply's place is plain to follow), and only
    enums of strings with no other ``type``; any other enum stays in the shape."""
    choices: list[tuple[Place, frozenset[str]]] = []
    shape = _strip(schema, (), choices)
    return Shape(json.dumps(shape, sort_keys=True), tuple(choices))


def _strip(sub: Any, place: Place, choices: list[tuple[Place, frozenset[str]]]) -> Any:
    """``sub`` without its choices; ``sub`` itself where it has none (no copy to make)."""
    if not isinstance(sub, dict):
        return sub
    new = sub
    enum = sub.get("enum")
    if isinstance(enum, list) and all(isinstance(v, str) for v in enum) and sub.get("type", "string") == "string":
        new = {**sub, "type": "string"}
        del new["enum"]
        choices.append((place, frozenset(enum)))
    props = sub.get("properties")
    if isinstance(props, dict):
        stripped = {k: _strip(v, (*place, k), choices) for k, v in props.items()}
        if any(stripped[k] is not v for k, v in props.items()):
            new = {**new, "properties": stripped}
    items = sub.get("items")
    if isinstance(items, dict) and "prefixItems" not in sub:
        stripped = _strip(items, (*place, EVERY_ITEM), choices)
        if stripped is not items:
            new = {**new, "items": stripped}
    return new


def _outside(value: Any, place: Place, allowed: frozenset[str]) -> bool:
    """``properties`` applies to objects only, ``items`` to arrays only, as in JSON Schema."""
    if not place:
        return value not in allowed  # a string: the shape says so
    step, rest = place[0], place[1:]
    if step is EVERY_ITEM:
        return isinstance(value, list) and any(_outside(v, rest, allowed) for v in value)
    return isinstance(value, dict) and step in value and _outside(value[step], rest, allowed)
