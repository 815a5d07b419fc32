"""Is a gold answer reachable in the run's KG from the question's topic entities, within the
method's depth (issue 22)? A method cannot find an answer its horizon does not hold, so a run
separates "the method failed" from "the KG or the bound left no way" only with this figure.

kgx answers it itself, with no LLM and a few KG queries per question: a meet-in-the-middle
search, level by level from both ends (topic entities, gold answers), each level one batched
query per direction and 100 nodes (``SparqlKG.edges``), always growing the end with the smaller
frontier. Levels are by cost, so the first meeting is a shortest path, and with
``Horizon.cvt_free`` a hop out of an unnamed (CVT) node costs nothing (its namedness is one
batched query per level). Walks follow edges both ways, never out of a literal: no method can.

A side whose frontier grows past ``max_frontier`` (a MetaQA genre has thousands of films) stops;
if the ends did not meet, the answer is unknown (``reachable=None``) with the cap in ``reason``.
Results are cached per KG (``kgx.diagnose.reach_cache``) so that sweeps over methods do not repeat them.
"""

from __future__ import annotations

import copy
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator, Optional

from kgx.core.types import Horizon, Question
from kgx.diagnose.gold_nodes import NODE_ID, GoldLiterals, Golds, gold_nodes
from kgx.diagnose.reach_cache import ReachCache
from kgx.kg.entities import missing
from kgx.kg.freebase import DIRECTIONS, is_literal
from kgx.kg.sparql import SparqlKG

MAX_PARENTS = 5  # ways into a node kept per side: enough for max_paths paths, bounded on hubs
FLIP = {"out": "in", "in": "out"}


@dataclass(frozen=True)
class Step:
    source: str  # entity id the step leaves (topic side first)
    relation: str  # relation id, e.g. "film.film.directed_by"
    direction: str  # "out" if the KG triple is (source, relation, target), "in" if (target, relation, source)
    target: str  # entity id or quoted literal


@dataclass
class Reach:
    """One question's reachability. ``distance`` 0 (a topic entity is a gold answer) has no steps."""

    reachable: Optional[bool]  # None: no gold answer in the KG, a cap hit before the ends met, or the KG failed
    depth: int  # the horizon searched
    distance: Optional[int] = None  # hops (as the horizon counts them) to the nearest gold answer
    paths: list[list[Step]] = field(default_factory=list)  # up to max_paths shortest, topic first, ending at a gold
    names: dict[str, str] = field(default_factory=dict)  # labels of the nodes on ``paths``
    gold_ids: list[str] = field(default_factory=list)  # the gold answers as KG nodes (literals quoted)
    queries: int = 0  # KG SELECTs this check issued (0 from the cache; the KG's result cache may have served some)
    cached: bool = False
    seconds: float = 0.0  # wall time of this check (a cache lookup's when cached)
    reason: str = ""  # why unknown / which cap was hit ("" when fine)

    def to_dict(self) -> dict:
        """``asdict(self)`` without its deep copy (a tenth of a fast question's CPU): steps hold strings."""
        paths = [[dict(vars(step)) for step in path] for path in self.paths]
        return {**vars(self), "paths": paths, "names": dict(self.names), "gold_ids": list(self.gold_ids)}

    @classmethod
    def from_dict(cls, data: dict) -> "Reach":
        paths = [[Step(**step) for step in path] for path in data.get("paths", [])]
        return cls(**{**data, "paths": paths})


Parent = tuple[str, str, str]  # (node the step came from, relation, direction walked from it)


class _Side:
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


class _Search:
    """One question's bidirectional search; ``run`` returns the Reach without labels or counts."""

    def __init__(
        self, kg: SparqlKG, topics: list[str], golds: Golds, horizon: Horizon, max_frontier: int, max_paths: int
    ):
        self.kg = kg
        self.golds = golds
        self.horizon = horizon
        self.max_frontier = max_frontier
        self.max_paths = max_paths
        self.sides = {
            "topic": _Side(topics, gold=False, cvt_free=horizon.cvt_free),
            "gold": _Side(golds.ids, gold=True, cvt_free=horizon.cvt_free),
        }
        self.topic, self.gold = self.sides["topic"], self.sides["gold"]
        self.values = GoldLiterals(golds.literals)

    def meetings(self) -> list[tuple[int, str, str]]:
        """(cost, node on the topic side, node on the gold side) wherever the two ends touch; a
        value met from the topic side touches a gold value it states (``GoldLiterals.stated_by``)."""
        found = [(self.topic.cost[x] + self.gold.cost[x], x, x) for x in self.topic.cost.keys() & self.gold.cost.keys()]
        found += [
            (self.topic.cost[x], x, gold)
            for x in self.topic.literals
            if x not in self.gold.cost and (gold := self.values.stated_by(x))
        ]
        return sorted(found)

    def run(self) -> Reach:
        """Grow the smaller end a level at a time until the ends meet at a cost both have
        searched (a shortest path), or the levels searched add up to the depth, or both stop."""
        depth = self.horizon.depth
        capped: dict[str, str] = {}
        while True:
            met = self.meetings()
            best = met[0][0] if met else None
            searched = self.searched()
            if best is not None and best <= min(max(searched, 0), depth):  # nothing is shorter than 0
                return self._found(best, met)
            if searched >= depth or len(capped) == len(self.sides):
                break
            growing = min(
                (n for n in self.sides if n not in capped), key=lambda n: (self.sides[n].waiting(), n != "topic")
            )
            if stop := self.sides[growing].advance(self.kg, self.max_frontier):
                capped[growing] = stop
        if best is not None and best <= depth:  # met within the depth, though a cap left shorter ways unsearched
            return self._found(best, met)
        if capped:
            return Reach(None, depth, gold_ids=self.golds.ids, reason=next(iter(capped.values())))
        if not self._golds_in_kg():
            return Reach(None, depth, gold_ids=self.golds.ids, reason="no gold answer is a node of the KG")
        return Reach(False, depth, gold_ids=self.golds.ids)

    def searched(self) -> int:
        """The cost up to which every path has been seen: the two radii added, or one alone while
        the other end knows only its seeds (a path within the one radius reaches them)."""
        radii = (self.topic.radius, self.gold.radius)
        return sum(radii) if min(radii) >= 0 else max(radii)

    def _found(self, best: int, met: list[tuple[int, str, str]]) -> Reach:
        """Up to ``max_paths`` distinct shortest paths, through each meeting node in turn."""
        paths: list[list[Step]] = []
        for _, here, there in (m for m in met if m[0] == best):
            ways = itertools.product(
                itertools.islice(self.topic.chains(here), self.max_paths),
                itertools.islice(self.gold.chains(there), self.max_paths),
            )
            for before, after in ways:
                path = before + after
                nodes = [path[0].source, *(s.target for s in path)] if path else []
                if path and path not in paths and len(set(nodes)) == len(nodes):
                    paths.append(path)
                if len(paths) == self.max_paths:
                    return Reach(True, self.horizon.depth, best, paths, gold_ids=self.golds.ids)
        return Reach(True, self.horizon.depth, best, paths, gold_ids=self.golds.ids)

    def _golds_in_kg(self) -> bool:
        """Whether any gold answer has an edge in the KG, asking only when the search never
        walked from the gold answers."""
        if self.gold.with_edges:
            return True
        if set(self.golds.ids) <= self.gold.expanded:
            return False
        entities = self.golds.entities
        return len(missing(self.kg, entities)) < len(entities) or bool(self.kg.edges(self.golds.literals, "in"))


class _Counted:
    """The KG reads one check issues, counted on a shallow copy of the run's KG: the copy shares
    its store, connections and result cache, so other threads' questions are not counted."""

    def __init__(self, kg: SparqlKG):
        self.sent = 0
        self._read = kg.read
        self.kg = copy.copy(kg)
        self.kg.read = self.read  # type: ignore[method-assign]

    def read(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        self.sent += 1
        return self._read(key, compute)


class Reacher:
    """One per run; thread-safe (questions run in parallel worker threads). ``unnamed``: whether
    the KG may hold unnamed (CVT) entities. When it holds none (``kgx.kg.unnamed_possible``), a
    ``cvt_free`` horizon is searched as the plain one (``as_searched``): same answer, without asking
    each level's namedness or the wider gold-side levels a free hop allows (StructGPT on MetaQA
    3-hop: 50 queries a question before, as many as ToG's after), and one cache entry."""

    def __init__(
        self,
        kg: SparqlKG,
        kg_key: str,
        cache_dir: Optional[Path],
        max_frontier: int = 20_000,
        max_paths: int = 20,
        unnamed: bool = True,
    ):
        self.kg = kg
        self.kg_key = kg_key
        self.unnamed = unnamed
        self.max_frontier = max_frontier
        self.max_paths = max_paths
        self.cache = ReachCache(cache_dir, kg_key) if cache_dir is not None else None

    def check(self, question: Question, horizon: Horizon) -> Reach:
        """The question's reachability within ``horizon``: from the cache, or searched."""
        start = time.perf_counter()
        horizon = self.as_searched(horizon)
        kg = self.kg.for_question(question.id)  # a question's own subgraph (kg.scope=question) is its KG
        key = self.key(question, horizon, kg.view)
        hit = self.cache.get(key) if self.cache else None
        if hit is not None:
            return Reach.from_dict({**hit, "queries": 0, "cached": True, "seconds": time.perf_counter() - start})
        counted = _Counted(kg)
        try:
            reach = self._search(counted.kg, question, horizon)
        except Exception as exc:  # any KG failure: unknown, and not cached (the next run asks again)
            reason = f"kg: {type(exc).__name__}: {exc}"
            return Reach(None, horizon.depth, queries=counted.sent, reason=reason, seconds=time.perf_counter() - start)
        reach.queries = counted.sent
        reach.seconds = time.perf_counter() - start
        if self.cache:
            self.cache.put(key, reach.to_dict())
        return reach

    def _search(self, kg: SparqlKG, question: Question, horizon: Horizon) -> Reach:
        topics = sorted(t for t in question.topic_entities if NODE_ID.match(t))
        if not topics:
            return Reach(None, horizon.depth, reason="no topic entity is a KG id")
        golds = gold_nodes(kg, question)
        if not golds.ids:
            return Reach(None, horizon.depth, reason="no gold answer is a node of the KG")
        reach = _Search(kg, topics, golds, horizon, self.max_frontier, self.max_paths).run()
        if reach.paths:
            reach.names = kg.names(sorted({x for path in reach.paths for s in path for x in (s.source, s.target)}))
        return reach

    def as_searched(self, horizon: Horizon) -> Horizon:
        """What a check searches for ``horizon``: on a KG without CVTs, a free hop out of one is none."""
        return Horizon(horizon.depth) if horizon.cvt_free and not self.unnamed else horizon

    def key(self, question: Question, horizon: Horizon, view: str = "") -> list:
        """The cache key of ``question`` within ``horizon`` (as searched): what a result depends on
        besides the KG (the cache file is per KG), and a question's own subgraph's ``view``."""
        given = question.meta.get("answer_ids")
        gold = sorted(map(str, given)) if given else sorted(sorted(a) for a in question.answers)
        key = [self.kg_key, sorted(question.topic_entities), gold, horizon.depth, horizon.cvt_free]
        return [*key, self.max_frontier, self.max_paths, *([view] if view else [])]

    def cached(self, question: Question, horizon: Horizon) -> bool:
        """Whether the cache holds the check of ``question`` on the whole KG (a check costs a
        lookup then, not a search): what the estimate counts its cold questions by."""
        return self.cache is not None and self.cache.get(self.key(question, self.as_searched(horizon))) is not None

    def close(self) -> None:
        if self.cache:
            self.cache.close()
