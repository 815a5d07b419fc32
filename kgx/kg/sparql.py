"""The KG protocol as SPARQL, once, for every backend.

Backends differ only in how a SELECT query reaches the data (``_select``): in-process for the
embedded store, over HTTP for an endpoint. Because both run the very same query strings, they
return the same answers, which the protocol tests check.
"""

from __future__ import annotations

import copy
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any

from kgx.core.kg_config import DEFAULT_FILTERS
from kgx.kg.freebase import (
    NAME,
    NS,
    Direction,
    check_direction,
    iri,
    is_literal,
    keep_relation,
    literal,
)
from kgx.kg.noise import Noise, pair

CVT_ATTRIBUTES = 8  # attributes shown for an unnamed node: enough for a position with its dates
SEARCH_POOL = 2000  # names a fuzzy search ranks at most: bounded work on any KG size
NOTABLE_TYPES = NS + "common.topic.notable_types"
TYPE = NS + "type.object.type"
GENERIC_TYPES = ("common.", "base.", "user.", "type.")  # types every topic has: no label


@dataclass(frozen=True)
class Term:
    kind: str  # "iri" | "literal" | "bnode"
    value: str
    lang: str = ""


def node(term: Term) -> str:
    """A Freebase id for an IRI in the namespace, a quoted value for a literal."""
    if term.kind == "literal":
        return '"' + term.value + '"'
    if term.kind == "iri" and term.value.startswith(NS):
        return term.value[len(NS) :]
    return term.value


def english_first(lang: str) -> int:
    """English names first, then those without a language, then the others."""
    return 0 if lang.lower().startswith("en") else 1 if not lang else 2


class SparqlKG:
    """relations / neighbors / names / search over Freebase-shaped RDF."""

    # The part of the KG this handle sees: "" for all of it, a question's graph IRI for the view
    # ``for_question`` gives of a KG of per-question subgraphs (kgx.kg.subgraph).
    view = ""

    def __init__(self, filters: tuple[str, ...] = DEFAULT_FILTERS, noise: Noise = Noise(), cache_size: int = 100_000):
        self.filters = tuple(filters)
        self.noise = noise
        self._cache: OrderedDict[Hashable, Any] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _select(self, query: str) -> list[dict[str, Term]]:
        raise NotImplementedError

    def for_question(self, question_id: str) -> "SparqlKG":
        """The KG one question sees: all of it, except where each question has its own subgraph
        (``kgx.kg.subgraph``, ``kg.scope=question``)."""
        return self

    def without(self, pairs: frozenset[tuple[str, str]]) -> "SparqlKG":
        """This view with every edge between the entity ``pairs`` removed (``kg.drop``: a
        question's crucial triples). It shares the store and the result cache, which hold what the
        KG returned before any edge is removed; its ``view`` names the pairs, so reachability
        keeps its results apart from the whole KG's."""
        if not pairs:
            return self
        view = copy.copy(self)
        view.noise = replace(self.noise, cut=self.noise.cut | pairs)
        digest = hashlib.sha256(repr(sorted(view.noise.cut)).encode()).hexdigest()[:16]
        view.view = f"{self.view} without {len(view.noise.cut)} pairs {digest}".strip()
        return view

    def select(self, query: str) -> list[dict[str, Term]]:
        """Run a SELECT through the result cache (shared by all questions of a run)."""
        return self.read(query, lambda: self._select(query))

    def read(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """One read of the KG, ``compute()``: a SELECT or a backend's own lookup (kgx.kg.embedded),
        through the result cache; what reachability counts as one query (kgx.diagnose.reach)."""
        return self._through_cache(key, compute)

    def _through_cache(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()``'s result, kept under ``key`` (a query, or a backend's own lookup) in the
        run's least-recently-used result cache."""
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        value = compute()
        with self._lock:
            self._cache[key] = value
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return value

    def _edge(self, entity: str, relation: str, other: str, direction: Direction) -> tuple[str, str, str]:
        return (entity, relation, other) if direction == "out" else (other, relation, entity)

    def relations(self, entity: str, direction: Direction) -> list[str]:
        """Distinct relations of ``entity`` in one direction, filtered, sorted."""
        e = iri(entity)
        check_direction(direction)
        pattern = f"{e} ?r ?x" if direction == "out" else f"?x ?r {e}"
        if self.noise.drop_relations:
            rows = self.select(f"SELECT DISTINCT ?r ?x WHERE {{ {pattern} }}")
            found = {
                node(row["r"])
                for row in rows
                if not self.noise.drops_edge(*self._edge(entity, node(row["r"]), node(row["x"]), direction))
            }
        else:
            found = {node(row["r"]) for row in self.select(f"SELECT DISTINCT ?r WHERE {{ {pattern} }}")}
        return self.uncut(entity, direction, sorted(r for r in found if keep_relation(r, self.filters)))

    def uncut(self, entity: str, direction: Direction, relations: list[str]) -> list[str]:
        """``relations`` without those that a ``cut`` pair at ``entity`` left with no edge (the
        pairs are a question's few crucial edges: a neighbour lookup per relation, only there)."""
        if not any(entity in p for p in self.noise.cut):
            return relations
        return [r for r in relations if self.neighbors(entity, r, direction)]

    def neighbors(self, entity: str, relation: str, direction: Direction) -> list[str]:
        """Distinct nodes across ``relation`` from ``entity``: ids, or quoted literal values."""
        e, r = iri(entity), iri(relation)
        check_direction(direction)
        pattern = f"{e} {r} ?x" if direction == "out" else f"?x {r} {e}"
        rows = self.select(f"SELECT DISTINCT ?x WHERE {{ {pattern} }} ORDER BY ?x")
        found = [node(row["x"]) for row in rows]
        if self.noise.cuts_edges:
            found = [x for x in found if not self.noise.drops_edge(*self._edge(entity, relation, x, direction))]
        return found

    def edges(self, ids: list[str], direction: Direction, batch: int = 100) -> list[tuple[str, str, str]]:
        """Every edge at ``ids`` in one direction, as ``(node, relation, other)`` in the direction
        walked (the KG triple is ``node relation other`` when out, ``other relation node`` when in),
        filtered and noised like ``relations``/``neighbors``, sorted. One query per ``batch`` ids,
        so a search over thousands of nodes (kgx.diagnose.reach) costs a few queries, not one per node.

        A quoted literal (``"1828-03-20"``, as ``neighbors`` returns it) has in-edges only; it is
        matched in every form an engine may store it in (``_literal_forms``), and comes back as
        given, whatever form matched."""
        check_direction(direction)
        nodes = [x for x in dict.fromkeys(ids) if direction == "in" or not is_literal(x)]
        pattern = "?s ?r ?x" if direction == "out" else "?x ?r ?s"
        found: set[tuple[str, str, str]] = set()
        for start in range(0, len(nodes), batch):
            chunk = nodes[start : start + batch]
            values = " ".join(f"({term} {i})" for i, x in enumerate(chunk) for term in self._literal_forms(x))
            for row in self.select(f"SELECT DISTINCT ?s ?i ?r ?x WHERE {{ VALUES (?s ?i) {{ {values} }} {pattern} }}"):
                relation, other = node(row["r"]), node(row["x"])
                kept = keep_relation(relation, self.filters)
                if kept and not self.noise.drops_edge(*self._edge(node(row["s"]), relation, other, direction)):
                    found.add((chunk[int(row["i"].value)], relation, other))
        return sorted(found)

    @staticmethod
    def _literal_forms(x: str) -> list[str]:
        """Query terms for a node: its IRI; for a quoted literal, the text plain, as ``@en`` and as
        each XSD type its shape fits, since a term matches only the form the store holds."""
        if not is_literal(x):
            return [iri(x)]
        text = x[1:-1]
        shapes = (
            (r"\d{4}-\d{2}-\d{2}", ("date",)),
            (r"\d{4}-\d{2}", ("gYearMonth",)),
            (r"\d{4}-\d{2}-\d{2}T[\d:.]+Z?", ("dateTime",)),
            (r"\d{4}", ("gYear", "integer", "int")),
            (r"-?\d+", ("integer", "int")),
            (r"-?\d+(\.\d+)?", ("decimal", "float", "double")),
        )
        types = [t for shape, kinds in shapes if re.fullmatch(shape, text) for t in kinds]
        xsd = "http://www.w3.org/2001/XMLSchema#"
        return [literal(text), f"{literal(text)}@en", *(f"{literal(text)}^^<{xsd}{t}>" for t in dict.fromkeys(types))]

    def named(self, ids: list[str], batch: int = 100) -> set[str]:
        """The entities among ``ids`` that carry a name (noise applied): the others are unnamed
        (CVT) nodes, which a method may read through at no cost (kgx.diagnose.reach, ``Horizon.cvt_free``).
        One query per ``batch`` ids; literals are never named."""
        entities = [x for x in dict.fromkeys(ids) if not is_literal(x)]
        found: set[str] = set()
        for start in range(0, len(entities), batch):
            values = " ".join(iri(x) for x in entities[start : start + batch])
            rows = self.select(f"SELECT DISTINCT ?e WHERE {{ VALUES ?e {{ {values} }} ?e <{NAME}> ?n }}")
            found.update(e for e in (node(row["e"]) for row in rows) if not self.noise.drops_name(e))
        return found

    def names(self, ids: list[str]) -> dict[str, str]:
        """A readable label per node: its name (English first), a literal's value, or for an
        unnamed (CVT) node its attributes, so no method ever shows "UnName_Entity" (LMP App. C.3)."""
        return self.labels(ids)[0]

    def labels(self, ids: list[str]) -> tuple[dict[str, str], set[str]]:
        """``names``, and the entities among ``ids`` that have no name (shown by their attributes,
        or by their id when they have none): what kgx.kg.metered counts as shown unnamed."""
        labels = {x: x[1:-1] for x in ids if is_literal(x)}
        entities = [x for x in dict.fromkeys(ids) if not is_literal(x)]
        named = self._names(entities)
        labels.update(named)
        unnamed = [x for x in entities if x not in named]
        labels.update(self._describe(unnamed))
        return labels, set(unnamed)

    def _names(self, entities: list[str]) -> dict[str, str]:
        if not entities:
            return {}
        values = " ".join(iri(x) for x in entities)
        rows = self.select(f"SELECT ?e ?n WHERE {{ VALUES ?e {{ {values} }} ?e <{NAME}> ?n }}")
        best: dict[str, tuple[int, str]] = {}
        for row in rows:
            e, name = node(row["e"]), row["n"]
            if self.noise.drops_name(e):
                continue
            rank = (english_first(name.lang), name.value)
            if e not in best or rank < best[e]:
                best[e] = rank
        return {e: rank[1] for e, rank in best.items()}

    def _describe(self, entities: list[str]) -> dict[str, str]:
        """``(attribute: value; ...)`` from an unnamed node's literal and named neighbours, one
        value per neighbour: its English name first, translations dropped (an engine returns a
        row per language, in its own order, and they would use up the attribute limit)."""
        if not entities:
            return {}
        values = " ".join(iri(x) for x in entities)
        rows = self.select(
            f"SELECT ?e ?r ?o ?n WHERE {{ VALUES ?e {{ {values} }} ?e ?r ?o . "
            f"OPTIONAL {{ ?o <{NAME}> ?n }} }} ORDER BY ?e ?r ?o"
        )
        best: dict[tuple[str, str, str], tuple[int, str]] = {}
        for row in rows:
            e, r, o = node(row["e"]), node(row["r"]), row["o"]
            if not keep_relation(r, self.filters) or pair(e, node(o)) in self.noise.cut:
                continue
            if o.kind == "literal":
                rank = (english_first(o.lang), o.value)
            elif "n" in row and not self.noise.drops_name(node(o)):
                rank = (english_first(row["n"].lang), row["n"].value)
            else:
                continue
            key = (e, r, node(o))
            if key not in best or rank < best[key]:
                best[key] = rank
        parts: dict[str, list[str]] = {e: [] for e in entities}
        for (e, r, _), (_, value) in sorted(best.items()):
            if value and len(parts[e]) < CVT_ATTRIBUTES:
                parts[e].append(f"{r.rsplit('.', 1)[-1]}: {value}")
        return {e: "(" + "; ".join(p) + ")" if p else e for e, p in parts.items()}

    def types(self, ids: list[str]) -> dict[str, str]:
        """One type label per entity that has a type: the name of its notable type
        (``common.topic.notable_types``), else of its first specific ``type.object.type`` by id
        (generic ``common.``/``base.``/``user.``/``type.`` types skipped); an unnamed type shows its id.
        Entities without a type and literals are left out, so a caller can say "none" (CGPE Sec. 3.4)."""
        entities = [x for x in dict.fromkeys(ids) if not is_literal(x)]
        if not entities:
            return {}
        values = " ".join(iri(x) for x in entities)
        rows = self.select(
            f"SELECT ?e ?p ?t ?n WHERE {{ VALUES ?e {{ {values} }} VALUES ?p {{ <{NOTABLE_TYPES}> <{TYPE}> }} "
            f"?e ?p ?t . OPTIONAL {{ ?t <{NAME}> ?n }} }}"
        )
        best: dict[str, tuple[int, str, int, str]] = {}
        for row in rows:
            e, t = node(row["e"]), node(row["t"])
            notable = row["p"].value == NOTABLE_TYPES
            if not notable and t.startswith(GENERIC_TYPES):
                continue
            name = row["n"] if "n" in row else None
            rank = (0 if notable else 1, t, english_first(name.lang) if name else 3, name.value if name else t)
            if e not in best or rank < best[e]:
                best[e] = rank
        return {e: rank[3] for e, rank in best.items()}

    def search(self, text: str, limit: int = 10) -> list[str]:
        """Entities whose name matches ``text``, for methods and datasets that start from words.

        Cheapest first, each step ordered so every engine returns the same entities:
        the exact name and its common casings as indexable literals (``?e name "X"@en``: an
        index lookup on Virtuoso, where a FILTER over every name is a scan of tens of millions
        on Freebase); then a case-insensitive scan; then names sharing the text's longest
        words, ranked by word overlap, from at most ``SEARCH_POOL`` candidates."""
        text = text.strip()
        if not text:
            return []
        forms = list(dict.fromkeys([text, text.lower(), text.title(), text.capitalize(), text.upper()]))
        literals = " ".join(f"{literal(f)}@en {literal(f)}" for f in forms)
        exact = self.select(
            f"SELECT DISTINCT ?e WHERE {{ VALUES ?n {{ {literals} }} ?e <{NAME}> ?n }} ORDER BY ?e LIMIT {limit}"
        )
        if exact:
            return self._visible(self._ranked_exact([node(r["e"]) for r in exact], forms))
        folded = self.select(
            f"SELECT DISTINCT ?e WHERE {{ ?e <{NAME}> ?n . FILTER(LCASE(STR(?n)) = LCASE({literal(text)})) }}"
            f" ORDER BY ?e LIMIT {limit}"
        )
        if folded:
            return self._visible([node(r["e"]) for r in folded])
        tokens = sorted({t for t in re.findall(r"\w+", text.lower()) if len(t) > 2}, key=lambda t: (-len(t), t))[:5]
        if not tokens:
            return []
        any_token = " || ".join(f"CONTAINS(LCASE(STR(?n)), {literal(t)})" for t in tokens)
        rows = self.select(
            f"SELECT DISTINCT ?e ?n WHERE {{ ?e <{NAME}> ?n . FILTER({any_token}) }} ORDER BY ?e ?n LIMIT {SEARCH_POOL}"
        )
        wanted = set(tokens)

        def overlap(row: dict[str, Term]) -> float:
            words = set(re.findall(r"\w+", row["n"].value.lower()))
            return len(words & wanted) / len(words | wanted)

        ranked = sorted(rows, key=lambda r: (-overlap(r), node(r["e"])))
        return self._visible(list(dict.fromkeys(node(r["e"]) for r in ranked)))[:limit]

    def _ranked_exact(self, found: list[str], forms: list[str]) -> list[str]:
        """Entities named exactly as asked before those named in another casing."""
        if len(found) < 2:
            return found
        values = " ".join(iri(x) for x in found)
        rows = self.select(f"SELECT ?e ?n WHERE {{ VALUES ?e {{ {values} }} ?e <{NAME}> ?n }}")
        exact = {node(r["e"]) for r in rows if r["n"].value == forms[0]}
        return sorted(found, key=lambda e: (e not in exact, e))

    def _visible(self, entities: list[str]) -> list[str]:
        return [e for e in entities if not self.noise.drops_name(e)]
