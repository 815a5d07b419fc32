"""Plan-on-Graph (Chen et al., "Plan-on-Graph: Self-Correcting Adaptive Planning of Large Language
Model on Knowledge Graphs", NeurIPS 2024; released code liyichen-cly/PoG, main_freebase.py).

Per question:
  0. ``decomposition`` (Task Decomposition, the Guidance mechanism): one call splits the question into sub-objectives.
Then from the topic entities, at each depth d = 1..D (Path Exploration, ``exploration.py``):
  1. ``relation_exploration``: per frontier entity, one call chooses up to ``width`` of its
     relations (both directions), guided by the question and the sub-objectives;
  2. ``entity_pruning``: per frontier entity, one call keeps, per chosen relation, up to
     ``entity_width`` of the entities it reaches (``prune=bm25|sbert``: ranked, no call);
  3. ``memory`` (Memory Updating): one call rewrites what is known per sub-objective from the new triples;
  4. ``reasoning`` (Evaluation): one call says whether memory and triples suffice and, if
     so, answers;
  5. reflection (the Reflection mechanism, self-correction; d < D only; ``reflection.py``): one
     ``reflection`` call decides whether entities met at earlier depths should join the next frontier
     and why; if so, one ``backtrack`` call chooses which.
At the depth limit, or when a depth finds nothing new, one ``answer`` call answers from the memory
and the triples (without any: from the model's own knowledge, status ``fallback``, as for a
question without topic entity).

Call bound, retries of invalid output not counted: with F = ``max_frontier`` entities explored per
depth, P = 2 calls per frontier entity (1 with prune=bm25|sbert) and r = 2 reflection calls per
depth before the last (0 with ``max_backtracks=0``):

    1 + D(PF + 2) + r(D - 1) + 1,  i.e. 2FD + 4D = 56 at the defaults (F = 5, D = 4).

Where the paper leaves a choice open or the released code departs from it, kgx chooses: the
released code caps neither relations, entities nor frontier ("as few as possible"); kgx caps them
(``width``, ``entity_width``, ``max_frontier``) so that the bound holds. Entities are pruned in one
call per frontier entity, not one per (entity, relation), and above ``max_entities`` candidates
the released sentence-encoder cut is a bm25 cut unless ``prune=sbert``. A backtracked entity that
was explored before is offered only relations not tried from it. At max depth the released code
answers by plain CoT without the triples; kgx answers from memory and triples, as its early stop
(``half_stop``) does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from kgx.core.config import ConfigError, MethodConfig, check_choice, check_temperature
from kgx.core.types import Horizon, Prediction, Question
from kgx.kg.freebase import is_literal
from kgx.methods import kit
from kgx.methods.answers import conclusion, final_answer, sufficiency_schema
from kgx.methods.base import Context, register
from kgx.methods.pog import prompts as prompts
from kgx.methods.pog.exploration import explore
from kgx.methods.pog.memory import Memory, interleave
from kgx.methods.pog.reflection import reflect
from kgx.methods.samplers import check_available

STAGES = (
    "decomposition",
    "relation_exploration",
    "entity_pruning",
    "memory",
    "reasoning",
    "reflection",
    "backtrack",
    "answer",
)


@dataclass
class PoGConfig(MethodConfig):
    """Plan-on-Graph: sub-objectives guide the exploration, a memory records what is known, and
    reflection backtracks to entities met earlier. Defaults are the released run's (main_freebase.py)
    where it has one; the caps it lacks keep the call bound (see the module docstring)."""

    name: str = "pog"
    depth: int = 4  # D: maximum exploration depth (released --depth 4)
    width: int = 3  # relations kept per frontier entity (Path Exploration; released: no cap)
    entity_width: int = 3  # entities kept per (entity, relation) (Path Exploration; released: no cap)
    max_frontier: int = 5  # F: entities explored per depth, reflection's additions first (released: no cap)
    temperature_explore: float = 0.3  # relation exploration (released --temperature_exploration 0.3)
    temperature_reason: float = 0.3  # every other stage, entity pruning included (released --temperature_reasoning)
    prune: str = "llm"  # llm | bm25 | sbert: who prunes entities (bm25/sbert: no entity_pruning call)
    remove_unnecessary_rel: bool = True  # released flag: drop type.object.type/name, common.*, freebase.*, sameAs
    max_subobjectives: int = 4  # sub-objectives kept from decomposition (Task Decomposition: "as few as possible")
    max_backtracks: int = 5  # reflections that may add entities (released: reverse_rec time < 5); 0: w/o reflection
    max_added: int = 3  # entities one backtrack call may add (Reflection; released: no cap)
    max_entities: int = 70  # candidates shown per relation or backtrack call, best ranked (released: SBERT top 70)
    max_relations: int = 100  # KG cap on relations per entity and direction; cuts are recorded
    max_neighbors: int = 100  # KG cap per (entity, relation); cuts are recorded
    exemplars: bool = True  # one worked example per stage, as the released prompts carry (False: zero-shot)
    max_answers: int = 5
    # The released pre_relations: never offer the hop back along the relation that reached an entity.
    # On a KG without inverse relations (MetaQA) that removes every co-star / co-director question;
    # true offers it (a comparison setting, not the paper's).
    walk_back: bool = False

    def horizon(self) -> Horizon:
        """Reachability's bound: one hop per exploration depth."""
        return Horizon(self.depth)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(
            1,
            "depth",
            "width",
            "entity_width",
            "max_frontier",
            "max_subobjectives",
            "max_added",
            "max_entities",
            "max_relations",
            "max_neighbors",
            "max_answers",
        )
        if self.max_backtracks < 0:
            raise ConfigError(f"method.max_backtracks={self.max_backtracks}: must be >= 0")
        check_temperature("method.temperature_explore", self.temperature_explore)
        check_temperature("method.temperature_reason", self.temperature_reason)
        check_choice("method.prune", self.prune, ("llm", "bm25", "sbert"))


def call_bound(params: PoGConfig) -> int:
    """At most 1 + D(PF + 2) + r(D - 1) + 1 calls per question (module docstring): decomposition;
    per depth one relation_exploration and (prune=llm) one entity_pruning call per frontier
    entity, one memory and one reasoning call; reflection and backtrack at every depth but the
    last; the final answer."""
    per_entity = 2 if params.prune == "llm" else 1
    reflecting = 2 if params.max_backtracks > 0 else 0
    return 1 + params.depth * (per_entity * params.max_frontier + 2) + reflecting * (params.depth - 1) + 1


def messages(ctx: Context, stage: str, content: str) -> list[dict[str, str]]:
    return prompts.messages(ctx.params.exemplars, stage, content)


def check(params: PoGConfig) -> None:
    """sbert pruning needs the [sbert] extra: missing, the run fails before any question."""
    check_available(params.prune)


# --------------------------------------------------------------------------- guidance


def decompose(question: Question, ctx: Context) -> list[str]:
    """Task Decomposition: the sub-objectives, at most ``max_subobjectives``; the question itself if none."""
    p: PoGConfig = ctx.params

    def valid(reply: Any) -> list[str]:
        found = list(dict.fromkeys(s.strip() for s in reply["subobjectives"] if s.strip()))
        if not found:
            raise ValueError("no sub-objective")
        return found

    subobjectives = kit.ask(
        ctx,
        "decomposition",
        messages(ctx, "decomposition", prompts.decomposition_prompt(question.text)),
        schema=prompts.decomposition_schema(p.max_subobjectives),
        temperature=p.temperature_reason,
        validate=valid,
        fallback=[question.text],
        note="no sub-objectives: the question is the only one",
    )
    ctx.trace.note("decomposition", "sub-objectives", subobjectives=subobjectives)
    return subobjectives


# --------------------------------------------------------------------------- memory, evaluation, reflection


def update_memory(question: Question, mem: Memory, depth: int, ctx: Context) -> None:
    """Memory Updating: what is known per sub-objective, rewritten from the notes and the new triples."""
    p: PoGConfig = ctx.params
    keys = [str(i) for i in range(1, len(mem.subobjectives) + 1)]
    prompt = prompts.memory_prompt(question.text, mem.subobjectives, mem.notes, mem.lines(mem.fresh))
    reply = kit.ask(
        ctx,
        "memory",
        messages(ctx, "memory", prompt),
        schema=prompts.memory_schema(len(keys)),
        temperature=p.temperature_reason,
        note=f"memory not updated at depth {depth}",
    )
    if reply is not None:
        mem.notes = {key: reply[key].strip() for key in keys}
    ctx.trace.note(
        "memory", f"memory after depth {depth}", depth=depth, memory=dict(mem.notes), new_triples=mem.lines(mem.fresh)
    )
    mem.fresh = []


def reasoning(question: Question, mem: Memory, depth: int, ctx: Context) -> Optional[Prediction]:
    """Evaluation: a prediction when memory and triples suffice, else None."""
    p: PoGConfig = ctx.params
    prompt = prompts.reasoning_prompt(question.text, mem.notes, mem.lines())
    reply = kit.ask(
        ctx,
        "reasoning",
        messages(ctx, "reasoning", prompt),
        schema=sufficiency_schema(p.max_answers),
        temperature=p.temperature_reason,
        note=f"no verdict at depth {depth}; searching on",
    )
    if reply is None or not reply["sufficient"]:
        return None
    answers = prompts.usable(reply["answers"], p.max_answers)
    if not answers:
        ctx.trace.note("reasoning", f"'sufficient' without a usable answer at depth {depth}; searching on")
        return None
    return Prediction(
        answer=conclusion(reply["reasoning"], answers),
        answers=answers,
        evidence=mem.lines(),
        reason=f"sufficient at depth {depth}",
    )


def conclude(question: Question, mem: Memory, why: str, depth: int, ctx: Context) -> Prediction:
    """The ``answer`` call from memory and triples; without any, from the model's own knowledge
    (status ``fallback``, the reason saying why)."""
    p: PoGConfig = ctx.params
    evidence = mem.lines()
    reason = (
        f"{why}: answered from memory and triples"
        if evidence
        else f"{why}: no KG facts, answered from the model's own knowledge"
    )
    prompt = prompts.answer_prompt(question.text, mem.notes, evidence)
    reply = final_answer(
        ctx,
        messages(ctx, "answer", prompt),
        evidence,
        reason,
        temperature=p.temperature_reason,
        max_answers=p.max_answers,
    )
    return finish(question, mem, reply, depth, ctx)


def finish(question: Question, mem: Memory, prediction: Prediction, depth: int, ctx: Context) -> Prediction:
    """The explored subgraph as the question's picture; depth and backtracking as stats."""
    ctx.trace.note("answer", prediction.reason, depth=depth, backtracked=[mem.name(e) for e in mem.backtracked])
    ctx.trace.explanation = mem.picture(question.text, prediction.answers, f"Outcome: {prediction.reason}.").to_dict()
    prediction.stats = {
        "depth": float(depth),
        "backtracks": float(len(set(mem.backtracked.values()))),
        "backtracked_entities": float(len(mem.backtracked)),
        "sufficient": float(prediction.reason.startswith("sufficient")),
    }
    return prediction


@register("pog", config=PoGConfig, stages=STAGES, check=check)
def answer(question: Question, ctx: Context) -> Prediction:
    p: PoGConfig = ctx.params
    topics = list(question.topic_entities)
    if not topics:
        ctx.trace.note("decomposition", "the question names no topic entity: nothing to explore")
        return conclude(question, Memory([], {}), "no topic entity", 0, ctx)
    mem = Memory(topics, dict(question.topic_entities), decompose(question, ctx))
    frontier = kit.cap(
        ctx, "relation_exploration", topics, p.max_frontier, "topic entities", dropped=topics[p.max_frontier :]
    )
    for depth in range(1, p.depth + 1):
        added = explore(question, mem, frontier, depth, ctx)
        if not any(added):
            ctx.trace.note("reasoning", f"nothing new at depth {depth}: the search ends")
            return conclude(question, mem, f"nothing new at depth {depth}", depth, ctx)
        update_memory(question, mem, depth, ctx)
        verdict = reasoning(question, mem, depth, ctx)
        if verdict is not None:
            return finish(question, mem, verdict, depth, ctx)
        if depth == p.depth:
            break
        upcoming = [e for e in interleave(added) if not is_literal(e)]
        back = reflect(question, mem, upcoming, depth, ctx) if p.max_backtracks else []
        ahead = list(dict.fromkeys([*back, *upcoming]))
        frontier = kit.cap(
            ctx,
            "relation_exploration",
            ahead,
            p.max_frontier,
            "frontier entities",
            depth=depth + 1,
            dropped=[mem.name(e) for e in ahead[p.max_frontier :]],
        )
        if not frontier:
            ctx.trace.note("reasoning", f"no entity to explore after depth {depth}: the search ends")
            return conclude(question, mem, f"no entity to explore after depth {depth}", depth, ctx)
    return conclude(question, mem, "max depth", p.depth, ctx)
