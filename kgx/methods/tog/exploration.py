"""One depth of Think-on-Graph's beam search, per frontier entity: its relations pruned, the
entities they reach scored, every extension scored relation score x entity score (Sec. 2.1).

Kept apart from the search loop (``__init__.py``) so that each reads as its part of the paper. Entity
scoring comes in two forms: kgx's one ``entity_score`` call per frontier entity for all its kept
relations (``method.score_per=entity``), and the released code's one call per kept relation
(``method.score_per=relation``, up to N calls per frontier entity). Every exploration call goes
through :func:`explore_ask`, which counts it against ``method.max_calls`` (CGPE Sec. 4.1 stops
ToG after 30 LLM calls and answers from the paths explored so far).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kgx.core.types import Question
from kgx.kg.freebase import DIRECTIONS
from kgx.methods import cgpe, kit
from kgx.methods.base import Context
from kgx.methods.cgpe import CGPEConfig
from kgx.methods.kit import Arc, Hop
from kgx.methods.samplers import rank
from kgx.methods.tog.prompts import (
    entity_prompt,
    entity_scores,
    messages,
    relation_prompt,
    relation_scores,
    scored_schema,
)
from kgx.methods.tog.search import Candidate, Path, Search, labelled


class CallCap(Exception):
    """The question has made ``method.max_calls`` LLM calls: exploration stops here."""


def explore_ask(search: Search, ctx: Context, stage: str, *args: Any, **kwargs: Any) -> Any:
    """One exploration call (``kit.ask``), counted; refused with :class:`CallCap` once the
    question has made ``method.max_calls`` calls, so that the answer call still fits."""
    cap = ctx.params.max_calls
    if cap is not None and search.calls >= cap:
        raise CallCap(f"{search.calls} LLM calls made, method.max_calls={cap}")
    search.calls += 1
    return kit.ask(ctx, stage, *args, **kwargs)


def shares(scores: list[float]) -> list[float]:
    """Scores as shares of their sum (negative BM25 scores count as 0); all zero: equal shares."""
    clipped = [max(0.0, s) for s in scores]
    total = sum(clipped)
    return [s / total for s in clipped] if total > 0 else [1.0 / len(scores)] * len(scores)


# --------------------------------------------------------------------------- topic entities


def topic_entities(question: Question, ctx: Context) -> tuple[dict[str, str], int]:
    """The topic entities and the LLM calls spent finding them. ``method.topics=gold``: the
    dataset's own, as ToG's released code reads them from the data. ``clues``: the KG nodes named
    by CGPE's clue extraction (Sec. 3.2-3.3, one call), which CGPE gave ToG in place of gold
    entities (Sec. 4.1: "we instructed TOG to use the same entity extraction prompt as CGPE")."""
    p = ctx.params
    if p.topics == "gold":
        return dict(question.topic_entities), 0
    as_cgpe = replace(ctx, params=CGPEConfig(temperature=p.temperature_explore))
    clues = cgpe.extract_clues(question, as_cgpe)
    roots = cgpe.initial_nodes(clues, as_cgpe) if clues else []
    if clues and not roots:
        wider = cgpe.widened(question, clues, as_cgpe)
        roots = cgpe.initial_nodes(wider, as_cgpe) if wider != clues else []
    nodes = list(dict.fromkeys(root.nodes[0] for root in roots))
    return (ctx.kg.names(nodes) if nodes else {}), 1


def start(topics: dict[str, str], ctx: Context) -> list[Path]:
    """Depth 0: the topic entities, at most N of them, so that the call bound holds."""
    found, width = list(topics), ctx.params.width
    kept = kit.cap(ctx, "relation_prune", found, width, "topic entities", dropped=found[width:])
    return [Path(t) for t in kept]


# --------------------------------------------------------------------------- one frontier entity


def relation_prune(question: Question, path: Path, search: Search, ctx: Context) -> list[tuple[Hop, float]]:
    """Up to N relations at the path's end with scores adding up to 1. Scores that do not are
    the model's ranking all the same: they are normalised, noted with their sum and counted,
    not re-asked. Only a reply that stays unusable (an unknown or repeated relation, no positive
    score) falls back to the first N candidates."""
    p = ctx.params
    entity = path.end
    try:
        hops = [
            Hop(relation, direction)
            for direction in DIRECTIONS
            for relation in sorted(ctx.kg.relations(entity, direction, limit=p.max_relations))
        ]
    except ValueError as exc:  # a topic entity that is not a KG id
        ctx.trace.note("relation_prune", f"cannot explore {entity}: {exc}", entity=entity)
        return []
    if len(hops) <= 1:
        return [(h, 1.0) for h in hops]
    labels = [h.label for h in hops]
    by_label = {h.label: h for h in hops}
    k = min(p.width, len(hops))
    if p.prune != "llm":
        ranked = rank(p.prune, question.text, labels, k)
        ctx.trace.note("relation_prune", f"{p.prune} scores", entity=entity, scores=ranked)
        return [(by_label[label], s) for (label, _), s in zip(ranked, shares([s for _, s in ranked]))]
    prompt = relation_prompt(question.text, search.name(entity), labels, k)
    chosen, total = explore_ask(
        search,
        ctx,
        "relation_prune",
        messages("relation_prune", prompt, p.exemplars),
        schema=scored_schema("relations", "relation", labels, 1, k),
        temperature=p.temperature_explore,
        validate=relation_scores(labels),
        fallback=([(label, 1.0 / k) for label in labels[:k]], 1.0),
        note=f"no usable scores: fell back to the first {k} candidates, equal scores",
        entity=entity,
    )
    if abs(total - 1.0) > p.score_tolerance:
        search.normalised += 1
        ctx.trace.note(
            "relation_prune",
            f"relation scores added up to {total:.3f}: normalised",
            entity=entity,
            total=total,
            scores=chosen,
        )
    return [(by_label[label], score) for label, score in chosen]


def neighbours(path: Path, hop: Hop, search: Search, ctx: Context, random_entities: bool) -> list[str]:
    """Entities through ``hop`` the search has not reached yet, capped by ``max_neighbors``;
    ToG-R keeps ``num_retain_entity`` of them at random, ToG only from hubs (``sample_above``)."""
    p = ctx.params
    found = ctx.kg.neighbors(path.end, hop.relation, hop.direction, limit=p.max_neighbors)
    found = sorted({x for x in found if x not in search.reached})
    keep = min(p.num_retain_entity, len(found))
    if not random_entities and len(found) < p.sample_above:
        return found
    if keep < len(found):
        ctx.trace.note(
            "entity_score",
            f"{len(found)} candidates through {hop.label}: {keep} kept at random",
            entity=path.end,
            relation=hop.label,
        )
    return ctx.rng.sample(found, keep)


def score_tokens(labels: list[str]) -> int:
    """Room for one ``{"entity": label, "score": 0.25}`` item per candidate: the label's length in
    tokens (about 3 characters each) plus 15 for the item's JSON, and 40 for the frame. A hub of 20
    long film titles needs ~600 tokens, more than a 512-token default (demo-038 was cut there)."""
    return 40 + sum(15 + len(label) // 3 for label in labels)


Groups = dict[Hop, list[Candidate]]


def entity_score(
    question: Question, path: Path, candidates: list[Candidate], search: Search, ctx: Context
) -> list[tuple[Candidate, float]]:
    """Each candidate's share within its relation: one ``entity_score`` call for all the kept
    relations (``score_per=entity``), or one per relation (``score_per=relation``, the released
    code); a relation whose candidates are one entity each needs no call."""
    p = ctx.params
    groups: Groups = {}
    for c in candidates:
        groups.setdefault(c.hop, []).append(c)
    if all(len(g) == 1 for g in groups.values()):
        return [(c, 1.0) for c in candidates]
    if p.prune != "llm":
        out: list[tuple[Candidate, float]] = []
        for group in groups.values():
            ranked = dict(rank(p.prune, question.text, [c.label for c in group], len(group)))
            out.extend(zip(group, shares([ranked[c.label] for c in group])))
        ctx.trace.note(
            "entity_score", f"{p.prune} shares", entity=path.end, scores=[(c.hop.label, c.label, s) for c, s in out]
        )
        return out
    batches = [groups] if p.score_per == "entity" else [{hop: group} for hop, group in groups.items()]
    return [scored for batch in batches for scored in score_batch(question, path, batch, search, ctx)]


def score_batch(
    question: Question, path: Path, groups: Groups, search: Search, ctx: Context
) -> list[tuple[Candidate, float]]:
    """One ``entity_score`` call for ``groups``, one score per distinct entity, turned into shares
    within each relation; none when every relation reaches one entity."""
    if all(len(g) == 1 for g in groups.values()):
        return [(c, 1.0) for group in groups.values() for c in group]
    p = ctx.params
    labels = list(dict.fromkeys(c.label for group in groups.values() for c in group))
    prompt = entity_prompt(
        question.text, search.name(path.end), [(h.label, [c.label for c in g]) for h, g in groups.items()]
    )
    scores = explore_ask(
        search,
        ctx,
        "entity_score",
        messages("entity_score", prompt, p.exemplars),
        schema=scored_schema("scores", "entity", labels, len(labels), len(labels)),
        temperature=p.temperature_explore,
        validate=entity_scores(labels),
        fallback={label: 1.0 for label in labels},
        max_tokens=score_tokens(labels),
        note="fell back to equal scores within each relation",
        entity=path.end,
    )
    out = []
    for group in groups.values():
        raw = [scores[c.label] for c in group]
        total = sum(raw)
        out.extend((c, s / total if total > 0 else 0.0) for c, s in zip(group, raw))
    return out


def explore(question: Question, path: Path, search: Search, ctx: Context, random_entities: bool) -> list[Path]:
    """One frontier entity: its relations pruned, its candidate entities scored (ToG) or sampled
    (ToG-R); every extension scored relation score x entity score."""
    candidates = [
        Candidate(path, hop, score, entity)
        for hop, score in relation_prune(question, path, search, ctx)
        for entity in neighbours(path, hop, search, ctx, random_entities)
    ]
    if not candidates:
        return []
    unnamed = [c.entity for c in candidates if c.entity not in search.names]
    if unnamed:
        search.names.update(ctx.kg.names(unnamed))
    labelled(candidates, search)
    if random_entities:
        scored = [(c, 1.0) for c in candidates]
    else:
        scored = entity_score(question, path, candidates, search, ctx)
    return [c.path.extend(Arc(c.path.end, c.hop, c.entity), c.relation_score * s) for c, s in scored]
