"""Think-on-Graph (Sun et al., ICLR 2024): the LLM walks the KG by beam search. ToG-R too.

From the topic entities, at each depth (Sec. 2.1):
  1. ``relation_prune``: per frontier entity, one call keeps up to N of its relations (both
     directions), each with a score, the scores adding up to 1 (kgx normalises, and notes,
     scores that do not: the model's ranking is kept);
  2. ``entity_score``: per frontier entity, one call scores every candidate entity reached
     through the kept relations (ToG-R, Sec. 2.2: entities are kept at random instead);
  3. the top N paths by relation score x entity score are kept; their ends are the next frontier;
  4. ``reasoning``: one call says whether the paths, with the model's own knowledge, suffice,
     and if so answers.
At max depth the ``answer`` call answers from the paths (``method.fallback=cot``: by plain CoT
without them, as the published code does); a search that finds nothing new ends early and
answers from the paths so far. Hence at most 2ND + D + 1 calls (ToG-R: ND + D + 1; bm25/sbert
pruning: D + 1), retries of invalid output not counted.

Departures from the published code (IDEA-FinAI/ToG), each a defect there: entities are scored
once per frontier entity across its relations, not once per relation (up to 32 calls at
N = D = 3); names are looked up by id, never zipped with ids after unnamed ones are dropped;
incoming edges are queried with the entity in the object slot, not the predicate slot; retries
are bounded; sampling uses the run's seeded generator; and the answer is the answer entities,
never the {Yes} of the sufficiency check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from kgx.core.config import ConfigError, MethodConfig, check_choice, check_temperature
from kgx.core.types import Horizon, Prediction, Question
from kgx.kg.freebase import DIRECTIONS
from kgx.methods import cot, kit
from kgx.methods.answers import answer_schema, sufficiency_schema
from kgx.methods.base import Context, register
from kgx.methods.fallbacks import no_answer
from kgx.methods.kit import Arc, Hop
from kgx.methods.samplers import check_available, rank
from kgx.methods.tog_prompts import (
    entity_prompt,
    entity_scores,
    messages,
    relation_prompt,
    relation_scores,
    scored_schema,
    triples_prompt,
)
from kgx.methods.tog_search import Candidate, Path, Search, frontier_of, labelled


@dataclass
class ToGConfig(MethodConfig):
    """Think-on-Graph (Sun et al., ICLR 2024, Sec. 2.1): beam search over the KG, the LLM pruning
    relations and scoring entities. Defaults are the published run's (ToG/main_freebase.py)."""

    name: str = "tog"
    width: int = 3  # N: relations kept per entity and paths kept per depth
    depth: int = 3  # D: maximum search depth
    temperature_explore: float = 0.4  # relation pruning and entity scoring
    temperature_reason: float = 0.0  # the sufficiency check and the answer
    prune: str = "llm"  # llm | bm25 | sbert: who scores relations and entities (bm25/sbert: D + 1 calls)
    num_retain_entity: int = 5  # entities kept at random from a relation (ToG: only from hubs, see sample_above)
    sample_above: int = 20  # ToG: a relation with at least this many candidates is sampled to num_retain_entity
    max_neighbors: int = 100  # KG cap per (entity, relation) before sampling; cuts are recorded
    max_relations: int = 100  # KG cap on candidate relations per entity and direction; cuts are recorded
    score_tolerance: float = 0.05  # relation scores off 1 by more are normalised and noted (stat.scores_normalised)
    fallback: str = "paths"  # at max depth, answer from the paths | cot: without them (the published code)
    exemplars: bool = True  # one worked example per stage, as the published prompts have (False: zero-shot)
    max_answers: int = 5

    def horizon(self) -> Horizon:
        """Reachability's bound: one hop per depth; a CVT is a node like any other."""
        return Horizon(self.depth)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(
            1, "width", "depth", "num_retain_entity", "sample_above", "max_neighbors", "max_relations", "max_answers"
        )
        if not 0.0 <= self.score_tolerance < 1.0:
            raise ConfigError(f"method.score_tolerance={self.score_tolerance}: must lie in [0, 1)")
        check_temperature("method.temperature_explore", self.temperature_explore)
        check_temperature("method.temperature_reason", self.temperature_reason)
        check_choice("method.prune", self.prune, ("llm", "bm25", "sbert"))
        check_choice("method.fallback", self.fallback, ("paths", "cot"))


@dataclass
class ToGRConfig(ToGConfig):
    """ToG-R (Sec. 2.2): relations pruned as in ToG, entities kept at random (seeded) instead of
    scored by the LLM; ``num_retain_entity`` per chosen relation."""

    name: str = "tog_r"


def shares(scores: list[float]) -> list[float]:
    """Scores as shares of their sum (negative BM25 scores count as 0); all zero: equal shares."""
    clipped = [max(0.0, s) for s in scores]
    total = sum(clipped)
    return [s / total for s in clipped] if total > 0 else [1.0 / len(scores)] * len(scores)


# --------------------------------------------------------------------------- the search


def start(question: Question, ctx: Context) -> list[Path]:
    """Depth 0: the topic entities, at most N of them, so that the call bound holds."""
    topics, width = list(question.topic_entities), ctx.params.width
    kept = kit.cap(ctx, "relation_prune", topics, width, "topic entities", dropped=topics[width:])
    return [Path(t) for t in kept]


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
    chosen, total = kit.ask(
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


def entity_score(
    question: Question, path: Path, candidates: list[Candidate], search: Search, ctx: Context
) -> list[tuple[Candidate, float]]:
    """Each candidate's share within its relation, one score per distinct entity from one call
    for all the relations (the published code calls once per relation)."""
    p = ctx.params
    groups: dict[Hop, list[Candidate]] = {}
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
    labels = list(dict.fromkeys(c.label for c in candidates))
    prompt = entity_prompt(
        question.text, search.name(path.end), [(h.label, [c.label for c in g]) for h, g in groups.items()]
    )
    scores = kit.ask(
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


def reasoning(question: Question, search: Search, depth: int, ctx: Context) -> Optional[Prediction]:
    """The sufficiency check: a prediction when the paths suffice, else None."""
    p = ctx.params
    reply = kit.ask(
        ctx,
        "reasoning",
        messages("reasoning", triples_prompt(question.text, search.text()), p.exemplars),
        schema=sufficiency_schema(p.max_answers),
        temperature=p.temperature_reason,
        note=f"no verdict at depth {depth}; searching on",
    )
    if reply is None or not reply["sufficient"]:
        return None
    prediction = cot.to_prediction(reply)
    if not prediction.answers:
        ctx.trace.note("reasoning", f"'sufficient' without an answer at depth {depth}; searching on")
        return None
    prediction.evidence, prediction.reason = search.evidence(), f"sufficient at depth {depth}"
    return prediction


def conclude(question: Question, search: Search, why: str, ctx: Context) -> Prediction:
    """The ``answer`` call: from the paths, or by CoT without them (``method.fallback=cot``,
    which the published code does at max depth)."""
    p = ctx.params
    if why == "max depth" and p.fallback == "cot":
        messages_, schema, evidence = cot.messages(question, len(cot.EXEMPLARS)), cot.SCHEMA, []
        reason = f"{why}: answered by CoT without the paths (method.fallback=cot)"
    else:
        messages_ = messages("answer", triples_prompt(question.text, search.text()), p.exemplars)
        schema, evidence = answer_schema(p.max_answers), search.evidence()
        reason = f"{why}: answered from the paths" if evidence else f"{why}: no paths found"
    reply = kit.ask(
        ctx,
        "answer",
        messages_,
        schema=schema,
        temperature=p.temperature_reason,
        fallback=lambda exc: no_answer(ctx, exc, evidence, reason),
    )
    if isinstance(reply, Prediction):
        return reply
    prediction = cot.to_prediction(reply)
    prediction.evidence, prediction.status, prediction.reason = evidence, "ok" if evidence else "fallback", reason
    return prediction


def finish(question: Question, prediction: Prediction, search: Search, ctx: Context) -> Prediction:
    """The kept paths as a picture in the trace, answers marked; how many relation_prune replies
    were normalised as a stat, so that a run shows how often the model's scores missed 1."""
    ctx.trace.explanation = search.picture(question.text, prediction.answers, [prediction.reason]).to_dict()
    prediction.stats["scores_normalised"] = float(search.normalised)
    return prediction


def think_on_graph(question: Question, ctx: Context, random_entities: bool) -> Prediction:
    """The beam search of Sec. 2.1, depth by depth, until the paths suffice, nothing new is found,
    or the depth runs out."""
    p = ctx.params
    search = Search(question.topic_entities)
    beam = start(question, ctx)
    for depth in range(1, p.depth + 1):
        frontier = frontier_of(beam)
        extensions = [new for path in frontier for new in explore(question, path, search, ctx, random_entities)]
        beam = sorted((e for e in extensions if e.score > 0), key=lambda e: -e.score)[: p.width]
        if not beam:
            ctx.trace.note("reasoning", f"nothing new at depth {depth}: the search ends early")
            return finish(question, conclude(question, search, f"ended at depth {depth}", ctx), search, ctx)
        search.keep(beam)
        verdict = reasoning(question, search, depth, ctx)
        if verdict is not None:
            return finish(question, verdict, search, ctx)
    return finish(question, conclude(question, search, "max depth", ctx), search, ctx)


def check(params: ToGConfig) -> None:
    """sbert pruning needs the [sbert] extra: missing, the run fails before any question."""
    check_available(params.prune)


def call_bound(params: ToGConfig) -> int:
    """The paper's bound on LLM calls per question, 2ND + D + 1 (Sec. 2.1): per depth one
    relation_prune and one entity_score call per frontier entity and one reasoning call, then one
    answer call. ToG-R makes no entity_score calls; bm25/sbert pruning makes neither."""
    per_entity = 0 if params.prune != "llm" else 1 if isinstance(params, ToGRConfig) else 2
    return per_entity * params.width * params.depth + params.depth + 1


@register("tog", config=ToGConfig, stages=("relation_prune", "entity_score", "reasoning", "answer"), check=check)
def answer(question: Question, ctx: Context) -> Prediction:
    return think_on_graph(question, ctx, random_entities=False)


@register("tog_r", config=ToGRConfig, stages=("relation_prune", "reasoning", "answer"), check=check)
def answer_r(question: Question, ctx: Context) -> Prediction:
    return think_on_graph(question, ctx, random_entities=True)
