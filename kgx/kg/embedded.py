"""The KG in-process: a pyoxigraph store in a directory, bulk-loaded once, then opened read-only
so that any number of threads and worker processes can query it at once.

The calls every method makes, ``neighbors``, ``relations`` and names, skip what ``SparqlKG``'s
generic path costs. Reading a term's text is a lookup in the store (a few µs each), so
they decode only the terms they need: ``relations`` and incoming ``neighbors`` (a hub's thousands
of films) run a pattern whose one variable is the answer, without ORDER BY (the store sorts by
decoding every term; Python sorts the texts), and take each term's text without a dict per row;
outgoing neighbours and an entity's names, a few terms each, are one index lookup
(``quads_for_pattern``: a third of a query's cost), the best name kept in the run's result cache.
An entity with few edges one way (most of them) has them all read in one index pass, which then
answers its ``relations`` and every ``neighbors`` that way: a SPARQL query costs 23 µs before it
reads anything, an index pass 4 µs (MetaQA), and a method asks for an entity's relations, then
for the ends of some of them. Where the SPARQL would
order terms by rules of its own (literals, blank nodes among the neighbours) or deduplicate across
graphs, the generic query runs as before, so the answers stay exactly those of ``SparqlKG``
(tests/kg/test_embedded_paths.py checks both paths side by side).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pyoxigraph as ox

from kgx.kg.freebase import NAME, NS, Direction, check_direction, iri, keep_relation
from kgx.kg.sparql import SparqlKG, Term, english_first

OxTerm = ox.NamedNode | ox.Literal | ox.BlankNode
NAME_NODE = ox.NamedNode(NAME)
# An entity with more edges than this one way is read by SPARQL, which decodes only what is asked
# (a genre's 4,000 films: 0.09 ms for their relations against 0.7 ms for an index pass over all).
SMALL_DEGREE = 64
# Each relation's other ends one way, sorted as ``_ends`` gives them (None where one is no IRI).
Adjacency = dict[str, Optional[tuple[str, ...]]]


def _term(value: OxTerm) -> Term:
    if isinstance(value, ox.Literal):
        return Term("literal", value.value, value.language or "")
    return Term("iri" if isinstance(value, ox.NamedNode) else "bnode", value.value)


def _named(fb_id: str) -> ox.NamedNode:
    """The store's term of a validated Freebase id (``iri`` refuses anything else)."""
    return ox.NamedNode(iri(fb_id)[1:-1])


def _strip_ns(text: str) -> str:
    """An IRI's text as ``node`` gives it: the id for one in the namespace."""
    return text[len(NS) :] if text.startswith(NS) else text


def _sorted_ends(others: list[OxTerm]) -> Optional[tuple[str, ...]]:
    """The ends' ids in SPARQL's ORDER BY (IRIs by their text), or None when one is not an IRI
    (SPARQL orders literals and blank nodes by rules of its own)."""
    if any(type(x) is not ox.NamedNode for x in others):
        return None
    return tuple(map(_strip_ns, sorted(x.value for x in others)))


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

    def neighbors(self, entity: str, relation: str, direction: Direction) -> list[str]:
        check_direction(direction)
        if self._graph_name() is None:
            return super().neighbors(entity, relation, direction)
        ends = self._through_cache(
            ("ends", entity, relation, direction), lambda: self._ends(entity, relation, direction)
        )
        if ends is None:  # SPARQL orders literals and blank nodes by rules of its own
            return super().neighbors(entity, relation, direction)
        if self.noise.cuts_edges:
            return [x for x in ends if not self.noise.drops_edge(*self._edge(entity, relation, x, direction))]
        return list(ends)

    def _ends(self, entity: str, relation: str, direction: Direction) -> Optional[tuple[str, ...]]:
        """The other ends across ``relation``, in SPARQL's ORDER BY (IRIs by their text), or None
        when one is not an IRI. A graph holds a triple once: no DISTINCT needed."""
        iri(relation)  # refused as the queries below refuse it
        adjacency = self._adjacency(entity, direction)
        if adjacency is not None:
            return adjacency.get(relation, ())
        if direction == "out":  # an index lookup: most entities have few ends through one relation
            ends = self.store.quads_for_pattern(_named(entity), _named(relation), None, self._graph_name())
            others = [q.object for q in ends]
        else:  # hubs (a genre's thousands of films): a query decodes the ends alone, at half the cost
            others = self._column(f"?x {iri(relation)} {iri(entity)}", "")
        return _sorted_ends(others)

    def _adjacency(self, entity: str, direction: Direction) -> Optional[Adjacency]:
        """Every edge of ``entity`` one way from one index pass, kept in the result cache; None
        for an entity with more than SMALL_DEGREE edges that way."""
        return self._through_cache(("adjacency", entity, direction), lambda: self._read_adjacency(entity, direction))

    def _read_adjacency(self, entity: str, direction: Direction) -> Optional[Adjacency]:
        e, graph = _named(entity), self._graph_name()
        out = direction == "out"
        quads = (
            self.store.quads_for_pattern(e, None, None, graph)
            if out
            else self.store.quads_for_pattern(None, None, e, graph)
        )
        found: dict[str, list[OxTerm]] = {}
        for seen, quad in enumerate(quads):
            if seen == SMALL_DEGREE:
                return None
            found.setdefault(quad.predicate.value, []).append(quad.object if out else quad.subject)
        return {_strip_ns(relation): _sorted_ends(others) for relation, others in found.items()}

    def relations(self, entity: str, direction: Direction) -> list[str]:
        check_direction(direction)
        if self._graph_name() is None or self.noise.drop_relations:
            return super().relations(entity, direction)
        found = self.read(("relations", entity, direction), lambda: self._relation_names(entity, direction))
        return self.uncut(entity, direction, [r for r in found if keep_relation(r, self.filters)])

    def _relation_names(self, entity: str, direction: Direction) -> list[str]:
        adjacency = self._adjacency(entity, direction)
        if adjacency is not None:
            return sorted(adjacency)
        e = iri(entity)
        pattern = f"{e} ?x ?o" if direction == "out" else f"?o ?x {e}"
        return sorted({_strip_ns(r.value) for r in self._column(pattern)})

    def _column(self, pattern: str, distinct: str = "DISTINCT") -> list[OxTerm]:
        """The terms ``?x`` takes in ``pattern``, in the handle's graph, each decoded once."""
        query = f"SELECT {distinct} ?x WHERE {{ {pattern} }}"
        return [row[0] for row in self.store.query(query, default_graph=self._graph_name())]

    def _names(self, entities: list[str]) -> dict[str, str]:
        graph = self._graph_name()
        if graph is None or not entities:
            return super()._names(entities)
        best = self.read(("names", *entities), lambda: self._best_names(entities, graph))
        return {e: name for e, name in best.items() if not self.noise.drops_name(e)}

    def _best_names(self, entities: list[str], graph: ox.NamedNode | ox.DefaultGraph) -> dict[str, str]:
        """Each named entity's name, English first, then the least by text."""
        found = {}
        for e in entities:
            name = self._through_cache(("name", e), lambda e=e: self._best_name(e, graph))
            if name is not None:
                found[e] = name
        return found

    def _best_name(self, entity: str, graph: ox.NamedNode | ox.DefaultGraph) -> Optional[str]:
        """One entity's name, kept on its own: the lists a run names differ, their entities
        recur (LMP on MetaQA: 25 entities named for 9 not named before)."""
        names = [q.object for q in self.store.quads_for_pattern(_named(entity), NAME_NODE, None, graph)]
        if not names:
            return None
        return min((english_first(x.language or "" if type(x) is ox.Literal else ""), x.value) for x in names)[1]

    def __len__(self) -> int:
        return len(self.store)
