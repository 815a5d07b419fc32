"""Paths-over-Graph's question subgraph and the paths it reads (Tan et al., WWW 2025, Sec. 4.1-4.2).

- :class:`Subgraph`: the D_max-hop neighbourhood of the topic entities (question subgraph
  detection), grown one hop at a time as the exploration deepens, with the KG calls each hop needs;
- :class:`Route`: one path as PoG's prompts show it, entity sets joined by relations. Every walk
  with the same relations, one after another, is one path (the released code merges walks by their
  relations the same way), and each step keeps the entity pairs it walks, so that the sets hold
  only entities on whole walks and the evidence holds real triples;
- :func:`routes_from` and :func:`connecting`: the paths from one entity, and the paths joining
  several entities in order, each consecutive pair through a meeting entity at most ``hops`` hops
  from both: multi-entity path exploration. The entities those joining paths pass through are the
  reduced graph (graph reduction) the later phases explore.

Kept apart from the algorithm (``__init__.py``) so that it reads as the paper's phases.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from kgx.kg.freebase import DIRECTIONS, is_literal
from kgx.methods import kit
from kgx.methods.kit import Hop
from kgx.methods.pog.memory import unnecessary

if TYPE_CHECKING:
    from kgx.methods.base import Context

Pairs = frozenset[tuple[str, str]]
STAGE = "exploration"  # the trace's label for what the KG walk notes (no LLM call)


@dataclass(frozen=True)
class Route:
    """A path from ``start`` through ``hops``; ``steps[i]`` holds the (from, to) entity pairs hop i walks."""

    start: str
    hops: tuple[Hop, ...] = ()
    steps: tuple[Pairs, ...] = ()

    def at(self, i: int) -> frozenset[str]:
        """The entities at position ``i`` (0: the start)."""
        return frozenset({self.start}) if i == 0 else frozenset(b for _, b in self.steps[i - 1])

    @property
    def end(self) -> frozenset[str]:
        return self.at(len(self.hops))

    def entities(self) -> list[str]:
        """Every entity on the path, position by position, each once."""
        return list(dict.fromkeys(x for i in range(len(self.hops) + 1) for x in sorted(self.at(i))))

    def extend(self, hop: Hop, pairs: Pairs) -> "Route":
        return Route(self.start, (*self.hops, hop), (*self.steps, pairs))

    def ending_in(self, keep: frozenset[str]) -> "Route":
        """The walks that end in ``keep``: every step cut back to the pairs that lead there."""
        steps = list(self.steps)
        for i in reversed(range(len(steps))):
            steps[i] = frozenset(p for p in steps[i] if p[1] in keep)
            keep = frozenset(a for a, _ in steps[i])
        return Route(self.start, self.hops, tuple(steps))

    def back(self) -> tuple[tuple[Hop, ...], tuple[Pairs, ...]]:
        """The hops and steps walked the other way, from the end back to the start."""
        return (
            tuple(h.reverse() for h in reversed(self.hops)),
            tuple(frozenset((b, a) for a, b in s) for s in reversed(self.steps)),
        )

    def then(self, other: "Route") -> "Route":
        """This path, its walks cut to end where ``other`` starts, then ``other``."""
        head = self.ending_in(frozenset({other.start}))
        return Route(self.start, head.hops + other.hops, head.steps + other.steps)

    def triples(self, shown: int) -> list[tuple[str, str, str]]:
        """The KG triples the path walks, at most ``shown`` per hop, in the KG's direction."""
        return [hop.triple(a, b) for hop, step in zip(self.hops, self.steps) for a, b in sorted(step)[:shown]]

    def text(self, names: dict[str, str], shown: int) -> str:
        """``Tokyo -> location.country.capital (reverse) -> Japan``; a set is ``{A | B | ...}``, at
        most ``shown`` names (the released prompts show 20)."""
        parts = [entity_set(self.at(0), names, shown)]
        for i, hop in enumerate(self.hops, 1):
            parts += [hop.label, entity_set(self.at(i), names, shown)]
        return " -> ".join(parts)


def entity_set(nodes: Iterable[str], names: dict[str, str], shown: int) -> str:
    labels = sorted(dict.fromkeys(names.get(x, x) for x in nodes))
    if len(labels) == 1:
        return labels[0]
    return "{" + " | ".join(labels[:shown]) + (" | ...}" if len(labels) > shown else "}")


def merged(routes: Iterable[Route]) -> list[Route]:
    """Paths with the same start and relations as one path, their walks together, in first-seen order."""
    out: dict[tuple[str, tuple[Hop, ...]], Route] = {}
    for r in routes:
        key = (r.start, r.hops)
        seen = out.get(key)
        out[key] = r if seen is None else Route(r.start, r.hops, tuple(a | b for a, b in zip(seen.steps, r.steps)))
    return list(out.values())


# --------------------------------------------------------------------------- the question subgraph


class Subgraph:
    """The D_max-hop neighbourhood of the topic entities, as far as it has been grown. Every
    entity at depth d < ``grown`` has had its relations (both directions, at most
    ``max_relations`` each) and their neighbours (at most ``max_neighbors`` each) read; an edge is
    kept both ways, so an entity at the rim knows the edges that reached it. At most
    ``max_frontier`` entities are expanded per hop (a cut is noted). With ``edges=one`` (PoG-E)
    two entities are joined by one relation only."""

    def __init__(self, ctx: "Context", topics: dict[str, str]):
        self.ctx = ctx
        self.adjacency: dict[str, dict[Hop, dict[str, None]]] = {}
        self.depth: dict[str, int] = {t: 0 for t in topics}
        self.names: dict[str, str] = dict(topics)
        self.grown = 0
        self._one: dict[str, dict[Hop, tuple[str, ...]]] = {}

    def grow(self, depth: int) -> None:
        """Read the KG until every entity nearer than ``depth`` to a topic entity is expanded."""
        p = self.ctx.params
        while self.grown < depth:
            layer = [x for x, d in self.depth.items() if d == self.grown and not is_literal(x)]
            layer = kit.cap(self.ctx, STAGE, layer, p.max_frontier, "entities to expand", depth=self.grown + 1)
            before = set(self.depth)
            for node in layer:
                self.expand(node)
            self.grown += 1
            new = [x for x in self.depth if x not in before]
            if new:
                self.names.update(self.ctx.kg.names(new))
            self._one.clear()

    def expand(self, node: str) -> None:
        p = self.ctx.params
        for direction in DIRECTIONS:
            try:
                relations = sorted(self.ctx.kg.relations(node, direction, limit=p.max_relations))
            except ValueError as exc:  # a topic entity that is not a KG id
                self.ctx.trace.note(STAGE, f"cannot explore {node}: {exc}", entity=node)
                return
            for relation in relations:
                if p.remove_unnecessary_rel and unnecessary(relation):
                    continue
                hop = Hop(relation, direction)
                for other in self.ctx.kg.neighbors(node, relation, direction, limit=p.max_neighbors):
                    self.link(node, hop, other)

    def link(self, node: str, hop: Hop, other: str) -> None:
        self.adjacency.setdefault(node, {}).setdefault(hop, {})[other] = None
        self.adjacency.setdefault(other, {}).setdefault(hop.reverse(), {})[node] = None
        self.depth.setdefault(other, self.grown + 1)

    def edges(self, node: str, within: Optional[frozenset[str]] = None) -> dict[Hop, tuple[str, ...]]:
        """The hops at ``node`` and where each leads (inside ``within`` if given)."""
        found = self._one_edge(node) if self.ctx.params.edges == "one" else self.adjacency.get(node, {})
        out = {}
        for hop, others in found.items():
            kept = tuple(x for x in others if within is None or x in within)
            if kept:
                out[hop] = kept
        return out

    def _one_edge(self, node: str) -> dict[Hop, tuple[str, ...]]:
        """PoG-E: one relation per pair of entities, the first by direction (out first) and id."""
        if node not in self._one:
            best: dict[str, Hop] = {}
            for hop, others in self.adjacency.get(node, {}).items():
                for x in others:
                    if x not in best or (hop.direction != "out", hop.relation) < (
                        best[x].direction != "out",
                        best[x].relation,
                    ):
                        best[x] = hop
            grouped: dict[Hop, list[str]] = {}
            for x, hop in best.items():
                grouped.setdefault(hop, []).append(x)
            self._one[node] = {hop: tuple(xs) for hop, xs in sorted(grouped.items(), key=lambda kv: kv[0].label)}
        return self._one[node]


# --------------------------------------------------------------------------- paths


def onward(route: Route, sub: Subgraph, within: Optional[frozenset[str]]) -> list[Route]:
    """Every one-hop extension of ``route``, one per hop. A walk never returns to the start and
    never goes straight back to the only entity it came from (walks are simple, as the released
    code's are: the co-stars of an actor exclude the actor)."""
    came: dict[str, set[str]] = {}
    for a, b in route.steps[-1] if route.steps else ():
        came.setdefault(b, set()).add(a)
    pairs: dict[Hop, set[tuple[str, str]]] = {}
    for x in sorted(route.end):
        back = came.get(x, set())
        for hop, others in sub.edges(x, within).items():
            for y in others:
                if y != x and y != route.start and back != {y}:
                    pairs.setdefault(hop, set()).add((x, y))
    return [route.extend(hop, frozenset(ps)) for hop, ps in pairs.items()]


def routes_from(anchor: str, hops: int, sub: Subgraph, within: Optional[frozenset[str]] = None) -> list[list[Route]]:
    """The paths from ``anchor`` by length, 0 to ``hops``; at most ``max_routes`` of each length
    (a cut is noted)."""
    levels = [[Route(anchor)]]
    for length in range(1, hops + 1):
        found = [r for route in levels[-1] for r in onward(route, sub, within)]
        levels.append(kit.cap(sub.ctx, STAGE, found, sub.ctx.params.max_routes, "paths", start=anchor, length=length))
    return levels


def joining(a: str, b: str, hops: int, sub: Subgraph, within: Optional[frozenset[str]]) -> list[Route]:
    """The paths from ``a`` to ``b``: a path from ``a`` and one from ``b``, each at most ``hops``
    long, meeting at common entities, the second walked back."""
    ours = [r for level in routes_from(a, hops, sub, within) for r in level]
    theirs = [r for level in routes_from(b, hops, sub, within) for r in level]
    ending: dict[str, list[int]] = {}
    for i, r in enumerate(theirs):
        for x in r.end:
            ending.setdefault(x, []).append(i)
    out = []
    for f in ours:
        for i in sorted({i for x in f.end for i in ending.get(x, ())}):
            g = theirs[i]
            if not f.hops and not g.hops:
                continue
            meet = f.end & g.end
            if f.hops and g.hops:
                meet -= {a, b}
            if not meet:
                continue
            hops_back, steps_back = g.ending_in(meet).back()
            head = f.ending_in(meet)
            out.append(Route(a, head.hops + hops_back, head.steps + steps_back))
    return merged(out)


def connecting(anchors: list[str], hops: int, sub: Subgraph, within: Optional[frozenset[str]] = None) -> list[Route]:
    """The paths through ``anchors`` in their order, each consecutive pair joined within ``hops``
    hops of both; at most ``max_routes`` (a cut is noted)."""
    routes: Optional[list[Route]] = None
    for a, b in zip(anchors, anchors[1:]):
        found = joining(a, b, hops, sub, within)
        routes = found if routes is None else [r.then(s) for r in routes for s in found]
        routes = kit.cap(sub.ctx, STAGE, merged(routes), sub.ctx.params.max_routes, "joining paths", anchors=anchors)
        if not routes:
            return []
    return routes or []


def reach(routes: Iterable[Route]) -> frozenset[str]:
    """The entities the paths pass through: the reduced graph."""
    return frozenset(x for r in routes for x in r.entities())
