"""KnowPath (Zhao et al., "Knowledge-enhanced Reasoning via LLM-generated Inference Paths over
Knowledge Graphs", Sec. 2 and App. A, B, F).

1. Inference paths generation (IPG, Sec. 2.2): one call lists knowledge triples from the model's
   own knowledge, answers, and gives a reasoning path ``entity -> relation -> ... -> answer``.
2. Subgraph exploration (SE, Sec. 2.3, Alg. 1), at most ``method.depth`` rounds, one subgraph per
   topic entity, each a set of directed paths from its topic entity. Per round, across all
   subgraphs: one call selects relations among the frontier's relations (both directions), one
   call selects entities among those the chosen relations reach, then every path grows by
   ``-> r -> e`` or ``<- r <- e`` in the edge's true direction (Alg. 2).
3. Evaluation-based answering (Sec. 2.4): after each round one call says whether the subgraph and
   the model's knowledge answer the question; if so, stop. Otherwise, after the last round, the
   inference path's answer is the answer (status ``fallback``).

So a question costs at most 1 + 3 x rounds calls (retries of invalid output aside).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from kgx.config import ConfigError, MethodConfig, check_temperature
from kgx.explain import Edge, Graph, Node
from kgx.kg.freebase import DIRECTIONS, Direction, is_literal
from kgx.llm.client import OutputError
from kgx.methods import knowpath_prompts as prompts
from kgx.methods.base import Context, register
from kgx.methods.kit import answers_schema, braces
from kgx.metrics import normalize
from kgx.types import Prediction, Question, Status


@dataclass
class KnowPathConfig(MethodConfig):
    """KnowPath (Zhao et al.): inference paths from the LLM's own knowledge guide the exploration of
    directed subgraphs. Field comments name the paper's section (Sec. 2-4, App. A, B, F)."""

    name: str = "knowpath"
    depth: int = 3  # D_max: rounds of subgraph exploration, one hop each (Sec. 2.3, Sec. 3.3)
    width: int = 3  # relations kept per subgraph and round (Sec. 2.3 relation exploration, App. F.3)
    entity_width: int = 5  # entities kept per subgraph and round (Sec. 2.3 entity exploration, App. F.4)
    triples: int = 15  # knowledge triples listed by inference paths generation (Sec. 2.2, App. F.2; Fig. 5a)
    temperature_explore: float = 0.4  # relation and entity selection (Sec. 4.4, Fig. 5a)
    temperature_answer: float = 0.0  # inference paths generation and evaluation-based answering (Sec. 2.4)
    ipg: bool = True  # False: no inference path in any prompt and no path fallback (Table 2, w/o IPG)
    exploration: bool = True  # False: answer from the inference path alone (Table 2, w/o SE)
    max_relations: int = 50  # per entity and direction offered to relation selection; cuts are recorded
    max_neighbors: int = 40  # per entity, relation and direction offered to entity selection; cuts recorded
    max_answers: int = 5  # answers kept from a reply (Sec. 2.4 gives one response; lists allow several)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(1, "depth", "width", "entity_width", "max_relations", "max_neighbors", "max_answers")
        if self.triples < 0:
            raise ConfigError(f"method.triples={self.triples}: must be >= 0")
        check_temperature("method.temperature_explore", self.temperature_explore)
        check_temperature("method.temperature_answer", self.temperature_answer)
        if not self.ipg and not self.exploration:
            raise ConfigError("method.ipg=false with method.exploration=false leaves nothing to answer "
                              "from; the model alone is the IO baseline (method=io)")

# --------------------------------------------------------------------------- inference paths

ARROW = re.compile(r"\s*(->|→|=>|<-|←)\s*")
ANNOTATION = re.compile(r"\((?:topic entity|final answer|answer|end)\)", re.I)
PLACEHOLDER = re.compile(r"^[.…\s]*$")
SENTENCE = re.compile(r"^(?:based on [^,]*,\s*)?the (?:final )?answer(?: to the question .*)? is:?\s+", re.I)
LEAD = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*(?:(?:\w+\s+)*path\s*:)?\s*", re.I)  # "- ", "2. ", "Reasoning path:"


@dataclass
class InferencePath:
    """What IPG produced; ``paths`` holds only the paths that parsed, rendered ``a -> r -> b``."""

    paths: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    triples: list[str] = field(default_factory=list)
    topic_entities: list[str] = field(default_factory=list)


def parse_path(text: str) -> tuple[Optional[str], str]:
    """``entity -> relation -> entity -> ...`` rendered with plain arrows (``->`` or ``<-`` as the
    model wrote them), or None and why it does not parse.

    A leading bullet or label (``Reasoning path:``), annotations such as ``(topic entity)`` and a
    closing ``end`` are dropped; an echo of the format (``...`` elements) or a chain that ends on
    a relation is not a path."""
    text = ANNOTATION.sub("", LEAD.sub("", text.strip().strip("[]\"'"), count=1))
    pieces = ARROW.split(text)
    parts = [piece.strip().strip("\"'") for piece in pieces[::2]]
    arrows = ["<-" if arrow in ("<-", "←") else "->" for arrow in pieces[1::2]]
    if not arrows:
        return None, "no arrows"
    if parts[-1].lower() == "end":
        parts, arrows = parts[:-1], arrows[:-1]
    if any(PLACEHOLDER.match(part) for part in parts):
        return None, "an empty or placeholder element"
    if len(parts) < 3:
        return None, "fewer elements than entity -> relation -> entity"
    if len(parts) % 2 == 0:
        return None, "it ends on a relation, not an entity"
    return parts[0] + "".join(f" {arrow} {part}" for arrow, part in zip(arrows, parts[1:])), ""


def path_end(path: str) -> str:
    """The last entity of a parsed path: where the model's reasoning arrived, its answer."""
    return ARROW.split(path)[-1].strip()


def clean_answers(values: list[Any], limit: int) -> list[str]:
    """Non-empty, de-duplicated answer strings without the braces, quotes or the sentence around
    them that a model may add (F.2 and F.5 ask for "the answer to the question ... is xxxx")."""
    out: dict[str, None] = {}
    for value in values:
        text = SENTENCE.sub("", str(value).strip()).strip().rstrip(".").strip("{}[]\"'").strip()
        if text and normalize(text) not in {normalize(a) for a in out}:
            out[text] = None
    return list(out)[:limit]


def ipg_schema(triples: int, max_answers: int) -> dict[str, Any]:
    strings = {"type": "string", "minLength": 1, "maxLength": 300}
    props: dict[str, Any] = {"topic_entities": {"type": "array", "items": {"type": "string", "maxLength": 120},
                                                "minItems": 1, "maxItems": 5}}
    if triples:
        props["triples"] = {"type": "array", "items": strings, "minItems": 1, "maxItems": triples}
    props["paths"] = {"type": "array", "items": strings, "minItems": 1, "maxItems": 3}
    props["answers"] = answers_schema(max_answers)
    return {"type": "object", "properties": props, "required": list(props)}


def generate_inference_paths(question: Question, ctx: Context) -> InferencePath:
    """Sec. 2.2 / F.2, one call. A reply that never parses as JSON is searched for arrow lines."""
    p: KnowPathConfig = ctx.params
    try:
        reply = ctx.llm("ipg", prompts.inference_paths(question.text, p.triples),
                        temperature=p.temperature_answer, schema=ipg_schema(p.triples, p.max_answers),
                        retries=p.max_retries)
    except OutputError as exc:
        salvaged = [line for line in exc.text.splitlines() if ARROW.search(line)]
        ctx.trace.note("ipg", f"reply unusable ({exc}); {len(salvaged)} arrow line(s) searched for paths")
        reply = {"paths": salvaged, "answers": []}
    found = InferencePath(triples=[str(t) for t in reply.get("triples", [])],
                          topic_entities=[str(t) for t in reply.get("topic_entities", [])])
    for text in reply.get("paths", []):
        path, why = parse_path(str(text))
        if path is None:
            ctx.trace.note("ipg", f"inference path does not parse: {why}", path=str(text))
        else:
            found.paths.append(path)
    found.answers = (clean_answers(list(reply.get("answers", [])), p.max_answers)
                     or clean_answers([path_end(path) for path in found.paths], 1))
    if not found.paths:
        ctx.trace.note("ipg", "no inference path parsed: exploration proceeds without one")
    ctx.trace.note("ipg", "inference path", paths=found.paths, answers=found.answers, triples=found.triples,
                   topic_entities=found.topic_entities)
    return found


# --------------------------------------------------------------------------- directed subgraphs


@dataclass(frozen=True)
class Step:
    """One hop of a path: ``out`` reads ``-> relation -> entity`` (the previous entity is the
    subject), ``in`` reads ``<- relation <- entity`` (the previous entity is the object)."""

    direction: Direction
    relation: str
    entity: str


Path = tuple[Step, ...]


@dataclass
class Subgraph:
    """K_s^i of Sec. 2.3: directed paths from one topic entity. ``frontier`` holds the paths grown
    in the last round; their tail entities are explored next (the candidate entities E_j^i)."""

    topic: str
    name: str
    key: str  # the subgraph's name in prompts and replies
    paths: list[Path] = field(default_factory=lambda: [()])
    frontier: list[Path] = field(default_factory=lambda: [()])

    def tail(self, path: Path) -> str:
        return path[-1].entity if path else self.topic

    def entities(self) -> set[str]:
        return {self.topic} | {step.entity for path in self.paths for step in path}

    def frontier_entities(self) -> list[str]:
        """Tails that can be explored: literals have no relations of their own."""
        return list(dict.fromkeys(t for t in map(self.tail, self.frontier) if not is_literal(t)))

    def triples(self) -> list[tuple[str, str, str]]:
        """(head, relation, tail) ids in the KG's direction, in path order, without repeats."""
        seen: dict[tuple[str, str, str], None] = {}
        for path in self.paths:
            previous = self.topic
            for step in path:
                triple = ((previous, step.relation, step.entity) if step.direction == "out"
                          else (step.entity, step.relation, previous))
                seen[triple] = None
                previous = step.entity
        return list(seen)

    def update(self, edges: dict[str, list[tuple[str, Direction, str]]]) -> None:
        """Alg. 2: every frontier path whose tail reached a kept entity grows by ``-> r -> e`` or
        ``<- r <- e``; a path that grew is replaced by its extensions (it is their prefix), the
        others stay. ``edges`` maps a kept entity to the (frontier entity, direction, relation)
        edges that reached it. Paths always start at the topic entity, so the algorithm's
        prepend branch (a path whose head is the new entity) never arises."""
        grown: list[Path] = []
        extended: set[Path] = set()
        for path in self.frontier:
            tail = self.tail(path)
            for entity, reached_by in edges.items():
                for source, direction, relation in reached_by:
                    if source == tail:
                        grown.append(path + (Step(direction, relation, entity),))
                        extended.add(path)
        self.paths = [path for path in self.paths if path not in extended] + grown
        self.frontier = grown


def render(sg: Subgraph, path: Path, names: dict[str, str]) -> str:
    """A path as the paper writes it (F.5): ``a -> r -> b <- r2 <- c``."""
    text = names.get(sg.topic, sg.name)
    for step in path:
        arrow = "->" if step.direction == "out" else "<-"
        text += f" {arrow} {step.relation} {arrow} {names.get(step.entity, step.entity)}"
    return text


def _keys(names: list[str]) -> list[str]:
    """Distinct labels for prompts and JSON keys; a repeated label gets ``#2``, ``#3`` ..."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return out


@dataclass
class Exploration:
    """State shared by the rounds: the subgraphs, the entity names seen, and the guide."""

    question: Question
    subgraphs: list[Subgraph]
    names: dict[str, str]
    guide: Optional[list[str]]  # the inference paths shown in prompts (None: w/o IPG or none parsed)

    @property
    def topics(self) -> list[str]:
        return [sg.name for sg in self.subgraphs]


def selection(ctx: Context, stage: str, messages: list[dict[str, str]],
              offers: dict[str, list[str]], width: int) -> dict[str, list[str]]:
    """One call choosing, per subgraph key, up to ``width`` of its candidates. The schema
    constrains each list to its candidates; a choice outside them is discarded and counted.
    A call that fails every retry chooses nothing (the round then ends early)."""
    p: KnowPathConfig = ctx.params
    schema = {"type": "object", "required": list(offers), "properties": {
        key: {"type": "array", "items": {"enum": labels}, "minItems": 1, "maxItems": min(width, len(labels))}
        for key, labels in offers.items()}}

    def valid(reply: Any) -> dict[str, list[str]]:
        chosen: dict[str, list[str]] = {}
        for key, labels in offers.items():
            kept: dict[str, None] = {}  # a repeated choice is kept once
            for label in reply.get(key, []):
                if label in labels:
                    kept[label] = None
                else:
                    ctx.llm.discard(stage, "not among the candidates", subgraph=key, choice=label)
            chosen[key] = list(kept)[:width]
        return chosen

    try:
        return ctx.llm(stage, messages, temperature=p.temperature_explore, schema=schema, validate=valid,
                       retries=p.max_retries)
    except OutputError as exc:
        ctx.trace.note(stage, f"selection failed, nothing chosen: {exc}")
        return {}


def relation_exploration(state: Exploration, ctx: Context
                         ) -> dict[str, dict[str, list[tuple[str, Direction]]]]:
    """R_j^i: the frontier's one-hop relations in both directions, capped per entity and direction
    (the cut is recorded with the KG call); one call selects up to ``width`` per subgraph.
    Returns, per subgraph key, each chosen relation with the (entity, direction) pairs having it."""
    p: KnowPathConfig = ctx.params
    candidates: dict[str, dict[str, list[tuple[str, Direction]]]] = {}
    frontier_names: dict[str, list[str]] = {}
    for sg in state.subgraphs:
        found: dict[str, list[tuple[str, Direction]]] = {}
        for entity in sg.frontier_entities():
            for direction in DIRECTIONS:
                for relation in ctx.kg.relations(entity, direction, limit=p.max_relations):
                    found.setdefault(relation, []).append((entity, direction))
        if found:
            candidates[sg.key] = found
            frontier_names[sg.key] = [state.names.get(e, e) for e in sg.frontier_entities()]
        elif sg.frontier:
            ctx.trace.note("relation", "the frontier has no relations; this subgraph keeps what it had",
                           subgraph=sg.key)
    if not candidates:
        return {}
    offers = {key: list(found) for key, found in candidates.items()}
    messages = prompts.relations(state.question.text, state.topics, state.guide,
                                 [(key, frontier_names[key], offers[key]) for key in offers], p.width)
    chosen = selection(ctx, "relation", messages, offers, p.width)
    return {key: {r: candidates[key][r] for r in relations} for key, relations in chosen.items() if relations}


def entity_exploration(state: Exploration, chosen: dict[str, dict[str, list[tuple[str, Direction]]]],
                       ctx: Context) -> dict[str, dict[str, list[tuple[str, Direction, str]]]]:
    """E_{j+1}^i: query (e, r, ?) or (?, r, e) as the chosen relation runs, capped per query; one
    call selects up to ``entity_width`` per subgraph. Entities already in a subgraph are not
    offered to it again. Returns, per subgraph key, each kept entity with the edges reaching it."""
    p: KnowPathConfig = ctx.params
    reached: dict[str, dict[str, list[tuple[str, Direction, str]]]] = {}
    for sg in state.subgraphs:
        if sg.key not in chosen:
            continue
        known = sg.entities()
        found: dict[str, list[tuple[str, Direction, str]]] = {}
        for relation, holders in chosen[sg.key].items():
            new = 0
            for entity, direction in holders:
                for neighbour in ctx.kg.neighbors(entity, relation, direction, limit=p.max_neighbors):
                    if neighbour not in known:
                        found.setdefault(neighbour, []).append((entity, direction, relation))
                        new += 1
            if not new:
                ctx.trace.note("entity", "the chosen relation reaches no new entity", subgraph=sg.key,
                               relation=relation)
        if found:
            reached[sg.key] = found
    if not reached:
        return {}
    unnamed = [e for found in reached.values() for e in found if e not in state.names]
    if unnamed:
        state.names.update(ctx.kg.names(list(dict.fromkeys(unnamed))))
    labels: dict[str, dict[str, str]] = {}
    offers: list[tuple[str, list[tuple[str, str]]]] = []
    for key, found in reached.items():
        ids = list(found)
        labels[key] = dict(zip(_keys([state.names.get(e, e) for e in ids]), ids))
        shown = []
        for label, entity in labels[key].items():
            source, direction, relation = found[entity][0]
            arrow = "->" if direction == "out" else "<-"
            edge = f"{state.names.get(source, source)} {arrow} {relation} {arrow} {label}"
            more = len(found[entity]) - 1
            shown.append((label, edge + (f" (+{more} more)" if more else "")))
        offers.append((key, shown))
    relations = list(dict.fromkeys(r for found in chosen.values() for r in found))
    messages = prompts.entities(state.question.text, state.topics, state.guide, relations, offers,
                                p.entity_width)
    kept = selection(ctx, "entity", messages, {key: list(labels[key]) for key in labels}, p.entity_width)
    return {key: {labels[key][label]: reached[key][labels[key][label]] for label in chosen_labels}
            for key, chosen_labels in kept.items() if chosen_labels}


def explore_round(state: Exploration, ctx: Context) -> bool:
    """Alg. 1, one round over all subgraphs; False when no subgraph grew (the round ended early)."""
    chosen = relation_exploration(state, ctx)
    kept = entity_exploration(state, chosen, ctx) if chosen else {}
    for sg in state.subgraphs:
        if sg.key in kept:
            sg.update(kept[sg.key])
        else:
            sg.frontier = []
    return bool(kept)


# --------------------------------------------------------------------------- answering


@dataclass
class Verdict:
    answerable: bool
    answers: list[str]
    reasoning: str


def evaluate(state: Exploration, ctx: Context) -> Optional[Verdict]:
    """Sec. 2.4 / F.5, one call at the answering temperature; None when it never gives valid output."""
    p: KnowPathConfig = ctx.params
    schema = {"type": "object", "required": ["answerable", "reasoning", "answers"], "properties": {
        "answerable": {"type": "boolean"},
        "reasoning": {"type": "string", "maxLength": 600},
        "answers": answers_schema(p.max_answers)}}

    def valid(reply: Any) -> Verdict:
        answers = clean_answers(reply["answers"], p.max_answers)
        if reply["answerable"] and not answers:
            raise ValueError("answerable, but no answer given")
        return Verdict(bool(reply["answerable"]), answers, reply["reasoning"].strip())

    try:
        return ctx.llm("evaluation", prompts.evaluation(state.question.text, subgraph_lines(state), state.guide),
                       temperature=p.temperature_answer, schema=schema, validate=valid, retries=p.max_retries)
    except OutputError as exc:
        ctx.trace.note("evaluation", f"no valid verdict; taken as not answerable: {exc}")
        return None


def subgraph_lines(state: Exploration) -> list[str]:
    return [render(sg, path, state.names) for sg in state.subgraphs for path in sg.paths if path]


def evidence(state: Exploration) -> list[str]:
    """The subgraphs' triples with entity names, which ``answer_recall`` reads."""
    out: dict[str, None] = {}
    for sg in state.subgraphs:
        for head, relation, tail in sg.triples():
            out[f"({state.names.get(head, head)}, {relation}, {state.names.get(tail, tail)})"] = None
    return list(out)


def explanation(state: Exploration, inference: Optional[InferencePath], answers: list[str],
                outcome: str) -> Graph:
    """The directed subgraph as the paper draws it (Figs. 6-8): entities as nodes at their hop
    from the topic entity, relations as arrows in the KG's direction, the inference path beside."""
    graph = Graph(title=state.question.text, text="\n".join(subgraph_lines(state)))
    wanted = {normalize(a) for a in answers}
    depth: dict[str, int] = {}
    for sg in state.subgraphs:
        depth[sg.topic] = 0
        for path in sg.paths:
            for hop, step in enumerate(path, 1):
                depth[step.entity] = min(hop, depth.get(step.entity, hop))
    topics = {sg.topic for sg in state.subgraphs}
    for entity, hops in depth.items():
        label = state.names.get(entity, entity)
        role = "topic" if entity in topics else "answer" if normalize(label) in wanted else ""
        graph.nodes.append(Node(entity, label, hops, role))
    edges = dict.fromkeys(t for sg in state.subgraphs for t in sg.triples())
    graph.edges = [Edge(head, tail, relation) for head, relation, tail in edges]
    if inference is None:
        graph.side = ["Inference path: none (ipg=false)."]
    else:
        graph.side = ["Inference path (the LLM's own knowledge):", *(inference.paths or ["(none parsed)"]),
                      f"Its answer: {braces(inference.answers)}."]
    graph.side.append(outcome)
    return graph


# --------------------------------------------------------------------------- the algorithm


@register("knowpath", config=KnowPathConfig, stages=("ipg", "relation", "entity", "evaluation"))
def answer(question: Question, ctx: Context) -> Prediction:
    p: KnowPathConfig = ctx.params
    inference = generate_inference_paths(question, ctx) if p.ipg else None
    keys = _keys(list(question.topic_entities.values()))
    state = Exploration(question, [Subgraph(topic, name, key) for (topic, name), key
                                   in zip(question.topic_entities.items(), keys)],
                        dict(question.topic_entities), inference.paths if inference and inference.paths else None)
    if inference is not None and not p.exploration:  # the config rejects ipg=false with exploration=false
        return from_inference_path(state, inference, ctx)
    if not state.subgraphs:
        ctx.trace.note("exploration", "the question names no topic entity: nothing to explore")
    verdict: Optional[Verdict] = None
    evaluated = False
    rounds = 0
    for rounds in range(1, p.depth + 1):
        grew = explore_round(state, ctx) if state.subgraphs else False
        ctx.trace.note("exploration", f"round {rounds}: {'subgraph updated' if grew else 'nothing new'}",
                       round=rounds, paths=subgraph_lines(state))
        if not grew:
            ctx.trace.note("exploration", f"round {rounds} ended early: no subgraph grew, so exploration stops")
            break
        verdict, evaluated = evaluate(state, ctx), True
        if verdict is not None and verdict.answerable:
            return finish(state, inference, verdict.answers, conclusion(verdict.reasoning, verdict.answers), "ok",
                          f"answerable after round {rounds}", rounds, "subgraph", ctx)
    return fallback(state, inference, verdict, evaluated, rounds, ctx)


def fallback(state: Exploration, inference: Optional[InferencePath], verdict: Optional[Verdict],
             evaluated: bool, rounds: int, ctx: Context) -> Prediction:
    """Sec. 2.4: not answerable after the last round -> the inference path's answer. Without one
    (w/o IPG, or IPG gave none), the last verdict's best guess; if exploration ended before any
    evaluation, one evaluation of what was found, so that the question still gets an answer
    within 1 + 3 x rounds calls."""
    why = f"not answerable from the subgraph after {rounds} round(s)"
    if inference is not None and inference.answers:
        return finish(state, inference, inference.answers, from_path(inference), "fallback",
                      f"{why}: answered from the inference path", rounds, "inference path", ctx)
    source = "last evaluation's best guess"
    if not evaluated:
        verdict = evaluate(state, ctx)
        source = "an evaluation of the subgraph as found"
    if verdict is None or not verdict.answers:
        return finish(state, inference, [], "", "fallback", f"{why}; no inference path answer and no "
                      f"evaluation answer", rounds, "none", ctx)
    return finish(state, inference, verdict.answers, conclusion(verdict.reasoning, verdict.answers), "fallback",
                  f"{why}; no inference path answer: {source}", rounds, source, ctx)


def from_inference_path(state: Exploration, inference: InferencePath, ctx: Context) -> Prediction:
    """Table 2, w/o SE: the inference path's answer is the method's answer."""
    if not inference.answers:
        return finish(state, inference, [], "", "fallback", "exploration=false and inference paths "
                      "generation gave no answer", 0, "none", ctx)
    return finish(state, inference, inference.answers, from_path(inference), "ok",
                  "exploration=false: answered from the inference path", 0, "inference path", ctx)


def conclusion(lead: str, answers: list[str]) -> str:
    """The papers' answer text: the reasoning, then the answers in braces (ToG's scorer reads them)."""
    return f"{lead.strip()} So the answer is {braces(answers)}.".strip()


def from_path(inference: InferencePath) -> str:
    return conclusion("; ".join(inference.paths) + "." if inference.paths else "", inference.answers)


def finish(state: Exploration, inference: Optional[InferencePath], answers: list[str], text: str,
           status: Status, reason: str, rounds: int, source: str, ctx: Context) -> Prediction:
    """The prediction, with the rounds used and the answer's source noted in the trace and kept
    as stats (a run logs ``stat.rounds`` and the share of answers from each source)."""
    ctx.trace.note("answer", reason, rounds=rounds, source=source)
    ctx.trace.explanation = explanation(state, inference, answers, f"Outcome: {reason}.").to_dict()
    stats = {"rounds": float(rounds), "answer_from_subgraph": float(source == "subgraph"),
             "answer_from_inference_path": float(source == "inference path")}
    return Prediction(answer=text, answers=answers, evidence=evidence(state), status=status, reason=reason,
                      stats=stats)
