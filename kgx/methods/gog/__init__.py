"""Generate-on-Graph (Xu et al., EMNLP 2024): the LLM as both agent and KG, for incomplete KGs.

The Thinking-Searching-Generating loop (Sec. 5), at most ``method.max_steps`` steps:
  1. Thinking (``think``): a thought that decomposes the question, names the next sub-question or
     decides to answer, and one action (Sec. 5.1);
  2. Search[entities] (``searching.py``, Sec. 5.2): each entity's relations explored, the top N
     kept for the thought by the ``filter`` call, the triples through them read;
     Generate[thought] (``generation.py``, Sec. 5.3): known triples chosen by BM25, new ones
     generated ``samples`` times, verified (``verify``), their new entities linked (``link``);
     Finish[answers]: the answer;
  3. the action's Observation joins the history the next thought sees.
Finish[unknown] rolls back the Generate steps and searches one hop further, from the entities the
last Search reached first ("we would roll back and search one more hop neighbors of the last target
entity"), at most ``max_expansions`` times; after that, or when the steps run out, the answer comes
from the model alone (``answer``, status fallback), as the released code's
``answer_question_without_kg`` gives it.

Calls per question: per step one ``think`` and one action, a Search one ``filter`` call per entity
it reads (at most ``max_search``), a Generate ``samples`` + 1 ``verify`` + at most 2 x
``max_generated`` ``link`` calls; then at most one ``answer``. Hence at most
max_steps x (1 + max(max_search, samples + 1 + 2 max_generated)) + 1 calls: 67 at the defaults.
Retries of invalid output are not counted.

Departures from the released code (YaooXu/GoG), each for kgx's rules or bound: every choice is
constrained to its candidates (a Search reads entities met and not searched yet, the first one the
topic entities; the released prompt is parsed from free text), a Search reads at most
``max_search`` entities, every Generate is verified (see ``generation.py``), a name is linked by
the KG's own name lookup (released: a BM25 index of Freebase names), and an entity with a single
relation needs no ``filter`` call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from kgx.core.config import MethodConfig, check_temperature
from kgx.core.metrics import normalize
from kgx.core.types import Horizon, Prediction, Question
from kgx.methods import kit
from kgx.methods.answers import clean_answers, conclusion, final_answer
from kgx.methods.base import Context, register
from kgx.methods.gog.generation import generate
from kgx.methods.gog.memory import Memory, Step
from kgx.methods.gog.prompts import (
    ACTIONS,
    UNKNOWN,
    action_text,
    answer_messages,
    answer_prompt,
    think_messages,
    think_prompt,
    think_schema,
)
from kgx.methods.gog.searching import search


@dataclass
class GoGConfig(MethodConfig):
    """Generate-on-Graph (Xu et al., EMNLP 2024, Sec. 5 and 6.1). The step count, the relations
    kept, the triples per relation, the related triples and the expansions are the released
    code's defaults (YaooXu/GoG src/GoG.py and environment.py); the temperature is Sec. 6.1's."""

    name: str = "gog"
    max_steps: int = 6  # Thought-Action steps before answering without the KG (released: 6)
    relations: int = 3  # N: relations the filter keeps per searched entity (filter prompt: "select 3 relations")
    per_relation: int = 5  # triples read per kept relation, sampled at random beyond it (released: 5)
    max_search: int = 5  # entities one Search reads (kgx's cap, for the call bound)
    related_triples: int = 10  # known triples a Generate is shown, by BM25 (Sec. 5.3, Fig. 4; released: 10)
    samples: int = 3  # n: generations per Generate action, then one verification (Sec. 5.3)
    max_generated: int = 3  # triples one generation writes and one verification keeps, at most
    link_candidates: int = 10  # KG entities offered to link a generated name (released select_entity: 10)
    max_expansions: int = 2  # Finish[unknown] searches one hop further (released --max_n_expand 3: the 3rd ends)
    generate: bool = True  # False: GoG without the Generate action (Table 4's ablation)
    temperature: float = 0.7  # every call (Sec. 6.1)
    max_candidates: int = 50  # entities offered to a Search at most; a cut is noted
    max_relations: int = 100  # KG cap on candidate relations per entity and direction; cuts are recorded
    max_neighbors: int = 100  # KG cap per (entity, relation) before sampling; cuts are recorded
    exemplars: bool = True  # the worked examples (the paper's 3 shots); False: zero-shot
    max_answers: int = 5

    def horizon(self) -> Horizon:
        """Reachability's bound: a Search reads one hop further per step, and the last step must
        be the Finish that answers from what was read."""
        return Horizon(max(1, self.max_steps - 1))

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(
            1,
            "max_steps",
            "relations",
            "per_relation",
            "max_search",
            "related_triples",
            "samples",
            "max_generated",
            "link_candidates",
            "max_candidates",
            "max_relations",
            "max_neighbors",
            "max_answers",
        )
        self.at_least(0, "max_expansions")
        check_temperature("method.temperature", self.temperature)


# --------------------------------------------------------------------------- Thinking


def think(question: Question, memory: Memory, step: int, ctx: Context) -> Optional[dict[str, Any]]:
    """The thought and action of ``step``: Search names entities among those offered, Finish gives
    answers; None when the output stays unusable."""
    p = ctx.params
    searchable = kit.cap(ctx, "think", memory.searchable(), p.max_candidates, "entities offered to Search")
    actions = [a for a in ACTIONS if (a != "Search" or searchable) and (a != "Generate" or p.generate)]
    topics = [memory.label(t) for t in memory.topics]
    # numbered after the steps in the history, as the released code numbers them (a roll back renumbers)
    prompt = think_prompt(question.text, topics, memory.history(), searchable, len(memory.steps) + 1)

    def valid(reply: dict[str, Any]) -> dict[str, Any]:
        entities = kit.pick(ctx, "think", reply.get("entities", []), searchable, "not an entity to search")
        answers = clean_answers(reply.get("answers", []), p.max_answers)
        if reply["action"] == "Search" and not entities:
            raise ValueError("Search names no entity to search")
        if reply["action"] == "Finish" and not answers:
            raise ValueError("Finish gives no answer")
        return {**reply, "thought": reply["thought"].strip(), "entities": entities[: p.max_search], "answers": answers}

    return kit.ask(
        ctx,
        "think",
        think_messages(prompt, p.exemplars),
        schema=think_schema(actions, searchable, p.max_search, p.max_answers),
        temperature=p.temperature,
        validate=valid,
        fallback=None,
        note=f"no usable thought at step {step}",
    )


def unknown(answers: list[str]) -> bool:
    return all(normalize(a) == UNKNOWN for a in answers)


# --------------------------------------------------------------------------- the loop


def generate_on_graph(question: Question, ctx: Context) -> Prediction:
    """Think, act, observe, until Finish, the expansions or the steps run out."""
    p = ctx.params
    memory = Memory(dict(question.topic_entities))
    expansions = 0
    for step in range(1, p.max_steps + 1):
        reply = think(question, memory, step, ctx)
        if reply is None:
            return without_kg(question, memory, f"no usable thought at step {step}", ctx)
        thought, action, entities = reply["thought"], reply["action"], reply["entities"]
        if action == "Finish" and not unknown(reply["answers"]):
            return finished(question, memory, thought, reply["answers"], step, ctx)
        if action == "Finish":
            last = memory.last_search()
            further = [memory.label(x) for x in (last.reached if last else []) if x not in memory.searched]
            if expansions == p.max_expansions or not further:
                return without_kg(question, memory, f"Finish[{UNKNOWN}] at step {step}", ctx)
            expansions += 1
            ctx.trace.note("think", f"Finish[{UNKNOWN}] at step {step}: one hop further from the last search")
            thought, action = last.thought, "Search"
            entities = kit.cap(ctx, "think", further, p.max_search, "entities of the expansion")
        if action == "Search":
            observation, reached = search(entities, thought, memory, ctx)
            memory.steps.append(
                Step(thought, action_text(action, " | ".join(entities)), "search", observation, reached)
            )
        else:
            observation = generate(thought, memory, ctx)
            memory.steps.append(Step(thought, action_text(action, thought), "generate", observation))
    return without_kg(question, memory, f"no Finish in {p.max_steps} steps", ctx)


def finished(
    question: Question, memory: Memory, thought: str, answers: list[str], step: int, ctx: Context
) -> Prediction:
    evidence = memory.evidence()
    prediction = Prediction(
        answer=conclusion(thought, answers),
        answers=answers,
        evidence=evidence,
        status="ok" if evidence else "fallback",
        reason=f"Finish at step {step}",
    )
    return described(question, prediction, memory, ctx)


def without_kg(question: Question, memory: Memory, why: str, ctx: Context) -> Prediction:
    """The released ``answer_question_without_kg``: the question and its topic entities, none of
    the steps; the model answers alone."""
    p = ctx.params
    topics = [memory.label(t) for t in memory.topics]
    messages = answer_messages(answer_prompt(question.text, topics), p.exemplars)
    reason = f"{why}: answered without the KG"
    prediction = final_answer(ctx, messages, [], reason, temperature=p.temperature, max_answers=p.max_answers)
    return described(question, prediction, memory, ctx)


def described(question: Question, prediction: Prediction, memory: Memory, ctx: Context) -> Prediction:
    """The steps as stats (how often GoG generated, Table 8's ratio) and the explored graph in the trace."""
    kinds = [s.kind for s in memory.steps]
    prediction.stats.update(
        {
            "steps": float(len(kinds)),
            "searches": float(kinds.count("search")),
            "generate_used": float("generate" in kinds),
            "generated_triples": float(len(memory.generated())),
        }
    )
    ctx.trace.explanation = memory.picture(question.text, prediction.answers, [prediction.reason]).to_dict()
    return prediction


def call_bound(params: GoGConfig) -> int:
    """LLM calls per question, at most: per step one think and its action's calls (a Search one
    filter per entity, a Generate its generations, one verification and two links per kept
    triple), then one answer without the KG."""
    generating = params.samples + 1 + 2 * params.max_generated if params.generate else 0
    return params.max_steps * (1 + max(params.max_search, generating)) + 1


STAGES = ("think", "filter", "generate", "verify", "link", "answer")


@register("gog", config=GoGConfig, stages=STAGES)
def answer(question: Question, ctx: Context) -> Prediction:
    return generate_on_graph(question, ctx)
