"""Freebase conventions shared by every backend: namespace, ids, the query protocol."""
from __future__ import annotations

import re
from typing import Literal, Protocol

NS = "http://rdf.freebase.com/ns/"
NAME = NS + "type.object.name"
Direction = Literal["out", "in"]

# Freebase mids and dotted schema ids; anything else never reaches a query string.
_ID = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")


def iri(fb_id: str) -> str:
    """``<http://rdf.freebase.com/ns/ID>`` for a validated Freebase id."""
    if not _ID.match(fb_id):
        raise ValueError(f"not a Freebase id: {fb_id!r}")
    return f"<{NS}{fb_id}>"


class KG(Protocol):
    def relations(self, entity: str, direction: Direction) -> list[str]: ...

    def neighbors(self, entity: str, relation: str, direction: Direction) -> list[str]: ...

    def names(self, ids: list[str]) -> dict[str, str]: ...
