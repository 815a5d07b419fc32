"""Is a gold answer reachable in the run's KG from the question's topic entities, within the
method's depth? A method cannot find an answer its horizon does not hold, so a run
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
from pathlib import Path
from typing import Any, Callable, Hashable, Optional

from kgx.core.reachability import NO_GOLD_NODE, Reach, Step
from kgx.core.types import Horizon, Question
from kgx.core.values import parse
from kgx.diagnose.gold_nodes import NODE_ID, GoldLiterals, Golds, gold_nodes
from kgx.diagnose.reach_cache import ReachCache
from kgx.diagnose.reach_side import MAX_PARENTS, Side
from kgx.kg.entities import missing
from kgx.kg.freebase import is_literal
from kgx.kg.sparql import SparqlKG

MAX_OTHER_FRONTIER = 2_000  # a side's frontier in the oracle's search from another topic (gold_path.topic_paths)


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
            "topic": Side(topics, gold=False, cvt_free=horizon.cvt_free),
            "gold": Side(golds.ids, gold=True, cvt_free=horizon.cvt_free),
        }
        self.topic, self.gold = self.sides["topic"], self.sides["gold"]
        self.values = GoldLiterals(golds.literals)
        # A name-level KG (MetaQA, PathQuestion, a custom KB, RoG subgraphs) holds a value as an
        # entity named by it, printed its own way ("7.69202e+06" for the gold 7692024): with a
        # gold value no entity is named exactly, the topic side's entities are read by name.
        self.by_value = any(parse(v[1:-1]) is not None for v in golds.literals)
        self.stating: dict[str, str] = {}  # entity met from the topic side -> the gold value its name states
        self.read: set[str] = set()

    def meetings(self) -> list[tuple[int, str, str]]:
        """(cost, node on the topic side, node on the gold side) wherever the two ends touch; a
        value met from the topic side, or an entity named by a value, touches a gold value it
        states (``GoldLiterals.stated_by``)."""
        found = [(self.topic.cost[x] + self.gold.cost[x], x, x) for x in self.topic.cost.keys() & self.gold.cost.keys()]
        found += [
            (self.topic.cost[x], x, gold)
            for x in self.topic.literals
            if x not in self.gold.cost and (gold := self.values.stated_by(x))
        ]
        if self.by_value:
            self.read_values()
            found += [(self.topic.cost[x], x, gold) for x, gold in self.stating.items() if x not in self.gold.cost]
        return sorted(found)

    def read_values(self) -> None:
        """Name the topic side's entities not yet read (one batched query) and keep those whose
        name states a gold value."""
        new = sorted(x for x in self.topic.cost if x not in self.read and not is_literal(x))
        if not new:
            return
        self.read.update(new)
        for x, name in self.kg.names(new).items():
            if name != x and (gold := self.values.stated_by(f'"{name}"')):
                self.stating[x] = gold

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
            return Reach(None, depth, gold_ids=self.golds.ids, reason=NO_GOLD_NODE)
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
                    return Reach(True, self.horizon.depth, best, paths, gold_ids=self.gold_ids())
        return Reach(True, self.horizon.depth, best, paths, gold_ids=self.gold_ids())

    def gold_ids(self) -> list[str]:
        """The gold answers as KG nodes: the golds', and the entities met whose name states a gold value."""
        return [*self.golds.ids, *sorted(self.stating)]

    def _golds_in_kg(self) -> bool:
        """Whether any gold answer has an edge in the KG, asking only when the search never
        walked from the gold answers."""
        if self.gold.with_edges:
            return True
        if set(self.golds.ids) <= self.gold.expanded:
            return False
        entities = self.golds.entities
        return len(missing(self.kg, entities)) < len(entities) or bool(self.kg.edges(self.golds.literals, "in"))


def other_topic_search(kg: SparqlKG, question: Question, topic: str, depth: int, max_frontier: int) -> Reach:
    """Shortest gold paths from the one ``topic`` (of ``question``'s), within ``depth``; uncached."""
    if not NODE_ID.match(topic):
        return Reach(None, depth)
    golds = gold_nodes(kg, question)
    return (
        _Search(kg, [topic], golds, Horizon(depth), max_frontier, MAX_PARENTS).run()
        if golds.ids
        else Reach(None, depth)
    )


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


CHAINED = ("qtype", "path", "paths")  # meta keys that give a question's gold chain (kgx.diagnose.gold_path)


def hops_of(question: Question) -> Optional[int]:
    """The dataset's hop count of ``question`` (``meta.hops``), None when it gives none."""
    hops = question.meta.get("hops")
    return int(hops) if isinstance(hops, (int, str)) and str(hops).isdigit() else None


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

    def check(self, question: Question, horizon: Horizon, seen: Optional[SparqlKG] = None) -> Reach:
        """The question's reachability within ``horizon``: from the cache, or searched. ``seen``
        is the KG the question's method reads when it is not the whole view (``kg.drop``)."""
        start = time.perf_counter()
        horizon = self.as_searched(horizon)
        kg = seen or self.kg.for_question(question.id)  # a question's own subgraph (kg.scope=question) is its KG
        key = self.key(question, horizon, kg.view)
        hit = self.cache.get(key) if self.cache else None
        labels = {"hops": hops_of(question), "chained": any(k in question.meta for k in CHAINED)}
        if hit is not None:
            cached = {**hit, "queries": 0, "cached": True, "seconds": time.perf_counter() - start}
            return Reach.from_dict({**cached, **labels})
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
        reach.hops, reach.chained = labels["hops"], labels["chained"]
        return reach

    def _search(self, kg: SparqlKG, question: Question, horizon: Horizon) -> Reach:
        topics = sorted(t for t in question.topic_entities if NODE_ID.match(t))
        if not topics:
            return Reach(None, horizon.depth, reason="no topic entity is a KG id")
        golds = gold_nodes(kg, question)
        if not golds.ids:
            return Reach(None, horizon.depth, reason=NO_GOLD_NODE)
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
