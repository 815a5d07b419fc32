"""Generate-on-Graph's Generate action (Sec. 5.3): the LLM as a KG, when the triples read lack a
fact the thought needs.

Three steps, then linking:
  1. Choosing: the ``method.related_triples`` known triples closest to the thought by BM25;
  2. Generating: ``method.samples`` generations of at most ``method.max_generated`` triples each
     ("repeated n times to minimize error and hallucination"), sampled apart as self-consistency's
     samples are;
  3. Verifying: one call keeps, among the distinct generated triples, those relevant and most
     likely true (at most ``max_generated``): they are the Observation.
A generated entity the search has not met is linked to the KG (Sec. 5.3, last paragraph): the KG's
entities of that name (``kg.search``), and where there are several, the ``link`` call chooses one
by their types. A linked entity can be searched in a later step; an unlinked one stays a name.

The released code verifies only with more than one generation (``--sc_num`` > 1; its default is
1); kgx verifies every Generate action, as the paper describes it.
"""

from __future__ import annotations

from typing import Optional

from kgx.llm.errors import OutputError
from kgx.methods import kit
from kgx.methods.base import Context
from kgx.methods.gog.memory import Fact, Memory
from kgx.methods.gog.prompts import (
    generate_messages,
    generate_prompt,
    generate_schema,
    link_messages,
    link_prompt,
    verify_messages,
    verify_prompt,
)

Triple = tuple[str, str, str]


def generating(thought: str, known: list[str], ctx: Context) -> list[list[Triple]]:
    """The triples of each generation that gave valid output."""
    p = ctx.params
    messages = generate_messages(generate_prompt(thought, known, p.max_generated), p.exemplars)
    schema = generate_schema(p.max_generated)
    if p.samples == 1:
        replies = [kit.ask(ctx, "generate", messages, schema=schema, temperature=p.temperature, note="no triples")]
    else:
        replies = ctx.llm(
            "generate", messages, schema=schema, temperature=p.temperature, n=p.samples, retries=kit.retries(ctx)
        )
        failed = sum(isinstance(r, OutputError) for r in replies)
        if failed:
            ctx.trace.note("generate", f"{failed} of {p.samples} generations without valid output: left out")
    return [
        [(t["subject"].strip(), t["relation"].strip(), t["object"].strip()) for t in reply["generated"]]
        for reply in replies
        if isinstance(reply, dict)
    ]


def verifying(thought: str, attempts: list[list[Triple]], ctx: Context) -> list[Triple]:
    """The generated triples the ``verify`` call keeps, at most ``max_generated``."""
    p = ctx.params
    by_text = {kit.triple_text(*t): t for attempt in attempts for t in attempt}
    if not by_text:
        return []
    texts = [[kit.triple_text(*t) for t in attempt] for attempt in attempts]
    kept = kit.choose(
        ctx,
        "verify",
        verify_messages(verify_prompt(thought, texts, p.max_generated), p.exemplars),
        {"verified": list(by_text)},
        high=min(p.max_generated, len(by_text)),
        low=0,
        temperature=p.temperature,
        note="no generated triple kept",
    )
    return [by_text[text] for text in kept.get("verified", [])]


def link(name: str, thought: str, memory: Memory, ctx: Context) -> Optional[str]:
    """The KG entity a generated ``name`` stands for: one GoG has met, else one the KG names so
    (chosen by the ``link`` call among several); None when the KG names none."""
    if name in memory.ids:
        return memory.ids[name]
    p = ctx.params
    found = ctx.kg.search(name, limit=p.link_candidates)
    if len(found) > 1:
        labels, kinds = ctx.kg.names(found), ctx.kg.types(found)
        candidates = [(node, labels.get(node, node), kinds.get(node, "")) for node in found]
        chosen = kit.choose(
            ctx,
            "link",
            link_messages(link_prompt(thought, name, candidates), p.exemplars),
            {"entity": found},
            high=1,
            temperature=p.temperature,
            note=f"'{name}' not linked",
        )
        found = chosen.get("entity", [])
    if not found:
        ctx.trace.note("link", f"the KG names no entity '{name}': it stays a name", name=name)
        return None
    return found[0]


def linking(triples: list[Triple], thought: str, memory: Memory, ctx: Context) -> list[Fact]:
    """The kept triples as facts, their entities linked to the KG and labelled one hop beyond the
    entity they join (or beyond every entity met, when they join none)."""
    facts = []
    for subject, relation, obj in triples:
        ids = [link(name, thought, memory, ctx) for name in (subject, obj)]
        met = [memory.depth[x] for x in ids if x is not None and x in memory.depth]
        depth = (min(met) if met else max(memory.depth.values(), default=0)) + 1
        new = [x for x in ids if x is not None and x not in memory.labels]
        if new:
            memory.know(ctx.kg.names(new), depth)
        facts.append(Fact(subject, relation, obj, (ids[0] or "", ids[1] or ""), generated=True))
    return facts


def generate(thought: str, memory: Memory, ctx: Context) -> str:
    """``Generate[thought]``: the Observation, the verified triples one per line."""
    known = memory.related(thought, ctx.params.related_triples)
    kept = verifying(thought, generating(thought, known, ctx), ctx)
    facts = linking(kept, thought, memory, ctx)
    memory.add(facts)
    return "\n".join(f.text() for f in facts) or "No triples were generated."
