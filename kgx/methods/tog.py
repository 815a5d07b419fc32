"""Think-on-Graph (Sun et al., ICLR 2024): the LLM walks the KG by beam search. ToG-R too.

From the topic entities, at each depth (Sec. 2.1):
  1. ``relation_prune``: per frontier entity, one call keeps up to N of its relations (both
     directions), each with a score, the scores adding up to 1;
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

import json
from dataclasses import dataclass
from typing import Any, Callable, Optional

from kgx.config import ConfigError, MethodConfig, check_choice, check_temperature
from kgx.explain import Edge, Graph, Node
from kgx.kg.freebase import DIRECTIONS, Direction, is_literal
from kgx.llm.client import OutputError
from kgx.methods import cot
from kgx.methods.base import Context, register
from kgx.methods.kit import answers_schema, braces
from kgx.metrics import normalize
from kgx.types import Prediction, Question


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
    score_tolerance: float = 0.05  # relation scores must add up to 1 within this
    fallback: str = "paths"  # at max depth, answer from the paths | cot: without them (the published code)
    exemplars: bool = True  # one worked example per stage, as the published prompts have (False: zero-shot)
    max_answers: int = 5

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(1, "width", "depth", "num_retain_entity", "sample_above", "max_neighbors", "max_relations", "max_answers")
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


Ranker = Callable[[str, list[str], int], list[tuple[str, float]]]


@dataclass(frozen=True)
class Relation:
    """A relation at an entity; incoming edges are offered too, marked ``(reverse)``."""

    name: str
    direction: Direction

    @property
    def label(self) -> str:
        return self.name if self.direction == "out" else f"{self.name} (reverse)"


@dataclass(frozen=True)
class Step:
    """One hop from ``source`` (where the search stood) through ``relation`` to ``target``."""

    source: str
    relation: Relation
    target: str

    def triple(self) -> tuple[str, str, str]:
        """(subject, relation, object) in the KG's own direction."""
        if self.relation.direction == "out":
            return self.source, self.relation.name, self.target
        return self.target, self.relation.name, self.source


@dataclass(frozen=True)
class Path:
    """A walk from a topic entity; ``score`` ranks it within the beam of its depth."""

    topic: str
    steps: tuple[Step, ...] = ()
    score: float = 1.0  # of its last step: relation score x entity score

    @property
    def end(self) -> str:
        return self.steps[-1].target if self.steps else self.topic

    def extend(self, step: Step, score: float) -> "Path":
        return Path(self.topic, (*self.steps, step), score)


@dataclass
class Candidate:
    """An entity reached from a frontier path through one kept relation."""

    path: Path
    relation: Relation
    relation_score: float
    entity: str
    label: str = ""  # how the entity_score prompt names it (unique within the call)


class Search:
    """One question's search: the names of the nodes seen and the paths kept at each depth."""

    def __init__(self, names: dict[str, str]):
        self.names = dict(names)
        self.kept: list[Path] = []
        self.reached = set(names)  # topic entities and the ends of kept paths: not candidates again

    def keep(self, beam: list[Path]) -> None:
        self.kept.extend(beam)
        self.reached.update(p.end for p in beam)

    def name(self, node: str) -> str:
        return self.names.get(node, node)

    def paths(self) -> list[Path]:
        """The kept paths no other kept path extends: what the LLM reasons over."""
        prefixes = {p.steps[:i] for p in self.kept for i in range(len(p.steps))}
        return [p for p in self.kept if p.steps not in prefixes]

    def triple(self, step: Step) -> str:
        s, r, o = step.triple()
        return f"({self.name(s)}, {r}, {self.name(o)})"

    def evidence(self) -> list[str]:
        return list(dict.fromkeys(self.triple(s) for p in self.paths() for s in p.steps))

    def text(self) -> str:
        lines = [f"{i}. " + "; ".join(self.triple(s) for s in p.steps) for i, p in enumerate(self.paths(), 1)]
        return "\n".join(lines) or "(no triples were found)"


# --------------------------------------------------------------------------- prompts

EXPLORE = "You help answer a question by walking a knowledge graph, one hop at a time."

RELATION_TASK = (
    EXPLORE + " Given a topic entity and the relations at it, choose the relations most likely to lead "
    "to the answer and score how much each helps, from 0 to 1, the scores adding up to 1. A relation "
    "marked (reverse) points at the topic entity: the entity is its object, not its subject."
)
ENTITY_TASK = (
    EXPLORE + " Given the entities reached from a topic entity through some relations, score each "
    "entity from 0 to 1 for how likely it is the answer or lies on the way to it."
)
REASONING_TASK = (
    "You answer questions from knowledge graph triples (subject, relation, object) and what you know. "
    "Say whether the triples, with your own knowledge, are enough to answer the question; if they are, "
    "give the answer entities, most likely first."
)
ANSWER_TASK = (
    "You answer questions from knowledge graph triples (subject, relation, object) and what you know. "
    "Think step by step, then give the answer entities, most likely first."
)


def relation_prompt(question: str, topic: str, labels: list[str], k: int) -> str:
    return (f"Topic entity: {topic}\nRelations:\n" + "\n".join(f"- {label}" for label in labels)
            + f"\nChoose up to {k} relations.\nQuestion: {question}")


def entity_prompt(question: str, topic: str, groups: list[tuple[str, list[str]]]) -> str:
    blocks = [f"Through {relation}:\n" + "\n".join(f"- {label}" for label in labels)
              for relation, labels in groups]
    return (f"Topic entity: {topic}\n" + "\n".join(blocks)
            + "\nScore every entity listed, once.\nQuestion: " + question)


def triples_prompt(question: str, triples: str) -> str:
    return f"Triples:\n{triples}\nQuestion: {question}"


# Worked examples written for kgx, one or two per stage, as the published prompts carry them.
EXAMPLES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "relation_prune": [(
        relation_prompt("Which currency is used in the country whose capital is Nairobi?", "Nairobi",
                        ["location.location.containedby", "location.location.geolocation",
                         "location.country.capital (reverse)", "people.person.place_of_birth (reverse)",
                         "travel.travel_destination.tourist_attractions"], 3),
        {"relations": [{"relation": "location.country.capital (reverse)", "score": 0.6},
                       {"relation": "location.location.containedby", "score": 0.3},
                       {"relation": "people.person.place_of_birth (reverse)", "score": 0.1}]},
    )],
    "entity_score": [(
        entity_prompt("Which film directed by Kathryn Bigelow won the Academy Award for Best Picture?",
                      "Kathryn Bigelow",
                      [("film.film.directed_by (reverse)",
                        ["Point Break", "Strange Days", "The Hurt Locker", "Zero Dark Thirty"])]),
        {"scores": [{"entity": "Point Break", "score": 0.0}, {"entity": "Strange Days", "score": 0.0},
                    {"entity": "The Hurt Locker", "score": 0.9}, {"entity": "Zero Dark Thirty", "score": 0.1}]},
    )],
    "reasoning": [
        (triples_prompt("Which currency is used in the country whose capital is Nairobi?",
                        "1. (Kenya, location.country.capital, Nairobi); "
                        "(Kenya, location.country.currency_used, Kenyan shilling)"),
         {"sufficient": True, "reasoning": "Nairobi is the capital of Kenya, and Kenya uses the Kenyan shilling.",
          "answers": ["Kenyan shilling"]}),
        (triples_prompt("Which river flows through the capital of Hungary?",
                        "1. (Hungary, location.country.capital, Budapest)\n"
                        "2. (Hungary, location.country.official_language, Hungarian language)"),
         {"sufficient": False, "reasoning": "The triples give Budapest as the capital of Hungary but say "
                                            "nothing about the rivers through Budapest.", "answers": []}),
    ],
    "answer": [(
        triples_prompt("Which language is spoken in the country whose capital is Lima?",
                       "1. (Peru, location.country.capital, Lima); (Peru, location.country.official_language, "
                       "Spanish Language)"),
        {"reasoning": "Lima is the capital of Peru, whose official language is Spanish.",
         "answers": ["Spanish Language"]},
    )],
}

SYSTEMS = {"relation_prune": RELATION_TASK, "entity_score": ENTITY_TASK, "reasoning": REASONING_TASK,
           "answer": ANSWER_TASK}


def messages(stage: str, content: str, exemplars: bool) -> list[dict[str, str]]:
    out = [{"role": "system", "content": SYSTEMS[stage]}]
    for text, reply in EXAMPLES[stage] if exemplars else []:
        out.append({"role": "user", "content": text})
        out.append({"role": "assistant", "content": json.dumps(reply)})
    out.append({"role": "user", "content": content})
    return out


def scored_schema(field: str, key: str, labels: list[str], low: int, high: int) -> dict[str, Any]:
    """``field``: low to high items {key: one of labels, score: 0..1}, ToG's scored selections."""
    item = {"type": "object", "required": [key, "score"],
            "properties": {key: {"enum": labels}, "score": {"type": "number", "minimum": 0, "maximum": 1}}}
    return {"type": "object", "required": [field], "properties": {field: {
        "type": "array", "items": item, "minItems": low, "maxItems": high}}}


def reasoning_schema(max_answers: int) -> dict[str, Any]:
    answers = {**answers_schema(max_answers), "minItems": 0}
    return {"type": "object", "required": ["sufficient", "reasoning", "answers"], "properties": {
        "sufficient": {"type": "boolean"}, "reasoning": {"type": "string", "maxLength": 600}, "answers": answers}}


def answer_schema(max_answers: int) -> dict[str, Any]:
    return {"type": "object", "required": ["reasoning", "answers"], "properties": {
        "reasoning": {"type": "string", "maxLength": 600}, "answers": answers_schema(max_answers)}}


# --------------------------------------------------------------------------- replies


def to_prediction(reply: dict[str, Any]) -> Prediction:
    """The reply's answers, each once, in the papers' ``{...}`` format after its reasoning."""
    answers = list(dict.fromkeys(a.strip() for a in reply["answers"] if a.strip()))
    return Prediction(answer=f"{reply['reasoning'].strip()} So the answer is {braces(answers)}.", answers=answers)


def unique_choices(items: list[dict[str, Any]], key: str, labels: list[str]) -> dict[str, float]:
    """{label: score} of a scored selection; an unknown or repeated label is invalid."""
    scores: dict[str, float] = {}
    for item in items:
        label = item[key]
        if label not in labels:
            raise ValueError(f"{label!r} is not a candidate")
        if label in scores:
            raise ValueError(f"{label!r} is scored twice")
        scores[label] = float(item["score"])
    return scores


def relation_scores(labels: list[str], tolerance: float) -> Callable[[Any], list[tuple[str, float]]]:
    """The chosen relations with their scores normalised to 1; the reply's own scores must add up
    to 1 within ``tolerance`` (the paper asks for exactly that)."""

    def check(reply: Any) -> list[tuple[str, float]]:
        scores = unique_choices(reply["relations"], "relation", labels)
        total = sum(scores.values())
        if abs(total - 1.0) > tolerance:
            raise ValueError(f"relation scores add up to {total:.3f}, not 1")
        return [(label, score / total) for label, score in scores.items()]

    return check


def entity_scores(labels: list[str]) -> Callable[[Any], dict[str, float]]:
    """One score per candidate: every candidate scored, each once."""

    def check(reply: Any) -> dict[str, float]:
        scores = unique_choices(reply["scores"], "entity", labels)
        missing = [label for label in labels if label not in scores]
        if missing:
            raise ValueError(f"{len(missing)} candidates not scored, e.g. {missing[0]!r}")
        return scores

    return check


def shares(scores: list[float]) -> list[float]:
    """Scores as shares of their sum (negative BM25 scores count as 0); all zero: equal shares."""
    clipped = [max(0.0, s) for s in scores]
    total = sum(clipped)
    return [s / total for s in clipped] if total > 0 else [1.0 / len(scores)] * len(scores)


def ranker(prune: str) -> Ranker:
    """The LLM-free scorer of ``method.prune`` (the BM25/SBERT samplers LMP shares)."""
    from kgx.methods.lmp_samplers import bm25_rank, sbert_rank

    return {"bm25": bm25_rank, "sbert": sbert_rank}[prune]


# --------------------------------------------------------------------------- the search


def start(question: Question, ctx: Context) -> list[Path]:
    """Depth 0: the topic entities, at most N of them, so that the call bound holds."""
    topics = list(question.topic_entities)
    width = ctx.params.width
    if len(topics) > width:
        ctx.trace.note("relation_prune", f"{len(topics)} topic entities, the first {width} explored",
                       dropped=topics[width:])
    return [Path(t) for t in topics[:width]]


def frontier_of(beam: list[Path]) -> list[Path]:
    """The best path to each distinct entity the beam ends in; literals end a path."""
    best: dict[str, Path] = {}
    for path in beam:
        if not is_literal(path.end):
            best.setdefault(path.end, path)
    return list(best.values())


def relation_prune(question: Question, path: Path, search: Search, ctx: Context) -> list[tuple[Relation, float]]:
    """Up to N relations at the path's end with scores adding up to 1."""
    p = ctx.params
    entity = path.end
    try:
        candidates = [Relation(name, direction) for direction in DIRECTIONS
                      for name in sorted(ctx.kg.relations(entity, direction, limit=p.max_relations))]
    except ValueError as exc:  # a topic entity that is not a KG id
        ctx.trace.note("relation_prune", f"cannot explore {entity}: {exc}", entity=entity)
        return []
    if len(candidates) <= 1:
        return [(r, 1.0) for r in candidates]
    labels = [r.label for r in candidates]
    by_label = {r.label: r for r in candidates}
    k = min(p.width, len(candidates))
    if p.prune != "llm":
        ranked = ranker(p.prune)(question.text, labels, k)
        ctx.trace.note("relation_prune", f"{p.prune} scores", entity=entity, scores=ranked)
        return [(by_label[label], s) for (label, _), s in zip(ranked, shares([s for _, s in ranked]))]
    prompt = relation_prompt(question.text, search.name(entity), labels, k)
    try:
        chosen = ctx.llm("relation_prune", messages("relation_prune", prompt, p.exemplars),
                         temperature=p.temperature_explore,
                         schema=scored_schema("relations", "relation", labels, 1, k),
                         validate=relation_scores(labels, p.score_tolerance), retries=p.max_retries)
    except OutputError as exc:
        ctx.trace.note("relation_prune", f"fell back to the first {k} candidates, equal scores",
                       entity=entity, error=str(exc))
        chosen = [(label, 1.0 / k) for label in labels[:k]]
    return [(by_label[label], score) for label, score in chosen]


def neighbours(path: Path, relation: Relation, search: Search, ctx: Context, random_entities: bool) -> list[str]:
    """Entities through ``relation`` the search has not reached yet, capped by ``max_neighbors``;
    ToG-R keeps ``num_retain_entity`` of them at random, ToG only from hubs (``sample_above``)."""
    p = ctx.params
    found = ctx.kg.neighbors(path.end, relation.name, relation.direction, limit=p.max_neighbors)
    found = sorted({x for x in found if x not in search.reached})
    keep = min(p.num_retain_entity, len(found))
    if not random_entities and len(found) < p.sample_above:
        return found
    if keep < len(found):
        ctx.trace.note("entity_score", f"{len(found)} candidates through {relation.label}: {keep} kept at random",
                       entity=path.end, relation=relation.label)
    return ctx.rng.sample(found, keep)


def labelled(candidates: list[Candidate], search: Search) -> list[Candidate]:
    """One label per distinct entity (an entity reached through two relations is scored once):
    its name, numbered [2], [3] ... when different entities share it."""
    labels: dict[str, str] = {}
    used: set[str] = set()
    for c in candidates:
        if c.entity not in labels:
            name = label = search.name(c.entity)
            number = 1
            while label in used:
                number += 1
                label = f"{name} [{number}]"
            labels[c.entity] = label
            used.add(label)
        c.label = labels[c.entity]
    return candidates


def entity_score(question: Question, path: Path, candidates: list[Candidate], search: Search,
                 ctx: Context) -> list[tuple[Candidate, float]]:
    """Each candidate's share within its relation, one score per distinct entity from one call
    for all the relations (the published code calls once per relation)."""
    p = ctx.params
    groups: dict[Relation, list[Candidate]] = {}
    for c in candidates:
        groups.setdefault(c.relation, []).append(c)
    if all(len(g) == 1 for g in groups.values()):
        return [(c, 1.0) for c in candidates]
    if p.prune != "llm":
        out: list[tuple[Candidate, float]] = []
        for relation, group in groups.items():
            ranked = dict(ranker(p.prune)(question.text, [c.label for c in group], len(group)))
            out.extend(zip(group, shares([ranked[c.label] for c in group])))
        ctx.trace.note("entity_score", f"{p.prune} shares", entity=path.end,
                       scores=[(c.relation.label, c.label, s) for c, s in out])
        return out
    labels = list(dict.fromkeys(c.label for c in candidates))
    prompt = entity_prompt(question.text, search.name(path.end),
                           [(r.label, [c.label for c in g]) for r, g in groups.items()])
    try:
        scores = ctx.llm("entity_score", messages("entity_score", prompt, p.exemplars),
                         temperature=p.temperature_explore,
                         schema=scored_schema("scores", "entity", labels, len(labels), len(labels)),
                         validate=entity_scores(labels), retries=p.max_retries)
    except OutputError as exc:
        ctx.trace.note("entity_score", "fell back to equal scores within each relation",
                       entity=path.end, error=str(exc))
        scores = {label: 1.0 for label in labels}
    out = []
    for group in groups.values():
        raw = [scores[c.label] for c in group]
        total = sum(raw)
        out.extend((c, s / total if total > 0 else 0.0) for c, s in zip(group, raw))
    return out


def explore(question: Question, path: Path, search: Search, ctx: Context,
            random_entities: bool) -> list[Path]:
    """One frontier entity: its relations pruned, its candidate entities scored (ToG) or sampled
    (ToG-R); every extension scored relation score x entity score."""
    candidates = [Candidate(path, relation, score, entity)
                  for relation, score in relation_prune(question, path, search, ctx)
                  for entity in neighbours(path, relation, search, ctx, random_entities)]
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
    return [c.path.extend(Step(c.path.end, c.relation, c.entity), c.relation_score * s) for c, s in scored]


def reasoning(question: Question, search: Search, depth: int, ctx: Context) -> Optional[Prediction]:
    """The sufficiency check: a prediction when the paths suffice, else None."""
    p = ctx.params
    try:
        reply = ctx.llm("reasoning",
                        messages("reasoning", triples_prompt(question.text, search.text()), p.exemplars),
                        temperature=p.temperature_reason, schema=reasoning_schema(p.max_answers),
                        retries=p.max_retries)
    except OutputError as exc:
        ctx.trace.note("reasoning", f"no verdict at depth {depth}; searching on", error=str(exc))
        return None
    if not reply["sufficient"]:
        return None
    prediction = to_prediction(reply)
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
    try:
        reply = ctx.llm("answer", messages_, temperature=p.temperature_reason, schema=schema,
                        retries=p.max_retries)
    except OutputError as exc:
        return Prediction(answer="", evidence=evidence, status="error", reason=f"{reason}; {exc}")
    prediction = to_prediction(reply)
    prediction.evidence, prediction.status, prediction.reason = evidence, "ok" if evidence else "fallback", reason
    return prediction


def finish(question: Question, prediction: Prediction, search: Search, ctx: Context) -> Prediction:
    """The kept paths as a picture in the trace, answers marked."""
    answers = {normalize(a) for a in prediction.answers}
    nodes: dict[str, Node] = {}
    edges: dict[tuple[str, str, str], Edge] = {}
    for path in search.paths():
        nodes.setdefault(path.topic, Node(path.topic, search.name(path.topic), 0, "topic"))
        for depth, step in enumerate(path.steps, 1):
            role = "answer" if normalize(search.name(step.target)) in answers else ""
            nodes.setdefault(step.target, Node(step.target, search.name(step.target), depth, role))
            s, r, o = step.triple()
            edges.setdefault((s, r, o), Edge(s, o, r))
    ctx.trace.explanation = Graph(list(nodes.values()), list(edges.values()), title=question.text,
                                  text=search.text(), side=[prediction.reason]).to_dict()
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
    """bm25/sbert pruning needs its scorer before any question runs (sbert: the [sbert] extra)."""
    if params.prune != "llm":
        ranker(params.prune)("check", ["check"], 1)


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
