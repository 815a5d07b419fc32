"""LMP: language message passing (Wan et al., "Digest the Knowledge", Sec. 3 and App. A).

For each topic entity, layer by layer (Alg. 1):
  1. Sampling: choose the top-K relations leaving the previous layer (LLM, BM25 or SBERT);
  2. Aggregation: for each chosen relation, one line per head entity naming all its neighbours
     (no LLM; unnamed CVT nodes are described by their attributes, App. C.3);
  3. Transformation: one LLM call summarises the K aggregated facts for the question;
  4. Pooling: the neighbours reached through one relation become one hyper-entity whose text is
     that summary.
Then the facts graph is read out depth-first as a numbered outline (Alg. 2) and given to the
final answer call. ``method.depth`` counts hops as in the paper's Table 7: a layer whose
neighbours are CVT nodes reaches the CVT's attributes too, so it covers two hops (App. C.2).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from kgx.config import MethodConfig, check_choice, check_temperature
from kgx.explain import Edge, Graph, Node
from kgx.kg.freebase import is_literal
from kgx.llm.client import OutputError
from kgx.methods import kit
from kgx.methods import lmp_prompts as prompts
from kgx.methods.base import Context, register
from kgx.methods.kit import Hop
from kgx.methods.lmp_samplers import check_available, rank
from kgx.types import Prediction, Question


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

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(1, "width", "depth", "max_neighbors", "max_relations", "max_answers")
        check_temperature("method.temperature", self.temperature)
        check_choice("method.sampler", self.sampler, ("llm", "bm25", "sbert"))
        check_choice("method.evidence", self.evidence, ("facts", "path"))
        check_choice("method.answer_style", self.answer_style, ("hits", "f1"))


@dataclass
class Fact:
    """A node of the facts graph: the topic entity, or a hyper-entity pooled by one relation."""

    id: str
    text: str  # the summarised fact (the topic's name for the root)
    depth: int
    members: list[str]  # entity ids pooled into this node
    hop: Optional[Hop] = None  # the relation that pooled it
    parents: list[str] = field(default_factory=list)
    aggregated: str = ""
    walked: list[tuple[str, str]] = field(default_factory=list)  # (head, tail) names, in the hop's direction
    through_cvt: bool = False  # members are unnamed nodes described by their attributes

    @property
    def triples(self) -> list[tuple[str, str, str]]:
        """The walked pairs as the KG stores them."""
        return [self.hop.triple(head, tail) for head, tail in self.walked] if self.hop else []


class NoKnowledge(Exception):
    """Message passing cannot go on; the question is answered without knowledge (App. A.7)."""


@dataclass
class FactsGraph:
    topic: str
    topic_name: str
    facts: list[Fact] = field(default_factory=list)

    def children(self, fact: Fact) -> list[Fact]:
        return [f for f in self.facts if f.parents and f.parents[0] == fact.id]

    def layer(self, depth: int) -> list[Fact]:
        return [f for f in self.facts if f.depth == depth]


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
    knowledge = "\n".join(readout(g, p) for g in graphs)
    evidence = [kit.triple_text(*t) for g in graphs for f in g.facts for t in f.triples]
    evidence += [f.text for g in graphs for f in g.facts[1:]]
    if graphs:
        ctx.trace.explanation = explanation(question, graphs, knowledge).to_dict()
    schema = {"type": "object", "properties": {"answers": kit.answers_schema(p.max_answers)}, "required": ["answers"]}
    reply = ctx.llm("answer", prompts.answer(question.text, knowledge or "(none)", p.answer_style),
                    temperature=p.temperature, schema=schema, retries=kit.retries(ctx))
    answers = kit.clean_answers(reply["answers"])
    layers = max((f.depth for g in graphs for f in g.facts), default=0)
    return Prediction(answer=kit.braces(answers), answers=answers, evidence=evidence,
                      status="ok" if graphs else "fallback", reason="" if graphs else "; ".join(reasons),
                      stats={"layers": float(layers)})


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
        aggregated = [aggregate(frontier, options, hop, depth, ctx) for hop in chosen]
        aggregated = [f for f in aggregated if f.walked]
        new = pool(aggregated, transform(question, graph, frontier, aggregated, ctx))
        graph.facts.extend(new)
        hops += 2 if any(f.through_cvt for f in new) else 1
        frontier = [f for f in new if any(not is_literal(m) for m in f.members)]
    return graph


def candidate_hops(fact: Fact, ctx: Context) -> list[Hop]:
    """Relations of the pooled entities, both directions, except straight back along the hop that
    pooled them; capped at ``method.max_relations``."""
    found: dict[Hop, None] = {}
    for entity in fact.members:
        if is_literal(entity):
            continue
        for direction in ("out", "in"):
            for relation in ctx.kg.relations(entity, direction):
                hop = Hop(relation, direction)
                if fact.hop is None or hop.reverse() != fact.hop:
                    found[hop] = None
    return kit.cap(ctx, "sampling", list(found), ctx.params.max_relations, "relation options", fact=fact.id)


def sample(question: Question, graph: FactsGraph, frontier: list[Fact], options: dict[str, list[Hop]],
           ctx: Context) -> list[Hop]:
    """Eq. (1): TopK of the frontier's relations given the question and the previous facts."""
    p: LMPConfig = ctx.params
    by_label = {hop.label: hop for hops in options.values() for hop in hops}
    labels = list(by_label)
    k = min(p.width, len(labels))
    if p.sampler != "llm":
        return [by_label[label] for label, _ in rank(p.sampler, question.text, labels, k)]
    chosen: list[str] = []
    retries = ctx.llm.retries("sampling") if p.max_retries is None else p.max_retries
    step = ctx.llm.retry_step("sampling")
    for attempt in range(retries + 1):
        # App. A.7: a short reply is pooled with the next attempt's, which is asked only for the
        # relations still missing, one retry step warmer, until K are chosen.
        rest = [label for label in labels if label not in chosen]
        need = min(k - len(chosen), len(rest))
        if graph.facts[1:]:
            messages = prompts.sample_deeper(question.text, graph.topic_name, [
                (f.text, [hop.label for hop in options[f.id] if hop.label in rest]) for f in frontier], need)
        else:
            messages = prompts.sample_first(question.text, graph.topic_name, rest, need)
        reply = kit.choose(ctx, "sampling", messages, {"relations": rest}, low=need, high=need,
                           temperature=min(2.0, p.temperature + step * attempt), retries_=0,
                           why="relation not among the candidates", note=f"attempt {attempt + 1} chose nothing")
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


def aggregate(frontier: list[Fact], options: dict[str, list[Hop]], hop: Hop, depth: int, ctx: Context) -> Fact:
    """Eq. (2), App. A.4: one line per head entity with all its neighbours through the relation."""
    p: LMPConfig = ctx.params
    parents = [f for f in frontier if hop in options[f.id]]
    heads = [e for f in parents for e in f.members if not is_literal(e)]
    reached = {h: ctx.kg.neighbors(h, hop.relation, hop.direction, limit=p.max_neighbors) for h in heads}
    reached = {h: tails for h, tails in reached.items() if tails}
    names = ctx.kg.names(list(dict.fromkeys([*reached, *(t for ts in reached.values() for t in ts)])))
    verb = "has relation" if hop.direction == "out" else "is reached by the reverse of relation"
    lines, walked = [], []
    for head, tails in reached.items():
        tail_names = [names.get(t, t) for t in tails]
        walked += [(names.get(head, head), t) for t in tail_names]
        lines.append(f"The entity {names.get(head, head)} {verb} {hop.relation} with following "
                     f"entities: {', '.join(tail_names)}.")
    fact = Fact(id=f"{depth}:{hop.label}", text="", depth=depth, hop=hop, parents=[f.id for f in parents],
                members=list(dict.fromkeys(t for ts in reached.values() for t in ts)), walked=walked)
    fact.aggregated = " ".join(lines if p.aggregation else [kit.triple_text(*t) for t in fact.triples])
    fact.through_cvt = any(_unnamed(names.get(m, m)) for m in fact.members if not is_literal(m))
    return fact


def transform(question: Question, graph: FactsGraph, frontier: list[Fact], aggregated: list[Fact],
              ctx: Context) -> list[str]:
    """Eq. (3), App. A.5: exactly K summaries in order, or the retry policy, or no knowledge."""
    p: LMPConfig = ctx.params
    if not aggregated:
        return []
    if not p.transformation:
        return [f.aggregated for f in aggregated]
    k = len(aggregated)
    background = [f.text for f in frontier if f.depth > 0]

    def exactly_k(reply: Any) -> list[str]:
        summaries = [kit.unnumbered(s) for s in reply["facts"]]
        if len(summaries) != k or not all(summaries):
            raise ValueError(f"{len(summaries)} non-empty summaries for {k} facts")
        return summaries

    def no_knowledge(exc: OutputError) -> list[str]:
        raise NoKnowledge(f"transformation failed: {exc}") from exc

    schema = {"type": "object", "required": ["facts"], "properties": {"facts": {
        "type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 200},
        "minItems": k, "maxItems": k}}}
    messages = prompts.transform(question.text, graph.topic_name, [f.aggregated for f in aggregated], background)
    return kit.ask(ctx, "transformation", messages, schema=schema, temperature=p.temperature,
                   validate=exactly_k, fallback=no_knowledge)


def pool(aggregated: list[Fact], summaries: list[str]) -> list[Fact]:
    """Each relation's neighbours become one hyper-entity whose text is its summary."""
    for fact, summary in zip(aggregated, summaries):
        fact.text = summary
    return aggregated


# --------------------------------------------------------------------------- readout


def readout(graph: FactsGraph, p: LMPConfig) -> str:
    """Alg. 2: DFS from the topic, numbering children 1., 1.1, 1.1.2 ...; or an ablation's text."""
    if p.evidence == "path":
        return "\n".join(paths(graph))
    if not p.readout:
        last = max(f.depth for f in graph.facts)
        return "\n".join(f"- {f.text}" for f in graph.layer(last))
    numbers: dict[str, tuple[int, ...]] = {graph.facts[0].id: ()}
    stack = [graph.facts[0]]
    while stack:
        top = stack.pop()
        for idx, child in enumerate(graph.children(top), 1):
            if child.id not in numbers:
                numbers[child.id] = (*numbers[top.id], idx)
                stack.append(child)
    by_id = {f.id: f for f in graph.facts}
    lines = [f"{graph.topic_name}:"]
    for fid, number in sorted(numbers.items(), key=lambda item: item[1]):
        if number:
            lines.append(f"{'  ' * (len(number) - 1)}{'.'.join(map(str, number))}. {by_id[fid].text}")
    return "\n".join(lines)


def paths(graph: FactsGraph) -> list[str]:
    """LMP-path (Table 5): the facts graph's walked triples chained into paths from the topic entity."""
    into: dict[str, tuple[str, str, str]] = {}  # "depth:name" -> (the node it was reached from, relation, arrow)
    for fact in graph.facts[1:]:
        for near, far in fact.walked:
            into.setdefault(f"{fact.depth}:{far}", (f"{fact.depth - 1}:{near}", fact.hop.relation, fact.hop.arrow))
    has_child = {parent for parent, _, _ in into.values()}
    out = []
    for node in into:
        if node in has_child:
            continue
        parts, current = [], node
        while current in into:
            parent, relation, arrow = into[current]
            parts.append(f" {arrow} {relation} {arrow} {current.split(':', 1)[1]}")
            current = parent
        out.append(current.split(":", 1)[1] + "".join(reversed(parts)))
    return out


def explanation(question: Question, graphs: list[FactsGraph], outline: str) -> Graph:
    """The facts graphs as one picture (paper Fig. 5): nodes are summarised facts."""
    g = Graph(title=question.text, text=outline)
    for i, fg in enumerate(graphs):
        for fact in fg.facts:
            g.nodes.append(Node(f"{i}/{fact.id}", fact.text, fact.depth, "topic" if fact.depth == 0 else ""))
            for parent in fact.parents:
                g.edges.append(Edge(f"{i}/{parent}", f"{i}/{fact.id}", fact.hop.label if fact.hop else ""))
    return g


def _unnamed(label: str) -> bool:
    """``ctx.kg.names`` describes an unnamed node as ``(attribute: value; ...)``."""
    return label.startswith("(") and label.endswith(")")
