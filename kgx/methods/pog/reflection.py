"""PoG's Reflection mechanism (Chen et al., NeurIPS 2024: self-correction): after a depth that did not
suffice, the model decides whether entities met at earlier depths should join the next frontier,
and which. Kept apart so that ``__init__.py`` reads as the exploration loop."""

from __future__ import annotations

from kgx.core.types import Question
from kgx.methods import kit
from kgx.methods.base import Context
from kgx.methods.pog import prompts as prompts
from kgx.methods.pog.memory import Memory, distinct_labels
from kgx.methods.samplers import ranker, shortlist


def reflect(question: Question, mem: Memory, upcoming: list[str], depth: int, ctx: Context) -> list[str]:
    """Reflection: should entities met earlier join the next frontier, and which? Returns those added."""
    p = ctx.params  # PoGConfig
    if len(set(mem.backtracked.values())) >= p.max_backtracks:
        return []
    pool = mem.pool(upcoming)
    if not pool:
        ctx.trace.note("reflection", f"depth {depth}: no entity met earlier to go back to")
        return []
    prompt = prompts.reflection_prompt(question.text, [mem.name(e) for e in upcoming], mem.notes, mem.lines())
    reply = kit.ask(
        ctx,
        "reflection",
        prompts.messages(p.exemplars, "reflection", prompt),
        schema=prompts.reflection_schema(),
        temperature=p.temperature_reason,
        note=f"no reflection at depth {depth}; exploring on",
    )
    if reply is None:
        return []
    reason = reply["reason"].strip()
    if not reply["add"]:
        mem.decisions.append(f"depth {depth}: go on ({reason})")
        ctx.trace.note(
            "reflection", f"depth {depth}: go on", depth=depth, reason=reason, upcoming=[mem.name(e) for e in upcoming]
        )
        return []
    labels = distinct_labels(pool, mem)
    shown = shortlist(
        ctx.trace, "backtrack", f"{question.text} {reason}", list(labels), p.max_entities, ranker(p.prune)
    )
    chosen = kit.choose(
        ctx,
        "backtrack",
        prompts.messages(
            p.exemplars, "backtrack", prompts.backtrack_prompt(question.text, reason, shown, mem.notes, p.max_added)
        ),
        {"entities": shown},
        high=p.max_added,
        low=0,
        temperature=p.temperature_reason,
        note=f"no entity chosen to go back to at depth {depth}",
    )
    added = [labels[label] for label in chosen.get("entities", [])]
    for entity in added:
        mem.backtracked[entity] = depth
        if entity not in mem.depth_of:
            mem.keep(mem.seen[entity])  # the triple it was met by joins the subgraph
    names = [mem.name(e) for e in added]
    mem.decisions.append(f"depth {depth}: back to {', '.join(names) or 'nothing chosen'} ({reason})")
    ctx.trace.note(
        "reflection",
        f"depth {depth}: add entities met earlier",
        depth=depth,
        reason=reason,
        upcoming=[mem.name(e) for e in upcoming],
        added=names,
    )
    return added
