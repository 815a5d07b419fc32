"""LMP: language message passing (Wan et al., "Digest the Knowledge", Sec. 3 and App. A).

For each topic entity, layer by layer (Alg. 1):
  1. Sampling: choose the top-K relations leaving the previous layer (LLM, BM25 or SBERT), all of
     them, the way back included (Eq. 1 samples the l-hop relations and excludes none);
  2. Aggregation: for each chosen relation, one line per head entity naming all its neighbours
     (no LLM; unnamed CVT nodes are described by their attributes, App. C.3), except entities
     already pooled, which the readout lists already;
  3. Transformation: one LLM call summarises the K aggregated facts for the question;
  4. Pooling: the neighbours reached through one relation become one hyper-entity whose text is
     that summary.
Then the facts graph is read out depth-first as a numbered outline (Alg. 2, ``facts``) and
given to the final answer call. ``method.depth`` counts hops as in the paper's Table 7: a layer
whose neighbours are CVT nodes reaches the CVT's attributes too, so it covers two hops (App. C.2).

Calls (Sec. 4.4's 2L + 1): at most one sampling and one transformation call per layer and topic
entity, then one answer call, plus the retries of App. A.7. Fewer with ``sampler`` bm25/sbert or
``transformation=False`` (no such call), with ``sample_when_trivial=False`` (no sampling call in
a layer offering at most K relations), or when message passing stops early.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from kgx.core.config import MethodConfig, check_choice, check_temperature
from kgx.core.types import Horizon, Prediction, Question
from kgx.kg.freebase import is_literal
from kgx.llm.errors import OutputError
from kgx.methods import kit
from kgx.methods.answers import answers_schema, braces, clean_answers, unnumbered
from kgx.methods.base import Context, register
from kgx.methods.fallbacks import no_answer
from kgx.methods.kit import Hop
from kgx.methods.lmp import prompts as prompts
from kgx.methods.lmp.facts import Fact, FactsGraph, explanation, readout
from kgx.methods.samplers import check_available, rank


@dataclass
class LMPConfig(MethodConfig):
    """Language message passing (Wan et al.); field meanings follow the paper's Sec. 3 and App. A."""

    name: str = "lmp"
    width: int = 3  # K: relations sampled per layer
    depth: int = 1  # L: hops from the topic entity (Table 7); a layer through CVT nodes covers two
    temperature: float = 0.0  # sampling and transformation; answering too (the paper sets 0 everywhere)
    sampler: str = "llm"  # llm | bm25 | sbert (App. D.2)
    aggregation: bool = True  # False: raw triples instead of one line per head entity (Table 5)
    transformation: bool = True  # False: raw aggregated text instead of summarised facts
    readout: bool = True  # False: only the last layer's facts, no outline
    evidence: str = "facts"  # facts | path (LMP-path: the facts graph's triples as paths)
    answer_style: str = "hits"  # hits: "all the possible answers" | f1: one answer each (App. D.1)
    max_neighbors: int = 30  # per head entity and relation; hubs are cut and the cut recorded
    max_relations: int = 80  # candidate relations offered to the sampler per layer
    max_answers: int = 5
    # True (the paper): the model ranks the candidates even when there are no more than K of them;
    # False: such a layer keeps them all without a sampling call (one call fewer per such layer)
    sample_when_trivial: bool = True

    def horizon(self) -> Horizon:
        """Reachability's bound: ``depth`` counts a layer through CVT nodes as its two hops
        (App. C.2), as the KG does."""
        return Horizon(self.depth)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(1, "width", "depth", "max_neighbors", "max_relations", "max_answers")
        check_temperature("method.temperature", self.temperature)
        check_choice("method.sampler", self.sampler, ("llm", "bm25", "sbert"))
        check_choice("method.evidence", self.evidence, ("facts", "path"))
        check_choice("method.answer_style", self.answer_style, ("hits", "f1"))


class NoKnowledge(Exception):
    """Message passing cannot go on; the question is answered without knowledge (App. A.7)."""


# --------------------------------------------------------------------------- the algorithm


def check(params: LMPConfig) -> None:
    check_available(params.sampler)


@register("lmp", config=LMPConfig, stages=("sampling", "transformation", "answer"), check=check)
def answer(question: Question, ctx: Context) -> Prediction:
    p: LMPConfig = ctx.params
    graphs: list[FactsGraph] = []
    reasons: list[str] = []
    for topic, name in question.topic_entities.items():
        try:
            graphs.append(message_passing(question, topic, name, ctx))
        except NoKnowledge as exc:
            reasons.append(str(exc))
            ctx.trace.note("lmp", "answering without knowledge", topic=topic, reason=str(exc))
    if not question.topic_entities:
        reasons.append("the question names no topic entity")
    graphs = [g for g in graphs if len(g.facts) > 1]
    if not graphs and not reasons:
        reasons.append("message passing found no facts")
    knowledge = "\n".join(readout(g, p.evidence, p.readout) for g in graphs)
    evidence = [kit.triple_text(*t) for g in graphs for f in g.facts for t in f.triples]
    evidence += [f.text for g in graphs for f in g.facts[1:]]
    if graphs:
        ctx.trace.explanation = explanation(question, graphs, knowledge).to_dict()
    schema = {"type": "object", "properties": {"answers": answers_schema(p.max_answers)}, "required": ["answers"]}
    reply = kit.ask(
        ctx,
        "answer",
        prompts.answer(question.text, knowledge or "(none)", p.answer_style),
        temperature=p.temperature,
        schema=schema,
        fallback=lambda exc: no_answer(ctx, exc, evidence, "; ".join(reasons)),
    )
    if isinstance(reply, Prediction):
        return reply
    answers = clean_answers(reply["answers"])
    layers = max((f.depth for g in graphs for f in g.facts), default=0)
    return Prediction(
        answer=braces(answers),
        answers=answers,
        evidence=evidence,
        status="ok" if graphs else "fallback",
        reason="" if graphs else "; ".join(reasons),
        stats={"layers": float(layers)},
    )


def message_passing(question: Question, topic: str, name: str, ctx: Context) -> FactsGraph:
    """Alg. 1 for one topic entity: sample, aggregate, transform, pool, layer by layer."""
    p: LMPConfig = ctx.params
    graph = FactsGraph(topic, name, [Fact("0", name, 0, [topic])])
    frontier = graph.facts[:1]
    hops, depth = 0, 0
    while hops < p.depth and frontier:
        depth += 1
        options = {f.id: candidate_hops(f, ctx) for f in frontier}
        if not any(options.values()):
            if depth == 1:
                raise NoKnowledge(f"topic entity {topic} ({name}) has no relations in the KG")
            ctx.trace.note("lmp", f"layer {depth}: the frontier has no relations; stopping", topic=topic)
            break
        chosen = sample(question, graph, frontier, options, ctx)
        aggregated = [aggregate(graph, frontier, options, hop, depth, ctx) for hop in chosen]
        aggregated = [f for f in aggregated if f.members]
        new = pool(aggregated, transform(question, graph, frontier, aggregated, ctx))
        graph.facts.extend(new)
        hops += 2 if any(f.through_cvt for f in new) else 1
        frontier = [f for f in new if any(not is_literal(m) for m in f.members)]
    return graph


def candidate_hops(fact: Fact, ctx: Context) -> list[Hop]:
    """Every relation of the pooled entities, both directions, capped at ``method.max_relations``.
    The reverse of the hop that pooled them is offered too: Eq. (1) samples all the l-hop relations,
    and "films with the same director as X" walks back along the relation it came by (what that
    would only repeat, :func:`aggregate` leaves out)."""
    found: dict[Hop, None] = {}
    for entity in fact.members:
        if is_literal(entity):
            continue
        for direction in ("out", "in"):
            found.update((Hop(relation, direction), None) for relation in ctx.kg.relations(entity, direction))
    return kit.cap(ctx, "sampling", list(found), ctx.params.max_relations, "relation options", fact=fact.id)


def sample(
    question: Question, graph: FactsGraph, frontier: list[Fact], options: dict[str, list[Hop]], ctx: Context
) -> list[Hop]:
    """Eq. (1): TopK of the frontier's relations given the question and the previous facts."""
    p: LMPConfig = ctx.params
    by_label = {hop.label: hop for hops in options.values() for hop in hops}
    labels = list(by_label)
    k = min(p.width, len(labels))
    if p.sampler != "llm":
        return [by_label[label] for label, _ in rank(p.sampler, question.text, labels, k)]
    if not p.sample_when_trivial and len(labels) <= p.width:
        ctx.trace.note(
            "sampling", f"{len(labels)} relations for K={p.width}: all kept without a call", relations=labels
        )
        return list(by_label.values())
    chosen: list[str] = []
    retries = ctx.llm.retries("sampling") if p.max_retries is None else p.max_retries
    step = ctx.llm.retry_step("sampling")
    for attempt in range(retries + 1):
        # App. A.7: a short reply is pooled with the next attempt's, which is asked only for the
        # relations still missing, one retry step warmer, until K are chosen.
        rest = [label for label in labels if label not in chosen]
        need = min(k - len(chosen), len(rest))
        if graph.facts[1:]:
            messages = prompts.sample_deeper(
                question.text,
                graph.topic_name,
                [(f.text, [hop.label for hop in options[f.id] if hop.label in rest]) for f in frontier],
                need,
            )
        else:
            messages = prompts.sample_first(question.text, graph.topic_name, rest, need)
        reply = kit.choose(
            ctx,
            "sampling",
            messages,
            {"relations": rest},
            low=need,
            high=need,
            temperature=min(2.0, p.temperature + step * attempt),
            retries_=0,
            why="relation not among the candidates",
            note=f"attempt {attempt + 1} chose nothing",
        )
        if not reply:  # invalid output (counted by the client, noted by choose): the next attempt asks again
            continue
        chosen += reply["relations"]
        if chosen and len(labels) <= p.width:  # every candidate is kept; the reply only ranks them
            chosen += [label for label in labels if label not in chosen]
        if len(chosen) >= k:
            break
        if attempt < retries:
            ctx.llm.discard("sampling", f"{len(chosen)} of {k} distinct relations; asking for the rest")
    if not chosen:
        raise NoKnowledge(f"sampling chose no valid relation in {retries + 1} tries")
    if len(chosen) < k:
        ctx.trace.note("sampling", f"kept {len(chosen)} of {k} relations after the retries")
    return [by_label[label] for label in chosen]


def aggregate(
    graph: FactsGraph, frontier: list[Fact], options: dict[str, list[Hop]], hop: Hop, depth: int, ctx: Context
) -> Fact:
    """Eq. (2), App. A.4: one line per head entity with all its new neighbours through the relation.
    Entities pooled at earlier layers (the topic among them) are left out of the members, the
    lines and the walked pairs, and their number noted: the readout lists them already, and a way
    back (director -> films) must not offer the question's own film as a new answer."""
    p: LMPConfig = ctx.params
    pooled = {m for f in graph.facts for m in f.members}
    parents = [f for f in frontier if hop in options[f.id]]
    heads = [e for f in parents for e in f.members if not is_literal(e)]
    reached = {h: ctx.kg.neighbors(h, hop.relation, hop.direction, limit=p.max_neighbors) for h in heads}
    dropped = {t for tails in reached.values() for t in tails} & pooled
    reached = {h: [t for t in tails if t not in pooled] for h, tails in reached.items()}
    reached = {h: tails for h, tails in reached.items() if tails}
    names = ctx.kg.names(list(dict.fromkeys([*reached, *(t for ts in reached.values() for t in ts)])))
    verb = "has relation" if hop.direction == "out" else "is reached by the reverse of relation"
    lines, walked = [], []
    for head, tails in reached.items():
        tail_names = [names.get(t, t) for t in tails]
        walked += [(names.get(head, head), t) for t in tail_names]
        lines.append(
            f"The entity {names.get(head, head)} {verb} {hop.relation} with following "
            f"entities: {', '.join(tail_names)}."
        )
    fact = Fact(
        id=f"{depth}:{hop.label}",
        text="",
        depth=depth,
        hop=hop,
        parents=[f.id for f in parents],
        members=list(dict.fromkeys(t for ts in reached.values() for t in ts)),
        walked=walked,
    )
    fact.aggregated = " ".join(lines if p.aggregation else [kit.triple_text(*t) for t in fact.triples])
    fact.through_cvt = any(kit.unnamed(names.get(m, m)) for m in fact.members if not is_literal(m))
    if dropped:
        ctx.trace.note(
            "lmp",
            f"layer {depth}: {len(dropped)} entities already pooled left out of {hop.label}",
            fact=fact.id,
            dropped=len(dropped),
            kept=len(fact.members),
        )
    return fact


def transform(
    question: Question, graph: FactsGraph, frontier: list[Fact], aggregated: list[Fact], ctx: Context
) -> list[str]:
    """Eq. (3), App. A.5: K summaries in the facts' order, under the retry policy of App. A.7.

    A reply with another count than K stays a failure of the whole call: no knowledge for this
    topic, as the paper says. A summary that would erase its fact (see :func:`unusable`) fails the
    call too, so it is asked again; if it still does, the facts whose summaries stayed unusable keep
    their aggregated text, noted in the trace, rather than losing what the layer found."""
    p: LMPConfig = ctx.params
    if not aggregated:
        return []
    if not p.transformation:
        return [f.aggregated for f in aggregated]
    k = len(aggregated)
    background = [f.text for f in frontier if f.depth > 0]
    names = {graph.topic_name, *(name for f in frontier for _, name in f.walked)}  # the heads' names
    last: list[Optional[str]] = []  # the latest reply with K summaries, None where unusable

    def k_usable(reply: Any) -> list[str]:
        summaries = [unnumbered(s) for s in reply["facts"]]
        if len(summaries) != k:
            raise ValueError(f"{len(summaries)} summaries for {k} facts")
        flaws = [unusable(s, names) for s in summaries]
        last[:] = [None if flaw else s for s, flaw in zip(summaries, flaws)]
        bad = [f"fact {i}: {flaw}" for i, flaw in enumerate(flaws, 1) if flaw]
        if bad:
            raise ValueError(f"{k - len(bad)} usable summaries for {k} facts ({'; '.join(bad)})")
        return summaries

    def salvage(exc: OutputError) -> list[str]:
        if not last:
            raise NoKnowledge(f"transformation failed: {exc}") from exc
        ctx.trace.note(
            "transformation",
            "unusable summaries replaced by the aggregated text",
            error=str(exc),
            facts=[f.id for f, s in zip(aggregated, last) if s is None],
        )
        return [s or f.aggregated for f, s in zip(aggregated, last)]

    schema = {
        "type": "object",
        "required": ["facts"],
        "properties": {
            "facts": {"type": "array", "items": {"type": "string", "maxLength": 200}, "minItems": k, "maxItems": k}
        },
    }
    messages = prompts.transform(question.text, graph.topic_name, [f.aggregated for f in aggregated], background)
    return kit.ask(
        ctx, "transformation", messages, schema=schema, temperature=p.temperature, validate=k_usable, fallback=salvage
    )


def unusable(summary: str, names: set[str]) -> str:
    """Why a summary would erase its fact ("" if it would not): empty, only punctuation or
    brackets, or just the name of the topic or of a frontier entity (also as the prompt's own
    ``topic: <name>`` line echoed), case-insensitive. The empty case is judged here rather than
    by the schema so that the retry message counts it with the others."""
    if not summary.strip():
        return "empty"
    if not re.search(r"\w", summary):
        return "only punctuation"
    bare = re.sub(r"^\s*topic\s*:", "", summary, flags=re.I).strip(" \t.,;:!?\"'()[]{}").casefold()
    return "a copy of the entity name" if bare in {n.casefold() for n in names} else ""


def pool(aggregated: list[Fact], summaries: list[str]) -> list[Fact]:
    """Each relation's neighbours become one hyper-entity whose text is its summary."""
    for fact, summary in zip(aggregated, summaries):
        fact.text = summary
    return aggregated
