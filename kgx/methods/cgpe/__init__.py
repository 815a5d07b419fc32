"""CGPE: clue-guided path exploration (Tao et al., Sec. 3; no public code, the paper is the spec).

  1. Clue extraction (Sec. 3.2, one LLM call): the question's entities and relation-like words,
     without a hard split between the two, as a set of clues C, written freely by the model
     (the question's phrases are a hint, ``question_phrases.py``).
  2. Initial nodes (Sec. 3.3, no LLM): a KG node whose name is a clue starts a path; that clue
     is used for the path. Clue text is only ever a ``kg.search`` string. When no clue names a
     node, each is widened to the longest question phrase holding it that does (kgx's rule for a
     model that writes "Lewis" for "Jerry Lewis").
  3. Next node (Sec. 3.4, the matchings in ``matching.py``), per path, until every clue is
     used: the node's neighbours are the candidates, each as (relation, label, entity) with
     label = the entity's type or "none";
       - character matching (no LLM): a candidate named like an unused clue is the next node;
       - fuzzy matching (LLM): (relation, label) pairs unrelated to every unused clue are pruned;
       - rough matching (LLM): (label, entity) pairs scored against the unused clues, score 0
         removed (``rough_top_k``: only the k best kept);
       - exact matching (LLM): each remaining (label, entity) gets its most compatible unused
         clue or is dropped; several survivors fork the path.
  4. Termination (Sec. 3.5): a path that uses every clue ends the exploration of all paths; a
     path without a next node ends; two paths that left one initial node in opposite directions
     are merged when together they use every clue. A path ends or merges only after a step: an
     initial node alone holds no triple (when its clue was the only one, its one step looks for
     the answer to the question, ``prompts.ASKED``, the paper being silent on that case).
  5. Answering (one LLM call): the chosen path(s) as triples.

Stages: ``clue_extraction``, ``path_exploration`` (all three matching calls), ``answer``; each
can have its own backbone (``llm.stages.<stage>``, the paper's Table 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from kgx.core.config import ConfigError, MethodConfig, check_temperature
from kgx.core.types import Horizon, Prediction, Question
from kgx.methods import kit
from kgx.methods.answers import braces, clean_answers
from kgx.methods.base import Context, register
from kgx.methods.cgpe import prompts as prompts
from kgx.methods.cgpe.clue_paths import (
    COVERAGE,
    MERGED,
    NO_CLUES,
    NO_INITIAL_NODE,
    STAGE_ANSWER,
    STAGE_CLUES,
    STAGE_EXPLORE,
    Exploration,
    Path,
    merges,
    path_triples,
)
from kgx.methods.cgpe.matching import character_matching, exact_matching, fuzzy_matching, neighbours, rough_matching
from kgx.methods.cgpe.question_phrases import clue_pattern, fold, names_first, phrases, same_characters, written
from kgx.methods.fallbacks import no_answer


@dataclass
class CGPEConfig(MethodConfig):
    """Clue-guided path exploration (Tao et al.); field comments name the paper's section. Per-stage
    backbones (Table 4) are ``llm.stages.clue_extraction|path_exploration|answer``."""

    name: str = "cgpe"
    max_clues: int = 6  # clues one extraction may return (Sec. 3.2 gives no bound)
    max_clue_words: int = 8  # longest clue, in words: phrases hinted and clues written (Sec. 3.2)
    search_limit: int = 5  # KG nodes searched per clue for initial nodes (Sec. 3.3)
    character_matching: bool = True  # a neighbour named like an unused clue is the next node (Sec. 3.4; Table 3)
    llm_pruning: bool = True  # fuzzy, rough and exact matching by the LLM (Sec. 3.4; Table 3)
    rough_top_k: Optional[int] = None  # rough matching: None = drop score 0; k = keep the k best (Sec. 3.4)
    termination: bool = True  # clue coverage ends all exploration, paths merge (Sec. 3.5; Table 3)
    max_steps: int = 3  # without termination: steps each path takes (Sec. 4.4, "explored each path thrice")
    max_paths: int = 10  # paths explored at once; forks past it are cut and the cut recorded (kgx's bound)
    max_relations: int = 50  # relations per node and direction in the candidate set (Sec. 3.4); cuts recorded
    max_neighbors: int = 20  # neighbours per node, relation and direction (Sec. 3.4); cuts recorded
    max_candidates: int = 60  # (label, entity) pairs offered to rough matching (Sec. 3.4); cuts recorded
    max_answers: int = 20  # answers kept from the reply: one-to-many questions (Sec. 4.1, complete match)
    temperature: float = 0.0  # every call (Sec. 4.1: temperature 0 for all LLMs)

    def horizon(self) -> Horizon:
        """Reachability's bound: without termination ``max_steps`` steps per path; with it, each
        step uses up an unused clue and the initial node one, so at most ``max_clues - 1`` steps."""
        return Horizon(self.max_steps if not self.termination else max(1, self.max_clues - 1))

    def __post_init__(self) -> None:
        super().__post_init__()
        self.at_least(
            1,
            "max_clues",
            "max_clue_words",
            "search_limit",
            "max_steps",
            "max_paths",
            "max_relations",
            "max_neighbors",
            "max_candidates",
            "max_answers",
        )
        if self.rough_top_k is not None and self.rough_top_k < 1:
            raise ConfigError(f"method.rough_top_k={self.rough_top_k}: must be at least 1 (or null)")
        check_temperature("method.temperature", self.temperature)


# --------------------------------------------------------------------------- the algorithm


@register("cgpe", config=CGPEConfig, stages=("clue_extraction", "path_exploration", "answer"))
def answer(question: Question, ctx: Context) -> Prediction:
    p: CGPEConfig = ctx.params
    clues = extract_clues(question, ctx)
    if not clues:
        return respond(question, ctx, Exploration([], reason=NO_CLUES), {})
    roots = initial_nodes(clues, ctx)
    if not roots:
        wider = widened(question, clues, ctx)
        roots, clues = (initial_nodes(wider, ctx), wider) if wider != clues else ([], clues)
    if not roots:
        ctx.trace.note(STAGE_EXPLORE, "no clue names a KG node: answering without a path", clues=clues)
        return respond(question, ctx, Exploration(clues, reason=NO_INITIAL_NODE), {})
    run = explore(question, clues, roots, ctx)
    names = ctx.kg.names(sorted({n for path in run.chosen for n in path.nodes})) if run.chosen else {}
    ctx.trace.note(
        STAGE_EXPLORE,
        f"ended: {run.reason}",
        steps=run.steps,
        paths=len(run.states),
        chosen=[list(path.nodes) for path in run.chosen],
        termination=p.termination,
    )
    return respond(question, ctx, run, names)


def extract_clues(question: Question, ctx: Context) -> list[str]:
    """Sec. 3.2: one call; the model writes the question's clues, constrained only in form (a
    list of short phrases of the question's words). The question's phrases are a hint in the prompt, not the only
    choices, so a title the phrase rules split is still one clue. A reply giving a clue twice is
    asked again (a small model may repeat the topic entity for every clue, leaving nothing to
    explore towards); when every try repeats one, each clue is kept once. A clue inside a longer
    one is dropped, so that a name and a word inside it are one clue."""
    p: CGPEConfig = ctx.params
    hint = list(phrases(question.text, p.max_clue_words))
    if not hint:
        ctx.trace.note(STAGE_CLUES, "the question has no content words to take clues from")
        return []
    repeating: list[dict[str, Any]] = []  # replies that gave a clue twice, for when no try does better

    def once_each(reply: dict[str, Any]) -> dict[str, Any]:
        keys = [fold(c) for c in reply["clues"]]
        repeated = sorted({c for c, key in zip(reply["clues"], keys) if keys.count(key) > 1})
        if repeated:
            repeating.append(reply)
            raise ValueError(f"clues given more than once: {'; '.join(repeated)}")
        return reply

    def last_repeating(exc: Exception) -> Optional[dict[str, Any]]:
        if not repeating:
            ctx.trace.note(STAGE_CLUES, "no valid clues after the retries", error=str(exc))
            return None
        ctx.trace.note(
            STAGE_CLUES,
            "clues repeated after the retries: each used once",
            error=str(exc),
            clues=repeating[-1]["clues"],
        )
        return repeating[-1]

    reply = kit.ask(
        ctx,
        STAGE_CLUES,
        prompts.clues(question.text, names_first(hint)),
        temperature=p.temperature,
        schema=prompts.clues_schema(hint, p.max_clues, p.max_clue_words, pattern(question, p.max_clue_words)),
        validate=once_each,
        fallback=last_repeating,
    )
    if reply is None:
        return []
    clues = written(reply["clues"], question.text)
    ctx.trace.note(STAGE_CLUES, f"{len(clues)} clues", clues=clues)
    return clues


def pattern(question: Question, max_words: int) -> str:
    """The form of a clue: the question's words and its topic entities' names (``clue_pattern``)."""
    return clue_pattern(question.text, max_words, tuple(question.topic_entities.values()))


def initial_nodes(clues: list[str], ctx: Context, quiet: bool = False) -> list[Path]:
    """Sec. 3.3: KG nodes whose name is a clue, by ``kg.search`` with the clue as its text; each
    starts a path with that clue used. Search hits that only share words with it are not matches.
    ``quiet``: a look-up only, without the trace note."""
    p: CGPEConfig = ctx.params
    if ctx.kg is None:
        return []
    hits = {clue: ctx.kg.search(clue, limit=p.search_limit) for clue in clues}
    found = sorted({h for ids in hits.values() for h in ids})
    names = ctx.kg.names(found) if found else {}
    named = [Path((h,), (clue,)) for clue, ids in hits.items() for h in ids if same_characters(names.get(h, ""), clue)]
    if quiet:
        return named
    roots = kit.cap(ctx, STAGE_EXPLORE, named, p.max_paths, "initial nodes")
    ctx.trace.note(
        STAGE_EXPLORE,
        f"{len(roots)} initial nodes",
        roots=[{"node": r.nodes[0], "name": names.get(r.nodes[0], ""), "clue": r.clues[0]} for r in roots],
    )
    return roots


def widened(question: Question, clues: list[str], ctx: Context) -> list[str]:
    """kgx's rule for a model that writes part of a name (Sec. 3.3 assumes some clue names a node):
    when no clue does, each clue becomes the longest phrase of the question holding it that names
    a KG node ("Lewis" -> "Jerry Lewis"), if there is one; the others stay as written."""
    p: CGPEConfig = ctx.params
    hint = sorted(phrases(question.text, p.max_clue_words), key=lambda h: -len(h.split()))
    out, changed = [], {}
    for clue in clues:
        holding = [h for h in hint if fold(h) != fold(clue) and f" {fold(clue)} " in f" {fold(h)} "]
        named = next((h for h in holding if initial_nodes([h], ctx, quiet=True)), None)
        out.append(named or clue)
        if named:
            changed[clue] = named
    if not changed:
        return clues
    ctx.trace.note(STAGE_EXPLORE, "no clue names a KG node: clues widened to the question's phrases", widened=changed)
    return written(out, question.text)


def explore(question: Question, clues: list[str], roots: list[Path], ctx: Context) -> Exploration:
    """Sec. 3.4-3.5, breadth first: every live path takes one step per round, the initial nodes
    included (none is complete: it holds no triple). With termination, the first step that
    completes a path (its forks included) or lets two paths merge ends all exploration. Without
    it (Table 3), each path takes up to ``max_steps`` steps and the paths using the most clues
    are chosen."""
    p: CGPEConfig = ctx.params
    run = Exploration(clues, roots={r.nodes[0] for r in roots}, states=list(roots))
    complete: list[Path] = []
    frontier = roots
    while frontier:
        run.steps += 1
        following: list[Path] = []
        for path in frontier:
            if not p.termination and len(path.nodes) > p.max_steps:
                continue
            children = next_nodes(question, path, clues, ctx)
            run.states += children
            merged = merges(children, run.states, clues) if p.termination else []
            done = [c for c in children if c.covers(clues)]
            complete += done
            following += [c for c in children if not c.covers(clues)]
            if p.termination and (done or merged):
                run.chosen, run.reason = (done, COVERAGE) if done else (merged, MERGED)
                return run
        frontier = kit.cap(ctx, STAGE_EXPLORE, following, p.max_paths, "paths")
    if complete:
        run.chosen, run.reason = complete, COVERAGE
        return run
    longest = max(len(s.nodes) for s in run.states)
    run.chosen = [s for s in run.states if len(s.nodes) == longest and longest > 1]
    return run


def next_nodes(question: Question, path: Path, clues: list[str], ctx: Context) -> list[Path]:
    """Sec. 3.4 for one path: the paths one node longer (several when exact matching forks);
    none is a dead end. Only an initial node can be live with every clue used (its clue was the
    only one): its step matches the neighbours against the answer the question asks for."""
    p: CGPEConfig = ctx.params
    unused = path.unused(clues) or [prompts.ASKED]
    candidates = neighbours(path, ctx)
    if not candidates:
        ctx.trace.note(STAGE_EXPLORE, "dead end: the node has no neighbours", node=path.nodes[-1])
        return []
    if p.character_matching:
        matched = character_matching(candidates, unused)
        if matched:
            ctx.trace.note(
                STAGE_EXPLORE,
                "character matching",
                node=path.nodes[-1],
                matched=[{"node": c.entity, "clue": clue} for c, clue in matched],
            )
            return [path.extend(c.entity, clue, tuple(c.edges)) for c, clue in matched]
    if not p.llm_pruning:
        ctx.trace.note(STAGE_EXPLORE, "dead end: no candidate is named like an unused clue", node=path.nodes[-1])
        return []
    here = ctx.kg.names([path.nodes[-1]]).get(path.nodes[-1], path.nodes[-1])
    candidates = fuzzy_matching(question, here, unused, candidates, ctx)
    candidates = rough_matching(question, here, unused, candidates, ctx) if candidates else []
    matched = exact_matching(question, here, unused, candidates, ctx) if candidates else []
    if not matched:
        ctx.trace.note(STAGE_EXPLORE, "dead end: no candidate matches an unused clue", node=path.nodes[-1])
    return [path.extend(c.entity, clue, tuple(c.edges)) for c, clue in matched]


def respond(question: Question, ctx: Context, run: Exploration, names: dict[str, str]) -> Prediction:
    """Sec. 3.5: the chosen path(s) go to the LLM as triples. Without a triple, the question is
    still answered, from the model alone, and marked ``fallback``; a reply that stays invalid
    is an ``error`` that keeps the evidence and how exploration ended."""
    p: CGPEConfig = ctx.params
    triples = list(dict.fromkeys(t for path in run.chosen for t in path_triples(path, names)))
    if run.clues:
        ctx.trace.explanation = run.picture(question.text, names).to_dict()

    def answered(reply: dict[str, Any]) -> Prediction:
        answers = clean_answers(reply["answers"])
        return Prediction(
            answer=braces(answers),
            answers=answers,
            evidence=triples,
            status="ok" if triples else "fallback",
            reason=run.reason,
            stats=run.ending(),
        )

    return kit.ask(
        ctx,
        STAGE_ANSWER,
        prompts.answer(question.text, triples),
        temperature=p.temperature,
        schema=prompts.answer_schema(p.max_answers),
        validate=answered,
        fallback=lambda exc: no_answer(ctx, exc, triples, run.reason, run.ending()),
    )
