"""KnowPath (Zhao et al., "Knowledge-enhanced Reasoning via LLM-generated Inference Paths over
Knowledge Graphs", Sec. 2 and App. A, B, F).

1. Inference paths generation (IPG, Sec. 2.2): one call lists knowledge triples from the model's
   own knowledge, answers, and gives a reasoning path ``entity -> relation -> ... -> answer``.
2. Subgraph exploration (SE, Sec. 2.3, Alg. 1), at most ``method.depth`` rounds, one subgraph per
   topic entity, each a set of directed paths from its topic entity. Per round, across all
   subgraphs: one call selects relations among the frontier's relations (both directions), one
   call selects entities among those the chosen relations reach, then every path grows by
   ``-> r -> e`` or ``<- r <- e`` in the edge's true direction (Alg. 2).
3. Evaluation-based answering (Sec. 2.4, ``evaluation.py``): after each round one call
   says whether the subgraph and the model's knowledge answer the question; if so, stop.
   Otherwise, after the last round, the inference path's answer is the answer (status ``fallback``).

So a question costs at most 1 + 3 x rounds calls (retries of invalid output aside).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from kgx.core.config import ConfigError, MethodConfig, check_temperature
from kgx.core.run_identity import added
from kgx.core.types import Horizon, Prediction, Question
from kgx.kg.freebase import DIRECTIONS
from kgx.llm.errors import OutputError
from kgx.methods import kit
from kgx.methods.answers import conclusion
from kgx.methods.base import Context, register
from kgx.methods.kit import Hop
from kgx.methods.knowpath import prompts as prompts
from kgx.methods.knowpath.evaluation import Verdict, evaluate, fallback, finish, from_inference_path
from kgx.methods.knowpath.exploration_graph import Exploration, Subgraph, distinct, walk
from kgx.methods.knowpath.parse import InferencePath, arrow_lines, read_reply


@dataclass
class KnowPathConfig(MethodConfig):
    """KnowPath (Zhao et al.): inference paths from the LLM's own knowledge guide the exploration of
    directed subgraphs. Field comments name the paper's section (Sec. 2-4, App. A, B, F)."""

    name: str = "knowpath"
    depth: int = 3  # D_max: rounds of subgraph exploration, one hop each (Sec. 2.3, Sec. 3.3)
    width: int = 3  # relations asked for per subgraph and round (Sec. 2.3 relation exploration, App. F.3)
    entity_width: int = 5  # entities asked for per subgraph and round (Sec. 2.3 entity exploration, App. F.4)
    # The reply's list length per subgraph, where the prompts' answer format states one apart from
    # the count they ask for (App. F.3/F.4: "up to 7 ... (length up to 5)"); null: the count asked for.
    list_length: Optional[int] = added(None)
    triples: int = 15  # knowledge triples listed by inference paths generation (Sec. 2.2, App. F.2; Fig. 5a)
    temperature_explore: float = 0.4  # relation and entity selection (Sec. 4.4, Fig. 5a)
    temperature_answer: float = 0.0  # inference paths generation and evaluation-based answering (Sec. 2.4)
    ipg: bool = True  # False: no inference path in any prompt and no path fallback (Table 2, w/o IPG)
    exploration: bool = True  # False: answer from the inference path alone (Table 2, w/o SE)
    max_relations: int = 50  # per entity and direction offered to relation selection; cuts are recorded
    max_neighbors: int = 40  # per entity, relation and direction offered to entity selection; cuts recorded
    max_answers: int = 5  # answers kept from a reply (Sec. 2.4 gives one response; lists allow several)

    def listed(self, asked: int) -> int:
        """How many items a reply may list when ``asked`` are asked for."""
        return asked if self.list_length is None else min(asked, self.list_length)

    def horizon(self) -> Horizon:
        """Reachability's bound: one hop per exploration round."""
        return Horizon(self.depth)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(1, "depth", "width", "entity_width", "max_relations", "max_neighbors", "max_answers")
        if self.list_length is not None and self.list_length < 1:
            raise ConfigError(f"method.list_length={self.list_length}: must be at least 1 (or null)")
        if self.triples < 0:
            raise ConfigError(f"method.triples={self.triples}: must be >= 0")
        check_temperature("method.temperature_explore", self.temperature_explore)
        check_temperature("method.temperature_answer", self.temperature_answer)
        if not self.ipg and not self.exploration:
            raise ConfigError(
                "method.ipg=false with method.exploration=false leaves nothing to answer "
                "from; the model alone is the IO baseline (method=io)"
            )


# --------------------------------------------------------------------------- inference paths generation


def generate_inference_paths(question: Question, ctx: Context) -> InferencePath:
    """Sec. 2.2 / F.2, one call, asking for room for the whole reply (``prompts.ipg_tokens``: 15
    triples alone outgrow a 256-token limit). A reply that never parses as JSON is
    searched for arrow lines."""
    p: KnowPathConfig = ctx.params

    def salvage(exc: OutputError) -> dict[str, Any]:
        lines = arrow_lines(exc.text)
        ctx.trace.note("ipg", f"reply unusable ({exc}); {len(lines)} arrow line(s) searched for paths")
        return {"paths": lines, "answers": []}

    reply = kit.ask(
        ctx,
        "ipg",
        prompts.inference_paths(question.text, p.triples),
        temperature=p.temperature_answer,
        schema=prompts.ipg_schema(p.triples, p.max_answers),
        fallback=salvage,
        max_tokens=prompts.ipg_tokens(p.triples, p.max_answers),
    )
    found, unparsed = read_reply(reply, p.max_answers)
    for text, why in unparsed:
        ctx.trace.note("ipg", f"inference path does not parse: {why}", path=text)
    if not found.paths:
        ctx.trace.note("ipg", "no inference path parsed: exploration proceeds without one")
    ctx.trace.note(
        "ipg",
        "inference path",
        paths=found.paths,
        answers=found.answers,
        triples=found.triples,
        topic_entities=found.topic_entities,
    )
    return found


# --------------------------------------------------------------------------- subgraph exploration

Edges = list[tuple[str, Hop]]  # (entity, hop) pairs: where a relation is walked from, or what reached an entity


def relation_exploration(state: Exploration, ctx: Context) -> dict[str, dict[str, Edges]]:
    """R_j^i: the frontier's one-hop relations in both directions, capped per entity and direction
    (the cut is recorded with the KG call); one call selects up to ``width`` per subgraph.
    Returns, per subgraph key, each chosen relation with the (entity, hop) pairs having it."""
    p: KnowPathConfig = ctx.params
    candidates: dict[str, dict[str, Edges]] = {}
    frontier_names: dict[str, list[str]] = {}
    for sg in state.subgraphs:
        found: dict[str, Edges] = {}
        for entity in sg.frontier_entities():
            for direction in DIRECTIONS:
                for relation in ctx.kg.relations(entity, direction, limit=p.max_relations):
                    found.setdefault(relation, []).append((entity, Hop(relation, direction)))
        if found:
            candidates[sg.key] = found
            frontier_names[sg.key] = [state.name(e) for e in sg.frontier_entities()]
        elif sg.frontier:
            ctx.trace.note(
                "relation", "the frontier has no relations; this subgraph keeps what it had", subgraph=sg.key
            )
    if not candidates:
        return {}
    offers = {key: list(found) for key, found in candidates.items()}
    messages = prompts.relations(
        state.question.text,
        state.topics,
        state.guide,
        [(key, frontier_names[key], offers[key]) for key in offers],
        p.width,
        p.list_length,
    )
    chosen = kit.choose(
        ctx,
        "relation",
        messages,
        offers,
        high=p.listed(p.width),
        temperature=p.temperature_explore,
        note="selection failed, nothing chosen",
    )
    return {key: {r: candidates[key][r] for r in relations} for key, relations in chosen.items() if relations}


def entity_exploration(
    state: Exploration, chosen: dict[str, dict[str, Edges]], ctx: Context
) -> dict[str, dict[str, Edges]]:
    """E_{j+1}^i: query (e, r, ?) or (?, r, e) as the chosen relation runs, capped per query; one
    call selects up to ``entity_width`` per subgraph. Entities already in a subgraph are not
    offered to it again. Returns, per subgraph key, each kept entity with the edges reaching it."""
    p: KnowPathConfig = ctx.params
    reached: dict[str, dict[str, Edges]] = {}
    for sg in state.subgraphs:
        if sg.key not in chosen:
            continue
        known = sg.entities()
        found: dict[str, Edges] = {}
        for relation, holders in chosen[sg.key].items():
            new = 0
            for entity, hop in holders:
                for neighbour in ctx.kg.neighbors(entity, hop.relation, hop.direction, limit=p.max_neighbors):
                    if neighbour not in known:
                        found.setdefault(neighbour, []).append((entity, hop))
                        new += 1
            if not new:
                ctx.trace.note(
                    "entity", "the chosen relation reaches no new entity", subgraph=sg.key, relation=relation
                )
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
        labels[key] = dict(zip(distinct([state.name(e) for e in found]), found))
        shown = []
        for label, entity in labels[key].items():
            (source, hop), more = found[entity][0], len(found[entity]) - 1
            shown.append((label, state.name(source) + walk(hop, label) + (f" (+{more} more)" if more else "")))
        offers.append((key, shown))
    relations = list(dict.fromkeys(r for found in chosen.values() for r in found))
    messages = prompts.entities(
        state.question.text, state.topics, state.guide, relations, offers, p.entity_width, p.list_length
    )
    kept = kit.choose(
        ctx,
        "entity",
        messages,
        {key: list(labels[key]) for key in labels},
        high=p.listed(p.entity_width),
        temperature=p.temperature_explore,
        note="selection failed, nothing chosen",
    )
    return {
        key: {labels[key][label]: reached[key][labels[key][label]] for label in chosen_labels}
        for key, chosen_labels in kept.items()
        if chosen_labels
    }


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


# --------------------------------------------------------------------------- the algorithm


@register("knowpath", config=KnowPathConfig, stages=("ipg", "relation", "entity", "evaluation"))
def answer(question: Question, ctx: Context) -> Prediction:
    p: KnowPathConfig = ctx.params
    inference = generate_inference_paths(question, ctx) if p.ipg else None
    keys = distinct(list(question.topic_entities.values()))
    state = Exploration(
        question,
        [Subgraph(topic, name, key) for (topic, name), key in zip(question.topic_entities.items(), keys)],
        dict(question.topic_entities),
        inference.paths if inference and inference.paths else None,
    )
    if inference is not None and not p.exploration:  # the config rejects ipg=false with exploration=false
        return from_inference_path(state, inference, ctx)
    if not state.subgraphs:
        ctx.trace.note("exploration", "the question names no topic entity: nothing to explore")
    verdict: Optional[Verdict] = None
    evaluated = False
    rounds = 0
    for rounds in range(1, p.depth + 1):
        grew = explore_round(state, ctx) if state.subgraphs else False
        ctx.trace.note(
            "exploration",
            f"round {rounds}: {'subgraph updated' if grew else 'nothing new'}",
            round=rounds,
            paths=state.lines(),
        )
        if not grew:
            ctx.trace.note("exploration", f"round {rounds} ended early: no subgraph grew, so exploration stops")
            break
        verdict, evaluated = evaluate(state, ctx), True
        if verdict is not None and verdict.answerable:
            return finish(
                state,
                inference,
                verdict.answers,
                conclusion(verdict.reasoning, verdict.answers),
                "ok",
                f"answerable after round {rounds}",
                rounds,
                "subgraph",
                ctx,
            )
    return fallback(state, inference, verdict, evaluated, rounds, ctx)
