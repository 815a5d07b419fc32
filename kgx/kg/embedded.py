"""The KG in-process: a pyoxigraph store in a directory, bulk-loaded once, then opened read-only
so that any number of threads and worker processes can query it at once.

The one-hop calls every method makes most (``relations``, ``neighbors``, names) read the store's
index directly (``quads_for_pattern``) instead of parsing, planning and running a SPARQL query
and building a dict per row: the same triples at a fraction of the cost (issue 35). Where the
SPARQL would order terms by rules of its own (literals, blank nodes among the neighbours) or
deduplicate across graphs, the query runs as before, so the answers stay exactly those of
``SparqlKG`` (tests/kg/test_embedded_paths.py checks both paths side by side).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pyoxigraph as ox

from kgx.kg.freebase import NAME, NS, Direction, check_direction, iri, is_literal, keep_relation
from kgx.kg.sparql import SparqlKG, Term, english_first

OxTerm = ox.NamedNode | ox.Literal | ox.BlankNode
NAME_NODE = ox.NamedNode(NAME)


def _term(value: OxTerm) -> Term:
    if isinstance(value, ox.Literal):
        return Term("literal", value.value, value.language or "")
    return Term("iri" if isinstance(value, ox.NamedNode) else "bnode", value.value)


def _node(value: OxTerm) -> str:
    """``node(_term(value))`` without the Term: an id in the namespace, a quoted literal value."""
    if isinstance(value, ox.Literal):
        return '"' + value.value + '"'
    text = value.value
    return text[len(NS) :] if isinstance(value, ox.NamedNode) and text.startswith(NS) else text


def solution_rows(solutions: ox.QuerySolutions) -> list[dict[str, Term]]:
    """A SELECT's solutions as rows of terms, unbound variables left out."""
    names = [v.value for v in solutions.variables]
    return [{n: _term(v) for n, v in zip(names, row) if v is not None} for row in solutions]


class EmbeddedKG(SparqlKG):
    """A read-only handle: any number of threads and processes may hold one at a time."""

    def __init__(self, store_dir: Path, **options: Any):
        super().__init__(**options)
        self.store = ox.Store.read_only(str(store_dir))

    def _select(self, query: str) -> list[dict[str, Term]]:
        return solution_rows(self.store.query(query))

    def _graph_name(self) -> Optional[ox.NamedNode | ox.DefaultGraph]:
        """The graph this handle's queries read, or None where no single graph is (then every
        call goes through SPARQL)."""
        return ox.DefaultGraph()

    def _edges_of(self, entity: str, relation: Optional[str], direction: Direction) -> list[tuple[str, OxTerm]]:
        """(relation id, other end) of each triple at ``entity`` in one direction."""
        e = ox.NamedNode(iri(entity)[1:-1])
        r = ox.NamedNode(iri(relation)[1:-1]) if relation is not None else None
        graph = self._graph_name()
        if direction == "out":
            return [(_node(q.predicate), q.object) for q in self.store.quads_for_pattern(e, r, None, graph)]
        return [(_node(q.predicate), q.subject) for q in self.store.quads_for_pattern(None, r, e, graph)]

    def relations(self, entity: str, direction: Direction) -> list[str]:
        check_direction(direction)
        if self._graph_name() is None:
            return super().relations(entity, direction)
        if not self.noise.drop_relations:
            found = self._through_cache(
                ("relations", entity, direction),
                lambda: frozenset(r for r, _ in self._edges_of(entity, None, direction)),
            )
        else:
            edges = self._through_cache(
                ("edges", entity, direction),
                lambda: frozenset((r, _node(x)) for r, x in self._edges_of(entity, None, direction)),
            )
            found = {r for r, x in edges if not self.noise.drops_edge(*self._edge(entity, r, x, direction))}
        return sorted(r for r in found if keep_relation(r, self.filters))

    def neighbors(self, entity: str, relation: str, direction: Direction) -> list[str]:
        check_direction(direction)
        if self._graph_name() is None:
            return super().neighbors(entity, relation, direction)
        ends = self._through_cache(
            ("ends", entity, relation, direction), lambda: self._ends(entity, relation, direction)
        )
        if ends is None:  # SPARQL orders literals and blank nodes by rules of its own
            return super().neighbors(entity, relation, direction)
        if self.noise.drop_relations:
            return [x for x in ends if not self.noise.drops_edge(*self._edge(entity, relation, x, direction))]
        return list(ends)

    def _ends(self, entity: str, relation: str, direction: Direction) -> Optional[tuple[str, ...]]:
        """The other ends across ``relation``, in SPARQL's ORDER BY (IRIs by their text), or None
        when one is not an IRI."""
        others = [x for _, x in self._edges_of(entity, relation, direction)]
        if not all(isinstance(x, ox.NamedNode) for x in others):
            return None
        return tuple(_node(x) for x in sorted(others, key=lambda x: x.value))

    def _names(self, entities: list[str]) -> dict[str, str]:
        if self._graph_name() is None:
            return super()._names(entities)
        best: dict[str, str] = {}
        for e in entities:
            name = self._through_cache(("name", e), lambda e=e: self._best_name(e))
            if name is not None and not self.noise.drops_name(e):
                best[e] = name
        return best

    def _best_name(self, entity: str) -> Optional[str]:
        """The English-first, then smallest, name of ``entity`` (as ``SparqlKG._names`` ranks them)."""
        if is_literal(entity):
            return None
        subject = ox.NamedNode(iri(entity)[1:-1])
        names = [_term(q.object) for q in self.store.quads_for_pattern(subject, NAME_NODE, None, self._graph_name())]
        return min(((english_first(n.lang), n.value) for n in names), default=(0, None))[1]

    def __len__(self) -> int:
        return len(self.store)
