"""Path-RAG (FiDeLiS Sec. 3.1): a reasoning path's next steps, pre-selected without an LLM.

Every edge at the path's end is a candidate step ``(relation, entity)``. Each is scored by how
close its relation and its entity are to the plan's keywords, plus ``alpha`` times the best
relation and the best entity one hop further on (the released code's ``--add_hop_information``,
which its inference script sets: a step towards a promising neighbourhood scores higher); the
``top_n`` best are the candidates the LLM chooses among. The released code embeds keywords,
relations and entities with OpenAI's text-embedding-3-small and scores by cosine similarity;
kgx scores with its offline samplers (``kgx.methods.samplers``): BM25 by default, SBERT
(all-MiniLM-L6-v2) with the ``[sbert]`` extra. BM25 scores are divided by the best of their list,
so that relation, entity and look-ahead scores add up on one scale, as cosine similarities do.

The released code reads RoG's subgraphs into a directed graph of one edge per entity pair, so a
path takes one step to each neighbour; kgx keeps that (the step through the neighbour's
best-scored relation, where the released graph keeps whichever edge came last) and departs in
two ways: both directions of every edge are candidates (a relation walked from its object is
shown ``r (reverse)``, as in every kgx method; the released code walks edges forwards only), and
a path never returns to an entity it has passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kgx.kg.freebase import DIRECTIONS, is_literal
from kgx.methods import kit
from kgx.methods.kit import Arc, Hop
from kgx.methods.samplers import rank
from kgx.methods.tog.search import Path

if TYPE_CHECKING:
    from kgx.methods.base import Context


class Graph:
    """The KG as one question's search reads it: each entity's edges and every node's name,
    each looked up once."""

    def __init__(self, ctx: "Context", names: dict[str, str]):
        self.ctx = ctx
        self.names = dict(names)
        self._edges: dict[str, list[Arc]] = {}

    def name(self, node: str) -> str:
        return self.names.get(node, node)

    def edges(self, entity: str) -> list[Arc]:
        """Every edge at ``entity``, both directions, relations in id order, capped by the
        method's ``max_relations`` and ``max_neighbors`` (cuts recorded in the KG events)."""
        if entity not in self._edges:
            self._edges[entity] = self._read(entity)
        return self._edges[entity]

    def _read(self, entity: str) -> list[Arc]:
        if is_literal(entity):
            return []
        p, kg = self.ctx.params, self.ctx.kg
        try:
            hops = [
                Hop(relation, direction)
                for direction in DIRECTIONS
                for relation in sorted(kg.relations(entity, direction, limit=p.max_relations))
            ]
        except ValueError as exc:  # a topic entity that is not a KG id
            self.ctx.trace.note("beam_search", f"cannot read the edges of {entity}: {exc}", entity=entity)
            return []
        arcs = [
            Arc(entity, hop, target)
            for hop in hops
            for target in kg.neighbors(entity, hop.relation, hop.direction, limit=p.max_neighbors)
        ]
        unnamed = sorted({a.target for a in arcs} - set(self.names))
        if unnamed:
            self.names.update(kg.names(unnamed))
        return arcs

    def step_text(self, arc: Arc) -> str:
        return f"{arc.hop.label} -> {self.name(arc.target)}"

    def path_text(self, path: Path) -> str:
        """``Topic -> r1 -> e1 -> r2 (reverse) -> e2``, the released code's form of a path."""
        return " -> ".join([self.name(path.topic), *(self.step_text(s) for s in path.steps)])

    def triples(self, path: Path) -> list[tuple[str, str, str]]:
        """The path's edges in the KG's direction, by id."""
        return [step.triple() for step in path.steps]

    def evidence(self, path: Path) -> list[str]:
        return [kit.triple_text(self.name(s), r, self.name(o)) for s, r, o in self.triples(path)]


def similarities(sampler: str, query: str, texts: Iterable[str]) -> dict[str, float]:
    """Each distinct text's similarity to ``query`` by ``sampler``; BM25's divided by the best."""
    distinct = list(dict.fromkeys(texts))
    scores = dict(rank(sampler, query, distinct, len(distinct)))
    if sampler == "bm25":
        top = max(scores.values(), default=0.0)
        return {text: score / top if top > 0 else 0.0 for text, score in scores.items()}
    return scores


def best_step(sampler: str, query: str, arcs: list[Arc], graph: Graph) -> float:
    """The look-ahead: the best relation's and the best entity's similarity among ``arcs``."""
    if not arcs:
        return 0.0
    relations = similarities(sampler, query, (a.hop.relation for a in arcs))
    entities = similarities(sampler, query, (graph.name(a.target) for a in arcs))
    return max(relations.values()) + max(entities.values())


def next_steps(path: Path, query: str, graph: Graph, ctx: "Context") -> list[Path]:
    """The ``top_n`` extensions of ``path`` by Path-RAG's score (each extension's ``score``),
    best first, ties in the KG's order, one per neighbouring entity (through its best-scored
    relation); a cut is noted."""
    p = ctx.params
    passed = {path.topic, *(s.target for s in path.steps)}
    arcs = [a for a in graph.edges(path.end) if a.target not in passed]
    if not arcs:
        return []
    relations = similarities(p.sampler, query, (a.hop.relation for a in arcs))
    entities = similarities(p.sampler, query, (graph.name(a.target) for a in arcs))
    ahead: dict[str, float] = {}
    scored = []
    for arc in arcs:
        score = relations[arc.hop.relation] + entities[graph.name(arc.target)]
        if p.alpha:
            if arc.target not in ahead:
                ahead[arc.target] = best_step(p.sampler, query, graph.edges(arc.target), graph)
            score += p.alpha * ahead[arc.target]
        scored.append(path.extend(arc, score))
    best: dict[str, Path] = {}  # one step per neighbouring entity, through its best relation
    for extension in sorted(scored, key=lambda x: -x.score):
        best.setdefault(extension.end, extension)
    ranked = list(best.values())
    return kit.cap(ctx, "beam_search", ranked, p.top_n, "Path-RAG candidates", entity=path.end)
