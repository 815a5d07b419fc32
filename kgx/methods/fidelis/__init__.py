"""FiDeLiS (Sui et al., ACL 2025): Path-RAG retrieval and a deductive-verification beam search.

  1. ``planning``: one call gives keywords to retrieve with, planning steps, and the question as a
     declarative statement with a placeholder where the answer goes;
  2. per topic entity, a beam search over reasoning paths (DVBS, Sec. 3.2), step by step:
     a. ``path_statement`` and ``verification`` (from the second step on): each path in the beam
        is rewritten as a sentence, then the model says whether the statement, its placeholder
        filled with the path's last entity, can be deduced from that sentence. A deducible path is
        a reasoning path and is extended no further;
     b. Path-RAG (``rag``, no LLM) gives each remaining path its ``top_n`` next steps;
     c. ``beam_search``: one call chooses the ``width`` best of all those extensions, the new beam;
     until the paths run out or reach ``depth`` hops (the last step only verifies);
  3. ``answer``: one call answers from the reasoning paths (the last beam where none was
     deducible).

Calls per question: 1 + T(D + D·k·v) + 1, T topic entities (at most ``max_topics``), D the depth,
k the width and v 2 with ``rewrite`` (1 without): 23 with one topic entity at the released
settings (k = D = 3), 65 with three. Retries of invalid output are not counted.

Departures from the released code (Y-Sui/FiDeLiS, ``src/llm_navigator.py``): one planning call
per question, not per topic entity (its planning prompt never reads the entity); one answer call
over every topic entity's reasoning paths, so that the answers are one ranked list; at most
``max_topics`` topic entities, so that the bound holds; a beam step whose reply stays invalid keeps
Path-RAG's best ``width`` extensions (the released code gives up on the question), and a statement
without the placeholder is read as "The answer is <entity>."; both noted in the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgx.core.config import ConfigError, MethodConfig, check_choice, check_temperature
from kgx.core.types import Horizon, Prediction, Question
from kgx.methods import kit
from kgx.methods.answers import final_answer
from kgx.methods.base import Context, register
from kgx.methods.fidelis import prompts as prompts
from kgx.methods.fidelis.prompts import PLACEHOLDER
from kgx.methods.fidelis.rag import Graph, next_steps
from kgx.methods.samplers import check_available
from kgx.methods.tog.search import Path


@dataclass
class FiDeLiSConfig(MethodConfig):
    """FiDeLiS (Sui et al.); defaults are the released code's inference settings
    (``scripts/inference.sh``: ``--top_n 30 --top_k 3 --max_length 3 --add_hop_information``)."""

    name: str = "fidelis"
    width: int = 3  # k: paths kept per beam step (--top_k)
    depth: int = 3  # hops a reasoning path may take (--max_length)
    top_n: int = 30  # Path-RAG's candidate next steps per path and step (--top_n)
    alpha: float = 0.3  # weight of the look-ahead, the best step one hop further (--alpha); 0: none
    sampler: str = "bm25"  # bm25 | sbert: Path-RAG's similarity (the released code: OpenAI embeddings)
    rewrite: bool = True  # the path as a sentence before verification (one call); False: the path itself
    temperature: float = 0.0  # every call (the released code's)
    max_topics: int = 3  # topic entities searched, each with its own beam; a cut is recorded
    max_neighbors: int = 100  # KG cap per entity and relation; cuts are recorded
    max_relations: int = 100  # KG cap on relations per entity and direction; cuts are recorded
    max_answers: int = 5

    def horizon(self) -> Horizon:
        """Reachability's bound: one hop per beam step; a CVT is a node like any other."""
        return Horizon(self.depth)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(1, "width", "depth", "top_n", "max_topics", "max_neighbors", "max_relations", "max_answers")
        if self.alpha < 0:
            raise ConfigError(f"method.alpha={self.alpha}: must be at least 0")
        check_temperature("method.temperature", self.temperature)
        check_choice("method.sampler", self.sampler, ("bm25", "sbert"))


@dataclass
class Plan:
    """The planning call's reply: what Path-RAG retrieves with, the steps the beam step reads,
    and the statement a reasoning path must make deducible."""

    keywords: list[str]
    steps: list[str] = field(default_factory=list)
    statement: str = ""

    @property
    def query(self) -> str:
        return ", ".join(self.keywords)

    def conclusion(self, entity: str) -> str:
        if PLACEHOLDER in self.statement:
            return self.statement.replace(PLACEHOLDER, entity)
        return f"The answer is {entity}."


# --------------------------------------------------------------------------- the stages


def planning(question: Question, ctx: Context) -> Plan:
    """Keywords, planning steps and the declarative statement; without a valid reply, the
    question is the keywords and no plan is shown."""
    p: FiDeLiSConfig = ctx.params
    reply = kit.ask(
        ctx,
        "planning",
        prompts.planning(question.text),
        schema=prompts.PLAN,
        temperature=p.temperature,
        note="no plan: the question is the keywords",
    )
    if reply is None:
        return Plan([question.text])
    plan = Plan([k for k in reply[prompts.KEYWORDS] if k.strip()] or [question.text])
    plan.steps, plan.statement = list(reply["planning_steps"]), reply["statement"]
    if PLACEHOLDER not in plan.statement:
        ctx.trace.note("planning", f"the statement has no {PLACEHOLDER}: 'The answer is <entity>.' instead")
    return plan


def labels(options: list[Path], graph: Graph) -> list[str]:
    """Each extension as ``(relation, entity)``, numbered ``entity [2]`` where two would read alike."""
    out: list[str] = []
    for path in options:
        step = path.steps[-1]
        name = graph.name(step.target)
        label, number = f"({step.hop.label}, {name})", 1
        while label in out:
            number += 1
            label = f"({step.hop.label}, {name} [{number}])"
        out.append(label)
    return out


def choose(
    question: Question, plan: Plan, beam: list[Path], options: list[list[Path]], graph: Graph, ctx: Context
) -> list[Path]:
    """One ``beam_search`` call: the ``width`` best of every path's extensions, shown under the
    path each extends; without a valid reply, Path-RAG's best ``width`` extensions."""
    p: FiDeLiSConfig = ctx.params
    extensions = [o for group in options for o in group]
    named = labels(extensions, graph)
    offered = dict(zip(named, extensions))
    order = iter(named)
    groups = [(graph.path_text(path), [next(order) for _ in group]) for path, group in zip(beam, options) if group]
    k = min(p.width, len(offered))
    reply = kit.choose(
        ctx,
        "beam_search",
        prompts.beam(question.text, plan.steps, groups, k),
        {prompts.STEPS: list(offered)},
        low=k,
        high=k,
        temperature=p.temperature,
        why="next step not among the candidates",
    )
    chosen = [offered[label] for label in reply.get(prompts.STEPS, [])]
    if not chosen:
        chosen = sorted(offered.values(), key=lambda o: -o.score)[:k]
        ctx.trace.note(
            "beam_search", f"no valid choice: Path-RAG's best {k} kept", kept=[graph.path_text(c) for c in chosen]
        )
    return chosen


def deducible(plan: Plan, path: Path, graph: Graph, ctx: Context) -> bool:
    """The deductive check of one path: the path as a sentence (``rewrite``), then whether the
    statement, filled with the path's last entity, follows from it."""
    p: FiDeLiSConfig = ctx.params
    premise = graph.path_text(path)
    if p.rewrite:
        reply = kit.ask(
            ctx,
            "path_statement",
            prompts.statement(premise),
            schema=prompts.STATEMENT,
            temperature=p.temperature,
            note="no sentence: the path itself is the premise",
        )
        premise = reply["statement"] if reply else premise
    verdict = kit.ask(
        ctx,
        "verification",
        prompts.verification(premise, plan.conclusion(graph.name(path.end))),
        schema=prompts.VERDICT,
        temperature=p.temperature,
        note="no verdict: the path is not deducible",
        path=graph.path_text(path),
    )
    return bool(verdict and verdict["deducible"])


@dataclass
class Found:
    """One topic entity's search: its reasoning paths, and whether they were verified."""

    paths: list[Path]
    verified: bool


def beam_search(question: Question, plan: Plan, topic: str, graph: Graph, ctx: Context) -> Found:
    """DVBS from ``topic``: verify, retrieve, choose, step by step."""
    p: FiDeLiSConfig = ctx.params
    beam, reasoning = [Path(topic)], []
    for step in range(p.depth + 1):
        if step:
            verdicts = [deducible(plan, path, graph, ctx) for path in beam]
            reasoning += [path for path, ok in zip(beam, verdicts) if ok]
            beam = [path for path, ok in zip(beam, verdicts) if not ok]
        if step == p.depth or not beam:
            break
        options = [next_steps(path, plan.query, graph, ctx) for path in beam]
        if not any(options):
            ctx.trace.note("beam_search", f"step {step + 1}: no next step", topic=topic)
            break
        beam = choose(question, plan, beam, options, graph, ctx)
    return Found(reasoning, True) if reasoning else Found(beam, False)


def conclude(question: Question, found: list[Found], graph: Graph, reason: str, ctx: Context) -> Prediction:
    """The ``answer`` call over every reasoning path, with the paths as evidence and picture."""
    p: FiDeLiSConfig = ctx.params
    paths = [path for f in found for path in f.paths if path.steps]
    texts = [graph.path_text(path) for path in paths]
    evidence = list(dict.fromkeys(t for path in paths for t in graph.evidence(path)))
    prediction = final_answer(
        ctx,
        prompts.answer(question.text, texts),
        evidence,
        reason,
        temperature=p.temperature,
        max_answers=p.max_answers,
    )
    depth = {path.topic: 0 for f in found for path in f.paths}
    for path in paths:
        for hops, step in enumerate(path.steps, 1):
            depth.setdefault(step.target, hops)
    triples = [t for path in paths for t in graph.triples(path)]
    ctx.trace.explanation = kit.picture(
        question.text, triples, graph.names, depth, list(depth), prediction.answers, "\n".join(texts), [reason]
    ).to_dict()
    prediction.stats = {"reasoning_paths": float(len(paths)), "verified": float(sum(f.verified for f in found))}
    return prediction


# --------------------------------------------------------------------------- the method


def check(params: FiDeLiSConfig) -> None:
    """sbert similarity needs the [sbert] extra: missing, the run fails before any question."""
    check_available(params.sampler)


def call_bound(params: FiDeLiSConfig) -> int:
    """LLM calls per question, at most: the plan; per topic entity, one beam_search call per step
    (D) and, per step after the first and path in the beam, a path_statement call (``rewrite``)
    and a verification call (D·k·v); the answer."""
    per_topic = params.depth + params.depth * params.width * (1 + params.rewrite)
    return 1 + params.max_topics * per_topic + 1


STAGES = ("planning", "beam_search", "path_statement", "verification", "answer")


@register("fidelis", config=FiDeLiSConfig, stages=STAGES, check=check)
def answer(question: Question, ctx: Context) -> Prediction:
    p: FiDeLiSConfig = ctx.params
    topics = list(question.topic_entities)
    kept = kit.cap(ctx, "beam_search", topics, p.max_topics, "topic entities", dropped=topics[p.max_topics :])
    graph = Graph(ctx, dict(question.topic_entities))
    if not kept:
        return conclude(question, [], graph, "the question names no topic entity", ctx)
    plan = planning(question, ctx)
    found = [beam_search(question, plan, topic, graph, ctx) for topic in kept]
    verified = sum(f.verified for f in found)
    if not any(path.steps for f in found for path in f.paths):
        reason = "no path left the topic entities"
    elif verified:
        reason = f"{verified} of {len(found)} topic entities reached a deducible path"
    else:
        reason = "no deducible path: answered from the last beam"
    return conclude(question, found, graph, reason, ctx)
