"""One end of reachability's meet-in-the-middle search (:mod:`kgx.diagnose.reach`): the nodes it
met, their cost from its end, and the ways into them."""

from __future__ import annotations

from typing import Iterator

from kgx.core.reachability import Step
from kgx.kg.freebase import DIRECTIONS, is_literal
from kgx.kg.sparql import SparqlKG

MAX_PARENTS = 5  # ways into a node kept per side: enough for max_paths paths, bounded on hubs
FLIP = {"out": "in", "in": "out"}


Parent = tuple[str, str, str]  # (node the step came from, relation, direction walked from it)


class Side:
    """One end of the search: the nodes it met, their cost from this end, the ways in.

    ``radius`` r means every node within cost r of this end is known with its final cost. The
    topic side charges a step to the node it leaves; the gold side walks backwards, so a step
    into a node is charged to that node (the one the forward path leaves)."""

    def __init__(self, seeds: list[str], gold: bool, cvt_free: bool):
        self.gold = gold
        self.cvt_free = cvt_free
        self.seeds = set(seeds)
        self.cost: dict[str, int] = dict.fromkeys(seeds, 0)
        self.parents: dict[str, list[Parent]] = {}
        self.expanded: set[str] = set()
        self.with_edges: set[str] = set()  # seeds that had an edge when expanded
        self.named: set[str] = set()
        self.asked: set[str] = set()  # nodes whose namedness is known
        self.literals: list[str] = []  # values met (topic side): one may state a gold value
        self.radius = -1

    def charge(self, x: str) -> int:
        """What a step out of ``x`` costs: nothing out of an unnamed node when CVTs are free."""
        return 0 if self.cvt_free and x not in self.named and not is_literal(x) else 1

    def leaves(self, x: str) -> int:
        """The least a step out of ``x`` costs from this side, as far as it knows: on the gold
        side that is the cost of the node stepped to, not known before the step."""
        if self.gold:
            return 0 if self.cvt_free else 1
        return self.charge(x)

    def frontier(self, radius: int) -> list[str]:
        return sorted(
            x
            for x, c in self.cost.items()
            if x not in self.expanded and (self.gold or not is_literal(x)) and c + self.leaves(x) <= radius
        )

    def waiting(self) -> int:
        """Nodes met but not walked from: what growing this side costs next."""
        return sum(1 for x in self.cost if x not in self.expanded and (self.gold or not is_literal(x)))

    def learn_names(self, kg: SparqlKG, nodes: list[str]) -> None:
        ask = [x for x in nodes if x not in self.asked and not is_literal(x)]
        if self.cvt_free and ask:
            self.named.update(kg.named(ask))
            self.asked.update(ask)

    def advance(self, kg: SparqlKG, max_frontier: int) -> str:
        """Complete the next radius; "" or the cap that stopped it (the side then stays as it was)."""
        radius = self.radius + 1
        while True:
            if not self.gold:  # a CVT at the edge of the radius is walked through at no cost
                self.learn_names(kg, [x for x, c in self.cost.items() if c == radius and x not in self.expanded])
            batch = self.frontier(radius)
            if not batch:
                break
            if len(batch) > max_frontier:
                side = "gold" if self.gold else "topic"
                return f"frontier cap {max_frontier} reached at level {radius} ({side} side, {len(batch)} nodes)"
            self.expanded.update(batch)
            edges = [(*e, d) for d in DIRECTIONS for e in kg.edges(batch, d)]
            self.with_edges.update(e[0] for e in edges if e[0] in self.seeds)
            if self.gold:  # no walk leaves a value, so none passes through one
                edges = [e for e in edges if not is_literal(e[2])]
                self.learn_names(kg, [e[2] for e in edges])
            for source, relation, target, direction in edges:
                step = self.charge(target if self.gold else source)
                self._relax(target, self.cost[source] + step, (source, relation, direction))
        self.radius = radius
        return ""

    def _relax(self, node: str, cost: int, parent: Parent) -> None:
        if node in self.seeds or node in self.expanded:
            return
        if node not in self.cost or cost < self.cost[node]:
            if not self.gold and is_literal(node) and node not in self.cost:
                self.literals.append(node)
            self.cost[node] = cost
            self.parents[node] = [parent]
        elif cost == self.cost[node] and len(self.parents[node]) < MAX_PARENTS:
            self.parents[node].append(parent)

    def chains(self, node: str) -> Iterator[list[Step]]:
        """Shortest ways between this side's seeds and ``node``, as forward steps: seed first on
        the topic side, ``node`` first on the gold side."""
        if node in self.seeds:
            yield []
            return
        for previous, relation, direction in self.parents.get(node, []):
            for chain in self.chains(previous):
                if self.gold:
                    yield [Step(node, relation, FLIP[direction], previous), *chain]
                else:
                    yield [*chain, Step(previous, relation, direction, node)]
