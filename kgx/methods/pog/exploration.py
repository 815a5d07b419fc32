"""PoG's Path Exploration at one depth (Chen et al., NeurIPS 2024; steps 1-2 of ``__init__.py``'s
docstring): per frontier entity, the relations chosen (``relation_exploration``), the entities they
reach, each remembered as met (the pool reflection backtracks to), and those kept
(``entity_pruning``, or a bm25/sbert ranking).

Kept apart so that ``__init__.py`` reads as the loop over depths: guidance, exploration, memory,
evaluation and reflection.
"""

from __future__ import annotations

from kgx.core.types import Question
from kgx.kg.freebase import DIRECTIONS, is_literal
from kgx.methods import kit
from kgx.methods.base import Context
from kgx.methods.kit import Hop
from kgx.methods.pog import prompts as prompts
from kgx.methods.pog.memory import Link, Memory, distinct_labels, unnecessary
from kgx.methods.samplers import rank, ranker, shortlist


def relation_exploration(question: Question, mem: Memory, entity: str, ctx: Context) -> list[Hop]:
    """Up to ``width`` relations at ``entity``, both directions, chosen in one call. Not offered:
    the way back to where the entity was reached from (unless ``walk_back``), and relations
    explored from it before."""
    p = ctx.params  # PoGConfig
    stage = "relation_exploration"
    try:
        hops = [Hop(r, d) for d in DIRECTIONS for r in sorted(ctx.kg.relations(entity, d, limit=p.max_relations))]
    except ValueError as exc:  # a topic entity that is not a KG id
        ctx.trace.note(stage, f"cannot explore {entity}: {exc}", entity=entity)
        return []
    if p.remove_unnecessary_rel and any(unnecessary(h.relation) for h in hops):
        ctx.trace.note(
            stage,
            "unnecessary relations removed",
            entity=entity,
            removed=[h.label for h in hops if unnecessary(h.relation)],
        )
        hops = [h for h in hops if not unnecessary(h.relation)]
    hops = mem.offered_hops(entity, hops, p.walk_back)
    mem.explored.add(entity)
    if len(hops) > 1:
        by_label = {h.label: h for h in hops}
        prompt = prompts.relation_prompt(question.text, mem.subobjectives, mem.name(entity), list(by_label), p.width)
        reply = kit.choose(
            ctx,
            stage,
            prompts.messages(p.exemplars, stage, prompt),
            {"relations": list(by_label)},
            high=p.width,
            temperature=p.temperature_explore,
            note=f"no relation chosen at {mem.name(entity)}",
        )
        hops = [by_label[label] for label in reply.get("relations", [])]
    mem.walked.setdefault(entity, set()).update(hops)
    return hops


def reach(mem: Memory, entity: str, hops: list[Hop], depth: int, ctx: Context) -> dict[Hop, list[str]]:
    """Per chosen hop, the entities it reaches that the subgraph does not hold yet; all are
    remembered as met (reflection's pool) and named."""
    p = ctx.params  # PoGConfig
    groups: dict[Hop, list[str]] = {}
    for hop in hops:
        found = ctx.kg.neighbors(entity, hop.relation, hop.direction, limit=p.max_neighbors)
        new = [x for x in dict.fromkeys(found) if x not in mem.depth_of]
        for x in new:
            mem.meet(Link(entity, hop, x, depth))
        if new:
            groups[hop] = new
    unnamed = list(dict.fromkeys(x for g in groups.values() for x in g if x not in mem.names))
    if unnamed:
        mem.names.update(ctx.kg.names(unnamed))
    return groups


def entity_pruning(
    question: Question, mem: Memory, entity: str, groups: dict[Hop, list[str]], depth: int, ctx: Context
) -> list[Link]:
    """Up to ``entity_width`` entities per chosen relation, in one call for all of them. A single
    candidate is kept without asking, literal values too (the released code's rule), capped."""
    p = ctx.params  # PoGConfig
    stage = "entity_pruning"
    kept: dict[Hop, list[str]] = {hop: [] for hop in groups}
    asked: dict[Hop, dict[str, str]] = {}  # hop -> label -> entity
    for hop, found in groups.items():
        if len(found) <= 1 or all(is_literal(x) for x in found):
            kept[hop] = kit.cap(ctx, stage, found, p.entity_width, "literal values", entity=entity, relation=hop.label)
            continue
        labels = distinct_labels(found, mem)
        shown = shortlist(
            ctx.trace,
            stage,
            mem.plan(question.text),
            list(labels),
            p.max_entities,
            ranker(p.prune),
            entity=entity,
            relation=hop.label,
        )
        asked[hop] = {label: labels[label] for label in shown}
    if asked and p.prune == "llm":
        offers = {hop.label: list(labels) for hop, labels in asked.items()}
        prompt = prompts.entity_prompt(
            question.text, mem.subobjectives, mem.name(entity), list(offers.items()), p.entity_width
        )
        reply = kit.choose(
            ctx,
            stage,
            prompts.messages(p.exemplars, stage, prompt),
            offers,
            high=p.entity_width,
            low=0,
            temperature=p.temperature_reason,
            note=f"no entity kept at {mem.name(entity)}",
        )
        for hop, labels in asked.items():
            kept[hop] = [labels[label] for label in reply.get(hop.label, [])]
    elif asked:
        for hop, labels in asked.items():
            kept[hop] = [
                labels[label] for label, _ in rank(p.prune, mem.plan(question.text), list(labels), p.entity_width)
            ]
        ctx.trace.note(
            stage, f"{p.prune} kept", entity=entity, kept={hop.label: [mem.name(x) for x in kept[hop]] for hop in asked}
        )
    return [Link(entity, hop, x, depth) for hop, xs in kept.items() for x in xs]


def explore(question: Question, mem: Memory, frontier: list[str], depth: int, ctx: Context) -> list[list[str]]:
    """Path Exploration at one depth: per frontier entity, the entities it newly adds to the subgraph."""
    added: list[list[str]] = []
    for entity in frontier:
        hops = relation_exploration(question, mem, entity, ctx)
        groups = reach(mem, entity, hops, depth, ctx) if hops else {}
        if groups:
            added.append(
                [link.target for link in entity_pruning(question, mem, entity, groups, depth, ctx) if mem.keep(link)]
            )
    return added
