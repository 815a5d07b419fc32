"""Freebase conventions shared by every backend: namespace, ids, escaping, relation filters.

Every backend holds the same Freebase-shaped RDF (``http://rdf.freebase.com/ns/``,
``type.object.name`` labels, unnamed CVT nodes), so one set of queries serves an embedded store,
a local ``oxigraph serve`` and a real Freebase Virtuoso/QLever endpoint alike. Queries use full
IRIs only: Oxigraph rejects prefixed names with inner dots (``ns:type.object.name``).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Literal, Protocol

NS = "http://rdf.freebase.com/ns/"
NAME = NS + "type.object.name"
Direction = Literal["out", "in"]
DIRECTIONS: tuple[Direction, ...] = ("out", "in")

# Freebase mids and dotted schema ids; anything else never reaches a query string.
_ID = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")


class KGError(RuntimeError):
    """A KG that cannot answer: unreachable endpoint, failed query; the message names it."""


def iri(fb_id: str) -> str:
    """``<http://rdf.freebase.com/ns/ID>`` for a validated Freebase id."""
    if not isinstance(fb_id, str) or not _ID.match(fb_id):
        raise ValueError(f"not a Freebase id: {fb_id!r}")
    return f"<{NS}{fb_id}>"


def literal(text: str) -> str:
    """A SPARQL string literal for arbitrary text (search terms may come from a model)."""
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    )
    return f'"{escaped}"'


def check_direction(direction: str) -> Direction:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'out' or 'in', not {direction!r}")
    return direction  # type: ignore[return-value]


@functools.lru_cache(maxsize=1 << 16)
def keep_relation(relation: str, filters: tuple[str, ...]) -> bool:
    """Whether no filter glob matches ``relation``; memoised, because every relations() call asks
    it of each relation it finds and a KG has only thousands of relations (Freebase ~7k in RoG)."""
    return not any(fnmatch.fnmatchcase(relation, pattern) for pattern in filters)


def is_literal(node: str) -> bool:
    """Neighbours that are literals are returned quoted (``"1961-01-20"``); ids never are."""
    return node.startswith('"')


class KG(Protocol):
    """What methods see of a knowledge graph, whatever backend holds it."""

    def relations(self, entity: str, direction: Direction) -> list[str]: ...

    def neighbors(self, entity: str, relation: str, direction: Direction) -> list[str]: ...

    def names(self, ids: list[str]) -> dict[str, str]: ...

    def types(self, ids: list[str]) -> dict[str, str]: ...

    def search(self, text: str, limit: int = 10) -> list[str]: ...
