"""Generate-on-Graph's Search action (Sec. 5.2): for each entity named, Exploring (its relations,
both ways) and Filtering (the LLM keeps the top-N relations for the last thought), then the
triples through the kept relations as the Observation.

A relation that reaches more than ``method.per_relation`` entities shows that many, sampled at
random with the run's seeded generator (the released ``sample_triples_by_relation`` keeps 5).
"""

from __future__ import annotations

from kgx.kg.freebase import DIRECTIONS
from kgx.methods import kit
from kgx.methods.base import Context
from kgx.methods.gog.memory import Fact, Memory
from kgx.methods.gog.prompts import filter_messages, filter_prompt
from kgx.methods.kit import Hop


def exploring(node: str, ctx: Context) -> list[Hop]:
    """Every relation at ``node``, each way it can be walked (capped by ``method.max_relations``
    per direction, a cut the KG call records)."""
    try:
        return [
            Hop(relation, direction)
            for direction in DIRECTIONS
            for relation in sorted(ctx.kg.relations(node, direction, limit=ctx.params.max_relations))
        ]
    except ValueError as exc:  # a topic entity that is not a KG id
        ctx.trace.note("filter", f"cannot explore {node}: {exc}", entity=node)
        return []


def filtering(thought: str, label: str, hops: list[Hop], ctx: Context) -> list[Hop]:
    """Up to N relations for the thought, best first, or none (the released prompt allows []); an
    entity with a single relation needs no call."""
    if len(hops) <= 1:
        return hops
    p = ctx.params
    by_label = {h.label: h for h in hops}
    k = min(p.relations, len(hops))
    chosen = kit.choose(
        ctx,
        "filter",
        filter_messages(filter_prompt(thought, label, list(by_label), k), p.exemplars),
        {"relations": list(by_label)},
        high=k,
        low=0,
        temperature=p.temperature,
        note=f"no relations chosen at {label}",
    )
    return [by_label[r] for r in chosen.get("relations", [])]


def read(node: str, hop: Hop, memory: Memory, ctx: Context) -> list[str]:
    """The entities across ``hop``, at most ``method.per_relation`` of them, sampled at random."""
    p = ctx.params
    ends = ctx.kg.neighbors(node, hop.relation, hop.direction, limit=p.max_neighbors)
    if len(ends) <= p.per_relation:
        return ends
    ctx.trace.note(
        "filter",
        f"{len(ends)} entities through {hop.label}: {p.per_relation} read at random",
        entity=node,
        relation=hop.label,
    )
    return sorted(ctx.rng.sample(sorted(ends), p.per_relation))


def search(labels: list[str], thought: str, memory: Memory, ctx: Context) -> tuple[str, list[str]]:
    """``Search[labels]``: the Observation (the triples read, one per line) and the entities it
    reached first."""
    facts: list[Fact] = []
    reached: list[str] = []
    for label in labels:
        node = memory.ids[label]
        memory.searched.add(node)
        for hop in filtering(thought, label, exploring(node, ctx), ctx):
            ends = read(node, hop, memory, ctx)
            new = [x for x in ends if x not in memory.labels]
            if new:
                memory.know(ctx.kg.names(new), memory.depth[node] + 1)
                reached += new
            for end in ends:
                s, r, o = hop.triple(node, end)
                facts.append(Fact(memory.label(s), r, memory.label(o), (s, o)))
    memory.add(facts)
    shown = list(dict.fromkeys(f.text() for f in facts))
    return "\n".join(shown) or "No triples were found.", reached
