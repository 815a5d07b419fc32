"""StructGPT on knowledge graphs (Jiang et al., "StructGPT: A General Framework for Large Language
Model to Reason over Structured Data", EMNLP 2023; released RUCAIBox/StructGPT,
``structgpt_for_webqsp.py``): iterative reading-then-reasoning through KG interfaces.

Per question, from the topic entities, at each step s = 1..S (invoking, linearisation, generation):
  1. invoke ``Extract_Neighbor_Relations`` on the current entities (no LLM) and linearise the
     relations as a list; ``relation_selection``: one call chooses ``width`` of them (the released
     prompt asks for one);
  2. invoke ``Extract_Triples`` for the chosen relation (no LLM); an unnamed (CVT) node is read one
     hop further. ``constraints`` (when two or more CVTs were read): one call picks the attribute
     values the question pins down, and only the CVTs that hold them stay;
  3. linearise the triples; ``reasoning``: one call answers, or says further information is needed;
     then the entities reached become the current entities.
When no relation is left to follow, nothing is chosen or read, or after step S, one ``answer`` call
answers "according to existing information": the triples read, or without any the model's own
knowledge (status ``fallback``, as for a question without topic entity).

Call bound, retries of invalid output not counted: S(2 + c) + 1 with c = 1 when ``constraints``
is on (0 off): 10 at the defaults (S = 3).

Where the released code stops short of its paper, kgx follows the paper: the released
``forward_v2`` reads one relation (plus its CVTs) and answers; the paper iterates, so kgx iterates up
to ``depth`` steps, keeping the released "already selected relations" in the relation prompt. The
released KG is a 2-hop subgraph read forwards only (its triples include inverse relations); kgx
reads both directions, marking a relation walked backwards ``(reverse)``, as its other methods do.
The constraints call is skipped when a single CVT was read (nothing to narrow), and the entities
carried to the next step are capped (``max_frontier``, noted) so a step's KG reads stay bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from kgx.core.config import MethodConfig, check_temperature
from kgx.core.types import Horizon, Prediction, Question
from kgx.methods import kit
from kgx.methods.answers import clean_answers, conclusion, final_answer, sufficiency_schema
from kgx.methods.base import Context, register
from kgx.methods.kit import Arc, Hop
from kgx.methods.structgpt import prompts as prompts
from kgx.methods.structgpt.reading import (
    Reading,
    constraint_values,
    extract_triples,
    linearize,
    matching_cvts,
    neighbor_relations,
)

STAGES = ("relation_selection", "constraints", "reasoning", "answer")


@dataclass
class StructGPTConfig(MethodConfig):
    """StructGPT's KGQA loop. Defaults are the released WebQSP run's where it has one
    (``run_webqsp_wo_icl_v1.sh``: temperature 0, 60 triples per relation, 3,400 input words)."""

    name: str = "structgpt"
    depth: int = 3  # S: reading steps (the paper iterates; released forward_v2: 1)
    width: int = 1  # relations followed per step (released prompt: "only one relevant relation")
    temperature: float = 0.0  # released: temperature 0 for every call
    constraints: bool = True  # the released choose_constraints call over CVT attributes
    filter_relations: bool = True  # drop type.* and common.* relations (released filter_relation)
    max_triples_per_relation: int = 60  # per (entity, relation) read (released --max_triples_per_relation 60)
    max_input_words: int = 3400  # linearised triples per prompt, in words (released max_llm_input_tokens)
    max_relations: int = 100  # KG cap on relations per entity and direction; cuts are recorded
    max_frontier: int = 20  # entities carried to the next step (released: no cap)
    max_values: int = 30  # values shown per CVT attribute in the constraints call
    max_answers: int = 1  # released: "provide only one answer entity"
    # Never walk back: the relation that reached an entity is not offered backwards from it, and no
    # topic entity is read from again. On a KG without inverse relations (MetaQA) that removes every
    # co-star / co-director question; true allows both (a comparison setting, not the paper's).
    walk_back: bool = False

    def horizon(self) -> Horizon:
        """Reachability's bound: a reading step reads an unnamed (CVT) node one hop further."""
        return Horizon(self.depth, cvt_free=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(
            1,
            "depth",
            "width",
            "max_triples_per_relation",
            "max_input_words",
            "max_relations",
            "max_frontier",
            "max_values",
            "max_answers",
        )
        check_temperature("method.temperature", self.temperature)


def call_bound(params: StructGPTConfig) -> int:
    """At most S(2 + c) + 1 calls per question (module docstring): per step relation selection,
    constraints (c = 1 when on) and reasoning; the final answer."""
    return params.depth * (2 + int(params.constraints)) + 1


@dataclass
class Search:
    """What the loop has read: names of every entity met, each entity's hop from a topic entity,
    the arcs read, the relations followed and the linearised triples per step."""

    topics: list[str]
    names: dict[str, str]
    depth_of: dict[str, int]
    arcs: list[Arc]
    followed: list[str]
    lines: list[str]

    def start(self) -> list[str]:
        return [self.names.get(t, t) for t in self.topics]


def select_relation(question: Question, search: Search, offered: list[Hop], step: int, ctx: Context) -> list[Hop]:
    """Relation selection among the linearised neighbouring relations; a single candidate is taken
    without asking. An invented relation is discarded and counted, never read."""
    p: StructGPTConfig = ctx.params
    if len(offered) == 1:
        return offered
    by_label = {h.label: h for h in offered}
    prompt = prompts.relation_prompt(question.text, search.start(), search.followed, list(by_label), p.width)
    reply = kit.choose(
        ctx,
        "relation_selection",
        prompts.messages("relation_selection", prompt),
        {"relations": list(by_label)},
        high=p.width,
        temperature=p.temperature,
        note=f"no relation chosen at step {step}",
    )
    return [by_label[label] for label in reply.get("relations", [])]


def narrow(question: Question, search: Search, reading: Reading, step: int, ctx: Context) -> None:
    """The constraints call: keep the CVTs whose attributes hold the values the question pins down;
    when none does, all stay (noted)."""
    p: StructGPTConfig = ctx.params
    values = constraint_values(reading, search.names, p.max_values)
    if len(reading.attributes) < 2 or not values:
        return
    prompt = prompts.constraints_prompt(question.text, search.start(), list(values.items()))
    chosen = kit.choose(
        ctx,
        "constraints",
        prompts.messages("constraints", prompt),
        values,
        high=1,
        low=0,
        temperature=p.temperature,
        note=f"no constraint read at step {step}",
    )
    chosen = {relation: names for relation, names in chosen.items() if names}
    if not chosen:
        ctx.trace.note("constraints", f"step {step}: no constraint in the question", cvts=len(reading.attributes))
        return
    kept = matching_cvts(reading, chosen, search.names)
    if not kept:
        ctx.trace.note("constraints", f"step {step}: no CVT holds the constraints; all kept", constraints=chosen)
        return
    ctx.trace.note(
        "constraints", f"step {step}: {len(kept)} of {len(reading.attributes)} CVTs kept", constraints=chosen
    )
    reading.keep_cvts(kept)


def reason(question: Question, search: Search, lines: list[str], step: int, ctx: Context) -> Optional[Prediction]:
    """Reasoning over the step's linearised triples: a prediction, or None for "need further
    information" (an answer outside what can be used counts as that, noted)."""
    p: StructGPTConfig = ctx.params
    reply = kit.ask(
        ctx,
        "reasoning",
        prompts.messages("reasoning", prompts.reasoning_prompt(question.text, lines)),
        schema=sufficiency_schema(p.max_answers),
        temperature=p.temperature,
        note=f"no verdict at step {step}; reading on",
    )
    if reply is None or not reply["sufficient"]:
        ctx.trace.note("reasoning", f"step {step}: need further information")
        return None
    answers = clean_answers(reply["answers"], p.max_answers)
    if not answers:
        ctx.trace.note("reasoning", f"step {step}: 'sufficient' without an answer; reading on")
        return None
    return Prediction(
        answer=conclusion(reply["reasoning"], answers),
        answers=answers,
        evidence=list(search.lines),
        reason=f"answered at step {step}",
    )


def conclude(question: Question, search: Search, why: str, step: int, ctx: Context) -> Prediction:
    """The final ``answer`` call from the triples read; without any, from the model's own
    knowledge (status ``fallback``, the reason saying why)."""
    p: StructGPTConfig = ctx.params
    evidence = list(search.lines)
    reason = (
        f"{why}: answered from the triples read"
        if evidence
        else f"{why}: no KG facts, answered from the model's own knowledge"
    )
    reply = final_answer(
        ctx,
        prompts.messages("answer", prompts.answer_prompt(question.text, evidence)),
        evidence,
        reason,
        temperature=p.temperature,
        max_answers=p.max_answers,
    )
    return finish(question, search, reply, step, ctx)


def finish(question: Question, search: Search, prediction: Prediction, step: int, ctx: Context) -> Prediction:
    """The triples read as the question's picture; steps as stats."""
    ctx.trace.note("answer", prediction.reason, step=step, followed=search.followed)
    side = ["Relations followed:", *(search.followed or ["(none)"]), f"Outcome: {prediction.reason}."]
    ctx.trace.explanation = kit.picture(
        question.text,
        [a.triple() for a in search.arcs],
        search.names,
        search.depth_of,
        search.topics,
        prediction.answers,
        "\n".join(search.lines),
        side,
    ).to_dict()
    prediction.stats = {"steps": float(step), "answered_in_loop": float(prediction.reason.startswith("answered"))}
    return prediction


def read(search: Search, reading: Reading, step: int) -> None:
    """Record a step's arcs: CVTs one hop past the entity that reached them, values one more."""
    for arc in reading.all_arcs():
        search.arcs.append(arc)
        search.depth_of.setdefault(arc.target, search.depth_of.get(arc.source, step - 1) + 1)


@register("structgpt", config=StructGPTConfig, stages=STAGES)
def answer(question: Question, ctx: Context) -> Prediction:
    p: StructGPTConfig = ctx.params
    topics = list(question.topic_entities)
    search = Search(topics, dict(question.topic_entities), {t: 0 for t in topics}, [], [], [])
    if not topics:
        ctx.trace.note("relation_selection", "the question names no topic entity: nothing to read")
        return conclude(question, search, "no topic entity", 0, ctx)
    current, back = topics, {}
    for step in range(1, p.depth + 1):
        at = neighbor_relations(ctx, current, back, p.max_relations, "relation_selection")
        offered = list(dict.fromkeys(h for hops in at.values() for h in hops))
        if not offered:
            return conclude(question, search, f"no relation to follow at step {step}", step - 1, ctx)
        chosen = select_relation(question, search, offered, step, ctx)
        if not chosen:
            return conclude(question, search, f"no relation chosen at step {step}", step - 1, ctx)
        search.followed.append(", ".join(h.label for h in chosen))
        reading = extract_triples(ctx, at, chosen, search.names, p.max_triples_per_relation)
        if p.constraints:
            narrow(question, search, reading, step, ctx)
        read(search, reading, step)
        lines = linearize(ctx, reading, search.names, p.max_input_words, "reasoning")
        if not lines:
            return conclude(question, search, f"nothing read at step {step}", step, ctx)
        search.lines += lines
        verdict = reason(question, search, lines, step, ctx)
        if verdict is not None:
            return finish(question, search, verdict, step, ctx)
        tails = [t for t in reading.tails() if p.walk_back or t not in search.topics]
        back = {}
        for arc in [] if p.walk_back else reading.all_arcs():
            back.setdefault(arc.target, set()).add(arc.hop.reverse())
        current = kit.cap(
            ctx, "relation_selection", tails, p.max_frontier, "entities carried to the next step", step=step + 1
        )
        if not current:
            return conclude(question, search, f"no entity to read from after step {step}", step, ctx)
    return conclude(question, search, "max depth", p.depth, ctx)
