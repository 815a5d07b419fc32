"""Think-on-Graph (Sun et al., ICLR 2024): the LLM walks the KG by beam search. ToG-R too.

From the topic entities, at each depth (Sec. 2.1; one depth is ``exploration.py``):
  1. ``relation_prune``: per frontier entity, one call keeps up to N of its relations (both
     directions), each with a score, the scores adding up to 1 (kgx normalises, and notes,
     scores that do not: the model's ranking is kept);
  2. ``entity_score``: the candidate entities reached through the kept relations are scored, in
     one call per frontier entity (``method.score_per=entity``) or one per kept relation
     (``score_per=relation``, as the released code does); ToG-R (Sec. 2.2) keeps entities at
     random instead;
  3. the top N paths by relation score x entity score are kept; their ends are the next frontier;
  4. ``reasoning``: one call says whether the paths, with the model's own knowledge, suffice,
     and if so answers.
At max depth the ``answer`` call answers from the paths (``method.fallback=paths``; CGPE calls
this variant TOG*), or by CoT without them (``fallback=cot``: the released code, which also
answers by CoT when a question has no topic entity); a search that finds nothing new ends early
and answers from the paths so far. ``method.max_calls`` stops the exploration after that many
calls and answers from the paths (CGPE Sec. 4.1: 30); ``method.topics=clues`` finds the topic
entities by CGPE's clue extraction (one call) instead of taking the dataset's.

Hence at most D(N + E + 1) + 1 calls, E the entity_score calls per depth: N per entity, N^2 per
relation (ToG-R and bm25/sbert pruning: 0, and bm25/sbert make no relation_prune call either),
one more with ``topics=clues``, and never more than ``max_calls`` + 1: 22 at N = D = 3 per
entity, 40 per relation. Retries of invalid output are not counted.

Departures from the released code (IDEA-FinAI/ToG), each a defect there: names are looked up by
id, never zipped with ids after unnamed ones are dropped; incoming edges are queried with the
entity in the object slot, not the predicate slot; retries are bounded; sampling uses the run's
seeded generator; at most N topic entities are explored (so that the bound holds); and the
answer is the answer entities, never the {Yes} of the sufficiency check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from kgx.core.config import ConfigError, MethodConfig, check_choice, check_temperature
from kgx.core.run_identity import added
from kgx.core.types import Horizon, Prediction, Question
from kgx.methods import cot, kit
from kgx.methods.answers import answer_schema, sufficiency_schema
from kgx.methods.base import Context, register
from kgx.methods.fallbacks import no_answer
from kgx.methods.samplers import check_available
from kgx.methods.tog.exploration import CallCap, explore, explore_ask, start, topic_entities
from kgx.methods.tog.prompts import messages, triples_prompt
from kgx.methods.tog.search import Path, Search, frontier_of


@dataclass
class ToGConfig(MethodConfig):
    """Think-on-Graph (Sun et al., ICLR 2024, Sec. 2.1): beam search over the KG, the LLM pruning
    relations and scoring entities. N, D and the temperatures are the published run's
    (ToG/main_freebase.py); ``conf/paper_settings/tog_*.yaml`` turn on the rest of the released
    code's behaviour (``fallback=cot``, ``score_per=relation``) for the papers' datasets."""

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
    fallback: str = "paths"  # at max depth, answer from the paths (CGPE's TOG*) | cot: without them (released code)
    # one entity_score call per frontier entity | relation: per kept relation (the released code)
    score_per: str = added("entity")
    topics: str = added("gold")  # the dataset's topic entities | clues: found by CGPE's clue extraction (CGPE Sec. 4.1)
    max_calls: Optional[int] = added(None)  # stop exploring after this many LLM calls, answer from the paths (CGPE: 30)
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
        if self.max_calls is not None and self.max_calls < 1:
            raise ConfigError(f"method.max_calls={self.max_calls}: must be at least 1 (or null)")
        if not 0.0 <= self.score_tolerance < 1.0:
            raise ConfigError(f"method.score_tolerance={self.score_tolerance}: must lie in [0, 1)")
        check_temperature("method.temperature_explore", self.temperature_explore)
        check_temperature("method.temperature_reason", self.temperature_reason)
        check_choice("method.prune", self.prune, ("llm", "bm25", "sbert"))
        check_choice("method.fallback", self.fallback, ("paths", "cot"))
        check_choice("method.score_per", self.score_per, ("entity", "relation"))
        check_choice("method.topics", self.topics, ("gold", "clues"))


@dataclass
class ToGRConfig(ToGConfig):
    """ToG-R (Sec. 2.2): relations pruned as in ToG, entities kept at random (seeded) instead of
    scored by the LLM; ``num_retain_entity`` per chosen relation."""

    name: str = "tog_r"


# --------------------------------------------------------------------------- the search


def reasoning(question: Question, search: Search, depth: int, ctx: Context) -> Optional[Prediction]:
    """The sufficiency check: a prediction when the paths suffice, else None."""
    p = ctx.params
    reply = explore_ask(
        search,
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


WITHOUT_PATHS = ("max depth", "no topic entity")  # where the released code answers by CoT


def conclude(question: Question, search: Search, why: str, ctx: Context) -> Prediction:
    """The ``answer`` call: from the paths, or by CoT without them (``method.fallback=cot``,
    which the released code does at max depth and without a topic entity, with its 6-exemplar
    CoT prompt)."""
    p = ctx.params
    if why in WITHOUT_PATHS and p.fallback == "cot":
        messages_, schema, evidence = cot.messages(question, len(cot.EXEMPLARS["tog"]), "tog"), cot.SCHEMA, []
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
    the depth runs out, or the calls do (``method.max_calls``)."""
    topics, calls = topic_entities(question, ctx)
    search = Search(topics)
    search.calls = calls
    beam = start(topics, ctx)
    if not beam and ctx.params.fallback == "cot":
        return finish(question, conclude(question, search, "no topic entity", ctx), search, ctx)
    try:
        return finish(question, beam_search(question, beam, search, ctx, random_entities), search, ctx)
    except CallCap as cap:
        ctx.trace.note("reasoning", f"{cap}: the search stops and answers from its paths")
        return finish(question, conclude(question, search, "call cap", ctx), search, ctx)


def beam_search(
    question: Question, beam: list[Path], search: Search, ctx: Context, random_entities: bool
) -> Prediction:
    """Depth by depth from ``beam``: the verdict of the first depth whose paths suffice, else the
    answer call's."""
    p = ctx.params
    for depth in range(1, p.depth + 1):
        frontier = frontier_of(beam)
        extensions = [new for path in frontier for new in explore(question, path, search, ctx, random_entities)]
        beam = sorted((e for e in extensions if e.score > 0), key=lambda e: -e.score)[: p.width]
        if not beam:
            ctx.trace.note("reasoning", f"nothing new at depth {depth}: the search ends early")
            return conclude(question, search, f"ended at depth {depth}", ctx)
        search.keep(beam)
        verdict = reasoning(question, search, depth, ctx)
        if verdict is not None:
            return verdict
    return conclude(question, search, "max depth", ctx)


def check(params: ToGConfig) -> None:
    """sbert pruning needs the [sbert] extra: missing, the run fails before any question."""
    check_available(params.prune)


def call_bound(params: ToGConfig) -> int:
    """LLM calls per question, at most: per depth one relation_prune call per frontier entity (N),
    the entity_score calls (N, one per frontier entity; N^2, one per kept relation; none for
    ToG-R), and one reasoning call; then one answer call, and one clue extraction with
    ``topics=clues``. bm25/sbert pruning makes no relation_prune or entity_score call. The paper's
    2ND + D + 1 (Sec. 2.1) is the per-entity form; ``max_calls`` caps it at ``max_calls`` + 1."""
    n = params.width
    entity_calls = 0 if isinstance(params, ToGRConfig) else n if params.score_per == "entity" else n * n
    per_depth = (n + entity_calls if params.prune == "llm" else 0) + 1
    bound = params.depth * per_depth + 1 + (params.topics == "clues")
    return bound if params.max_calls is None else min(bound, params.max_calls + 1)


STAGES = ("relation_prune", "entity_score", "reasoning", "answer", "clue_extraction")


@register("tog", config=ToGConfig, stages=STAGES, check=check)
def answer(question: Question, ctx: Context) -> Prediction:
    return think_on_graph(question, ctx, random_entities=False)


@register("tog_r", config=ToGRConfig, stages=tuple(s for s in STAGES if s != "entity_score"), check=check)
def answer_r(question: Question, ctx: Context) -> Prediction:
    return think_on_graph(question, ctx, random_entities=True)
