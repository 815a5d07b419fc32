"""CGPE's next-node matching (Tao et al., Sec. 3.4): the candidate set of a path's last node, and the
four matchings that narrow it to the next node(s) against the clues the path has not used:
character matching (no LLM), then fuzzy, rough and exact matching (one LLM call each), as step 3
of ``__init__.py``'s docstring describes them.

Kept apart so that ``__init__.py`` reads as the paper's algorithm: its ``next_nodes`` runs these in
order for one path, and its ``explore`` decides when paths end or merge (Sec. 3.5).
"""

from __future__ import annotations

from typing import Any, Collection, Optional

from kgx.core.types import Question
from kgx.kg.freebase import Direction, is_literal
from kgx.llm.messages import Messages
from kgx.methods import kit
from kgx.methods.base import Context
from kgx.methods.cgpe import prompts as prompts
from kgx.methods.cgpe.clue_paths import STAGE_EXPLORE, Candidate, Path, grouped
from kgx.methods.cgpe.question_phrases import same_characters


def neighbours(path: Path, ctx: Context) -> list[Candidate]:
    """The candidate set: neighbours in both directions, not already on the path, capped per
    relation (``max_neighbors``) and per direction (``max_relations``), cuts recorded by ctx.kg."""
    p = ctx.params  # CGPEConfig
    node = path.nodes[-1]
    if is_literal(node):
        return []
    edges: dict[str, list[kit.Hop]] = {}
    directions: tuple[Direction, ...] = ("out", "in")
    for direction in directions:
        for relation in ctx.kg.relations(node, direction, limit=p.max_relations):
            for other in ctx.kg.neighbors(node, relation, direction, limit=p.max_neighbors):
                if other not in path.nodes:
                    edges.setdefault(other, []).append(kit.Hop(relation, direction))
    if not edges:
        return []
    names = ctx.kg.names(list(edges))
    labels = ctx.kg.types([e for e in edges if not is_literal(e)])
    return [Candidate(e, names.get(e, e), labels.get(e, "none"), found) for e, found in edges.items()]


def character_matching(candidates: list[Candidate], unused: list[str]) -> list[tuple[Candidate, str]]:
    """Candidates whose name is, character for character, an unused clue (no LLM)."""
    return [(c, clue) for c in candidates for clue in unused if same_characters(c.name, clue)]


def fuzzy_matching(
    question: Question, here: str, unused: list[str], candidates: list[Candidate], ctx: Context
) -> list[Candidate]:
    """Prune the (relation, label) pairs the LLM finds unrelated to every unused clue; a
    candidate keeps the hops whose pair survived."""
    pairs = list(dict.fromkeys(c.pair(hop) for c in candidates for hop in c.edges))
    messages = prompts.fuzzy(question.text, here, unused, pairs)
    reply = matching_call(ctx, messages, prompts.fuzzy_schema(pairs), "fuzzy matching: no valid reply; nothing kept")
    if reply is None:
        return []
    kept = set(kit.pick(ctx, STAGE_EXPLORE, reply["keep"], pairs, "fuzzy matching: not among the options"))
    survivors = []
    for c in candidates:
        hops = [hop for hop in c.edges if c.pair(hop) in kept]
        if hops:
            survivors.append(Candidate(c.entity, c.name, c.label, hops))
    ctx.trace.note(
        STAGE_EXPLORE,
        f"fuzzy matching kept {len(kept)} of {len(pairs)} (relation, label) pairs",
        kept=sorted(kept),
        candidates=len(survivors),
    )
    return survivors


def rough_matching(
    question: Question, here: str, unused: list[str], candidates: list[Candidate], ctx: Context
) -> list[Candidate]:
    """Score (label, entity) pairs against the unused clues; score 0 (or left out) is removed,
    and with ``rough_top_k`` only the k best-scored pairs stay."""
    p = ctx.params  # CGPEConfig
    groups = grouped(candidates)
    options = kit.cap(ctx, STAGE_EXPLORE, list(groups), p.max_candidates, "rough matching: candidates")
    messages = prompts.rough(question.text, here, unused, options)
    reply = matching_call(ctx, messages, prompts.rough_schema(options), "rough matching: no valid reply; nothing kept")
    if reply is None:
        return []
    scores = {
        o: int(s)
        for o, s in by_candidate(
            ctx, reply["scores"], "score", options, "rough matching: unknown or repeated candidate"
        ).items()
    }
    ranked = sorted((o for o in options if scores.get(o, 0) > 0), key=lambda o: -scores[o])
    if p.rough_top_k is not None:
        ranked = ranked[: p.rough_top_k]
    ctx.trace.note(
        STAGE_EXPLORE,
        f"rough matching kept {len(ranked)} of {len(options)} (label, entity) pairs",
        scores={o: scores[o] for o in ranked},
    )
    return [c for o in ranked for c in groups[o]]


def exact_matching(
    question: Question, here: str, unused: list[str], candidates: list[Candidate], ctx: Context
) -> list[tuple[Candidate, str]]:
    """Each remaining (label, entity) gets its most compatible unused clue, or is dropped."""
    groups = grouped(candidates)
    options = list(groups)
    messages, schema = prompts.exact(question.text, here, unused, options), prompts.exact_schema(options, unused)
    reply = matching_call(ctx, messages, schema, "exact matching: no valid reply; nothing matched")
    if reply is None:
        return []
    matched = by_candidate(
        ctx,
        reply["matches"],
        "clue",
        options,
        "exact matching: unknown or repeated candidate, or unknown clue",
        allowed=unused,
    )
    ctx.trace.note(
        STAGE_EXPLORE, f"exact matching chose {len(matched)} of {len(options)} (label, entity) pairs", matches=matched
    )
    return [(c, clue) for option, clue in matched.items() for c in groups[option]]


def matching_call(ctx: Context, messages: Messages, schema: dict[str, Any], failed: str) -> Optional[Any]:
    """One matching call (stage ``path_exploration``, at the method's temperature); None when its
    output stays invalid, after the ``failed`` note: that matching then keeps nothing."""
    return kit.ask(ctx, STAGE_EXPLORE, messages, schema=schema, temperature=ctx.params.temperature, note=failed)


def by_candidate(
    ctx: Context,
    items: list[dict[str, Any]],
    key: str,
    options: list[str],
    why: str,
    allowed: Optional[Collection[str]] = None,
) -> dict[str, Any]:
    """``item[key]`` per candidate, from the first item naming each offered candidate. An item
    naming another candidate or one named before, or whose value is not ``allowed``, is
    discarded and counted: a candidate gets one score and one clue."""
    out: dict[str, Any] = {}
    for item in items:
        candidate, value = item["candidate"], item[key]
        if candidate in options and candidate not in out and (allowed is None or value in allowed):
            out[candidate] = value
        else:
            ctx.llm.discard(STAGE_EXPLORE, why, candidate=candidate, **{key: value})
    return out
