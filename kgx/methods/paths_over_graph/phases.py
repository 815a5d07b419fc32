"""Paths-over-Graph's question analysis and its three exploration phases (Tan et al., WWW 2025,
Sec. 4.1-4.2; released PoG_single.py and PoG_multi.py), each ending in the check of
``search.py``: the steps of ``__init__.py``'s docstring, one function each.
"""

from __future__ import annotations

import math
from typing import Optional

from kgx.core.metrics import normalize
from kgx.core.types import Prediction, Question
from kgx.kg.freebase import is_literal
from kgx.methods import kit
from kgx.methods.answers import clean_answers, final_answer
from kgx.methods.base import Context
from kgx.methods.paths_over_graph import prompts as prompts
from kgx.methods.paths_over_graph.routes import Route, connecting, merged, reach, routes_from
from kgx.methods.paths_over_graph.search import Analysis, Search

WAYPOINTS = 3  # entities the indicator names that join the topic entities (released: the 3 most similar)


# --------------------------------------------------------------------------- initialization


def analyse(question: Question, ctx: Context) -> Analysis:
    """``question_analysis``: the indicator and split questions; the depth is the indicator's
    relations, at least 1 and at most D_max."""
    p = ctx.params
    topics = list(question.topic_entities.values())
    reply = kit.ask(
        ctx,
        "question_analysis",
        prompts.messages("question_analysis", prompts.analysis_prompt(question.text, topics), p.exemplars),
        schema=prompts.analysis_schema(p.depth, len(topics)),
        temperature=p.temperature_explore,
        note="no analysis: explored from depth 1 without an indicator",
    )
    if reply is None:
        return Analysis([], [], 1)
    indicator = [s.strip() for s in reply["indicator"] if s.strip()]
    split = [s.strip() for s in reply["split_questions"] if s.strip()]
    depth = min(max(1, (len(indicator) - 1) // 2), p.depth)
    ctx.trace.note("question_analysis", "analysis", indicator=indicator, split_questions=split, depth=depth)
    return Analysis(indicator, split, depth)


def begin(question: Question, ctx: Context) -> Search:
    """The analysis, and the topic entities in the order the indicator names them."""
    analysis = analyse(question, ctx)
    topics = question.topic_entities
    anchors = ordered(list(topics), topics, " - ".join(analysis.indicator))
    return Search.start(question, analysis, ctx, anchors)


def ordered(ids: list[str], names: dict[str, str], text: str) -> list[str]:
    """``ids`` in the order ``text`` names them; those it does not name last, in their order."""
    said = normalize(text)

    def place(item: tuple[int, str]) -> tuple[float, int]:
        at = said.find(normalize(names.get(item[1], item[1]))) if said else -1
        return (at if at >= 0 else math.inf, item[0])

    return [i for _, i in sorted(enumerate(ids), key=place)]


def named(search: Search, texts: list[str]) -> list[str]:
    """Entities of the explored graph (the reduced graph, if any) named like one of ``texts``."""
    within = search.within if search.within is not None else frozenset(search.sub.depth)
    index: dict[str, list[str]] = {}
    for x in within:
        if x not in search.anchors and not is_literal(x):
            index.setdefault(normalize(search.sub.names.get(x, x)), []).append(x)
    return list(dict.fromkeys(x for t in texts for x in sorted(index.get(normalize(t), []))))


def waypoints(search: Search) -> list[str]:
    """The entities the indicator names (not the answer) that the subgraph holds."""
    said = [e for e in search.analysis.indicator[0::2] if not e.lower().startswith("answer")]
    return named(search, said)[:WAYPOINTS]


# --------------------------------------------------------------------------- phase 1


def topic_paths(search: Search) -> Optional[Prediction]:
    """Topic entity path exploration: from the predicted depth to D_max, the subgraph grown to D
    hops, its paths pruned together with those kept before, then the check."""
    p = search.ctx.params
    several = len(search.anchors) > 1
    first = min(math.ceil(search.analysis.depth / 2) if several else search.analysis.depth, p.depth)
    for depth in range(first, p.depth + 1):
        search.sub.grow(depth)
        search.depth = depth
        routes = candidates(search, depth, exact=depth > first)
        if not routes:
            search.ctx.trace.note("path_selection", f"no topic entity path at depth {depth}")
            continue
        search.found = search.pruner.prune(merged([*search.found, *routes]))
        found = search.check(search.found, 1, f"topic entity paths at depth {depth}")
        if found is not None:
            return found
    return None


def candidates(search: Search, depth: int, exact: bool) -> list[Route]:
    """One topic entity: its paths of length ``depth`` (up to it when ``exact`` is false). Several:
    the paths joining them, whose entities become the reduced graph; if they do not connect by
    D_max, each one's paths alone. Waypoints add the paths joining them to the topic entities."""
    sub, anchors, p = search.sub, search.anchors, search.ctx.params
    if len(anchors) == 1:
        levels = routes_from(anchors[0], depth, sub)
        routes = levels[depth] if exact else [r for level in levels[1:] for r in level]
    else:
        routes = connecting(anchors, depth, sub)
        if routes:
            search.within = reach(routes)
        elif depth == p.depth:
            search.ctx.trace.note(
                "path_selection", f"the topic entities do not connect within {depth} hops: each is explored alone"
            )
            routes = [r for a in anchors for level in routes_from(a, depth, sub)[1:] for r in level]
    text = " - ".join(search.analysis.indicator)
    for point in waypoints(search):
        routes += connecting(ordered([*anchors, point], search.sub.names, text), depth, sub)
    return merged(routes)


# --------------------------------------------------------------------------- phase 2


def supplement(search: Search) -> Optional[Prediction]:
    """LLM supplement path exploration: the predicted answers the explored graph holds by name,
    each joined to the topic entities in the order its chain names them, at the fewest hops that
    join them; pruned, then checked with the topic entity paths."""
    ctx, p = search.ctx, search.ctx.params
    content = prompts.paths_prompt(search.head, search.texts(search.found), search.summaries, search.question.text)
    reply = kit.ask(
        ctx,
        "supplement",
        prompts.messages("supplement", content, p.exemplars),
        schema=prompts.supplement_schema(p.predictions),
        temperature=p.temperature_explore,
        note="no prediction: no supplement paths",
    )
    if reply is None:
        return None
    answers, chains = clean_answers(reply["answers"], p.predictions), [c.strip() for c in reply["chains"]]
    ctx.trace.note("supplement", "predictions", answers=answers, chains=chains)
    routes: list[Route] = []
    for i, answer in enumerate(answers):
        chain = chains[i] if i < len(chains) else " ".join(chains)
        for node in named(search, [answer]):
            order = ordered([*search.anchors, node], search.sub.names, chain)
            for hops in range(1, p.depth + 1):
                found = connecting(order, hops, search.sub, search.within)
                if found:
                    routes += found
                    break
    if not routes:
        ctx.trace.note("supplement", "no predicted answer joins the topic entities: no supplement paths")
        return None
    search.supplemented = search.pruner.prune(merged(routes))
    return search.check([*search.found, *search.supplemented], 2, "LLM supplement paths")


# --------------------------------------------------------------------------- phase 3


def expansion(search: Search) -> Optional[Prediction]:
    """Node expansion exploration: the paths of phases 1 and 2 pruned to ``width``; then, at most
    D_max rounds, the entities the paths show (not yet expanded) expanded one hop inside the
    explored graph, the best edges joined to the expansion paths that end where they start (or
    kept alone), the expansion paths pruned again beyond ``max_expansions``, and the check."""
    ctx, p, sub = search.ctx, search.ctx.params, search.sub
    base = search.pruner.prune(search.paths())
    done = set(search.anchors)
    for round_ in range(1, p.depth + 1):
        entities = [
            x for r in [*base, *search.expanded] for x in shown(r, search) if x not in done and not is_literal(x)
        ]
        entities = list(dict.fromkeys(entities))
        if not entities:
            ctx.trace.note("path_selection", f"node expansion: no entity left to expand after round {round_ - 1}")
            break
        done.update(entities)
        edges = [
            Route(x, (hop,), (frozenset((x, y) for y in others),))
            for x in entities
            for hop, others in sub.edges(x, search.within).items()
        ]
        if not edges:
            continue
        chosen = search.pruner.narrow(edges, [*base, *search.expanded])
        search.expanded = joined(search.expanded, chosen)
        if len(search.expanded) > p.max_expansions:
            search.expanded = search.pruner.narrow(search.expanded, base)
        found = search.check([*base, *search.expanded], 3, f"node expansion round {round_}")
        if found is not None:
            return found
    return None


def shown(route: Route, search: Search) -> list[str]:
    """The entities a path shows: at most ``max_shown`` per set, by name (as the prompts list them)."""
    names, limit = search.sub.names, search.ctx.params.max_shown
    out = []
    for i in range(len(route.hops) + 1):
        out += sorted(route.at(i), key=lambda x: names.get(x, x))[:limit]
    return out


def joined(paths: list[Route], edges: list[Route]) -> list[Route]:
    """Each path extended by the edges that start at its one end entity; the rest kept as they are."""
    out, used = [], set()
    for path in paths:
        onward = [e for e in edges if path.end == frozenset({e.start})]
        out += [path.then(e) for e in onward] or [path]
        used.update(onward)
    return out + [e for e in edges if e not in used]


# --------------------------------------------------------------------------- no topic entity


def no_topic(question: Question, ctx: Context) -> Prediction:
    """Nothing to explore: ``answer`` from the model's own knowledge (status ``fallback``)."""
    p = ctx.params
    ctx.trace.note("question_analysis", "the question names no topic entity: nothing to explore")
    content = prompts.paths_prompt(prompts.context(question.text, [], [], []), [], [], question.text)
    return final_answer(
        ctx,
        prompts.messages("answer", content, p.exemplars),
        [],
        "no topic entity: answered from the model's own knowledge",
        temperature=p.temperature_reason,
        max_answers=p.max_answers,
    )
