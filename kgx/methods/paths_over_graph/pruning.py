"""Paths-over-Graph's path pruning (Tan et al., WWW 2025, Sec. 4.3): from many candidate paths to
the few the LLM reasons over, in up to three steps (the released ``Beam_search``):

1. fuzzy selection: the paths ranked against the question and its indicator without an LLM,
   the best ``fuzzy_width`` kept (the released code ranks with a sentence encoder, SBERT;
   ``method.sampler=bm25`` is kgx's offline default, ``sbert`` the encoder of ``kgx/methods/samplers.py``);
2. branch-reduced selection: while more than ``branch_width`` paths remain, the LLM chooses among
   their first hops (or last hops, whichever side has fewer), one ``branch_selection`` call per side,
   and the paths of the branches it leaves are dropped: the graph's structure prunes whole branches;
3. precise path selection: the LLM chooses ``width`` paths, ``batch`` candidates per
   ``path_selection`` call, round after round until ``width`` remain (the released loop).

``method.selection`` runs all three (``full``, the released ``123``), fuzzy and precise
(``precise``, ``13``), fuzzy and branch (``branch``, ``12``), or fuzzy alone (``fuzzy``, ``1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Hashable

from kgx.methods import kit
from kgx.methods.paths_over_graph import prompts as prompts
from kgx.methods.paths_over_graph.routes import Route, entity_set
from kgx.methods.samplers import rank

if TYPE_CHECKING:
    from kgx.methods.base import Context


@dataclass
class Pruner:
    """What the pruning of one question needs: its prompt head, the ranking query and the names."""

    ctx: "Context"
    question: str
    head: str  # the prompts' context: topic entities, indicator, split questions
    query: str  # what fuzzy selection ranks against: the question and its indicator
    names: dict[str, str]

    def text(self, route: Route) -> str:
        return route.text(self.names, self.ctx.params.max_shown)

    def prune(self, routes: list[Route], known: Sequence[Route] = ()) -> list[Route]:
        """The paths kept of ``routes`` (``known``: paths found before, shown for context)."""
        p = self.ctx.params
        routes = self.fuzzy(routes, p.fuzzy_width if p.selection != "fuzzy" else p.width)
        if p.selection in ("full", "branch"):
            routes = self.branches(routes, p.branch_width if p.selection == "full" else p.width)
        if p.selection in ("full", "precise"):
            return self.precise(routes, list(known))
        return kit.cap(self.ctx, "path_selection", routes, p.width, "paths after branch reduction")

    def narrow(self, routes: list[Route], known: list[Route]) -> list[Route]:
        """Node expansion's selection: precise selection alone, as released, after a fuzzy
        selection that bounds its calls (fuzzy alone with ``selection=fuzzy``)."""
        p = self.ctx.params
        if p.selection == "fuzzy":
            return self.fuzzy(routes, p.width)
        return self.precise(self.fuzzy(routes, p.fuzzy_width), known)

    def fuzzy(self, routes: list[Route], keep: int) -> list[Route]:
        """Step 1: the ``keep`` paths most like the query, ranked without an LLM."""
        if len(routes) <= keep:
            return routes
        by_text = {}
        for r in routes:
            by_text.setdefault(self.text(r), r)
        ranked = rank(self.ctx.params.sampler, self.query, list(by_text), keep)
        self.ctx.trace.note("path_selection", f"fuzzy selection: {len(routes)} paths, {len(ranked)} kept")
        return [by_text[text] for text, _ in ranked]

    def branches(self, routes: list[Route], target: int) -> list[Route]:
        """Step 2: while more than ``target`` paths remain, one ``branch_selection`` call per side
        (first hops, then last hops, the side with fewer branches first) keeps the chosen branches."""
        sides: list[Callable[[Route], Hashable]] = [head, tail]
        sides.sort(key=lambda side: len({side(r) for r in routes}))
        for side in sides:
            if len(routes) <= target:
                break
            groups: dict[Hashable, Route] = {}
            for r in routes:
                groups.setdefault(side(r), r)
            if len(groups) < 2:
                continue
            shown = kit.cap(self.ctx, "branch_selection", list(groups), self.ctx.params.batch, "branches")
            texts = [branch_text(groups[key], side is head, self.names, self.ctx.params.max_shown) for key in shown]
            chosen = set(self.choose("branch_selection", texts, self.ctx.params.width, []))
            if chosen:
                kept = {shown[i] for i in chosen}
                routes = [r for r in routes if side(r) in kept]
        return routes

    def precise(self, routes: list[Route], known: list[Route]) -> list[Route]:
        """Step 3: while more than ``width`` paths remain, one ``path_selection`` call per ``batch``
        of them chooses ``width`` (the released loop, 40 candidates a call)."""
        p = self.ctx.params
        while len(routes) > p.width:
            batches = [routes[i : i + p.batch] for i in range(0, len(routes), p.batch)]
            routes = [r for b in batches for r in self.select(b, known)]
        return routes

    def select(self, routes: list[Route], known: list[Route]) -> list[Route]:
        """One ``path_selection`` call among ``routes``; nothing usable keeps the first ``width``."""
        if len(routes) <= self.ctx.params.width:
            return routes
        known_texts = [self.text(r) for r in known]
        picked = self.choose("path_selection", [self.text(r) for r in routes], self.ctx.params.width, known_texts)
        if not picked:
            self.ctx.trace.note("path_selection", "no path chosen: the first by fuzzy rank are kept")
            return routes[: self.ctx.params.width]
        return [routes[i] for i in picked]

    def choose(self, stage: str, texts: list[str], keep: int, known: list[str]) -> list[int]:
        """The positions of the candidates the LLM chose, in its order."""
        label = "Branch" if stage == "branch_selection" else "Path"
        offered = prompts.labels(label, len(texts))
        if stage == "branch_selection":
            content = prompts.branch_prompt(self.head, texts, keep, self.question)
        else:
            content = prompts.selection_prompt(self.head, known, texts, keep, self.question)
        key = "branches" if stage == "branch_selection" else "paths"
        reply = kit.choose(
            self.ctx,
            stage,
            prompts.messages(stage, content, self.ctx.params.exemplars),
            {key: offered},
            high=keep,
            temperature=self.ctx.params.temperature_explore,
        )
        return [offered.index(x) for x in reply.get(key, [])]


def head(route: Route) -> Hashable:
    return (route.start, route.hops[:1])


def tail(route: Route) -> Hashable:
    return (route.hops[-1:], route.end)


def branch_text(route: Route, first: bool, names: dict[str, str], shown: int) -> str:
    """A branch as the prompt shows it: ``Tokyo -> r -> ...`` or ``... -> r -> Japanese yen``."""
    if not route.hops:
        return route.text(names, shown)
    if first:
        return Route(route.start, route.hops[:1], route.steps[:1]).text(names, shown) + " -> ..."
    return f"... -> {route.hops[-1].label} -> {entity_set(route.end, names, shown)}"


def calls(params: Any, candidates: int) -> int:
    """The most LLM calls one pruning of ``candidates`` paths makes (the call bound's P)."""
    p = params
    fuzzy_kept = min(candidates, p.fuzzy_width if p.selection != "fuzzy" else p.width)
    target = p.branch_width if p.selection == "full" else p.width
    branch = 2 if p.selection in ("full", "branch") and fuzzy_kept > target else 0
    return branch + (most_precise_calls(p, fuzzy_kept) if p.selection in ("full", "precise") else 0)


def narrow_calls(params: Any, candidates: int) -> int:
    """The most LLM calls :meth:`Pruner.narrow` makes for ``candidates`` paths."""
    p = params
    return 0 if p.selection == "fuzzy" else most_precise_calls(p, min(candidates, p.fuzzy_width))


def most_precise_calls(params: Any, candidates: int) -> int:
    """The most calls a precise selection of up to ``candidates`` paths makes."""
    return max(precise_calls(params, n) for n in range(candidates + 1))


def precise_calls(params: Any, candidates: int) -> int:
    """The calls of :meth:`Pruner.precise`: per round one per batch holding more than ``width``
    paths, each keeping ``width``, until ``width`` remain."""
    calls, n = 0, candidates
    while n > params.width:
        full, rest = divmod(n, params.batch)
        calls += full + (rest > params.width)
        n = full * params.width + min(rest, params.width)
    return calls
