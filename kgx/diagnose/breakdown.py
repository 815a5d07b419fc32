"""Why a question was missed: the failure breakdown.

Hits@1 says how often a method was right, not why it was wrong. Every question of a KG method
lands in the first of these that holds:

- ``error`` / ``fallback``: kept apart (the question failed, or was answered without KG evidence);
- ``correct``: right under the headline rule (``hits1``);
- ``unreachable``: no gold answer within the method's depth of its topic entities, or no gold
  answer in the KG the question sees at all (its own subgraph under ``kg.scope=question``): the
  data, not the method (kgx.diagnose.reach);
- ``not_retrieved``: reachable, but no gold answer in the evidence the method gathered;
- ``lost``: in the gathered evidence, but not in the prompt of the call that answered (LMP's
  summaries, pruned paths);
- ``not_answered``: the answer call was shown a gold answer and still answered wrongly.

A method without a KG (io, cot, sc) has only ``correct`` and ``not_answered``. The record keeps
the facts (``reach``, ``shown``, the scores) and the category is derived from them, so a log
written before a category existed reads as "" (not classified) rather than as a wrong guess.
For a ``not_retrieved`` question :func:`left_at` names where the method left the gold path.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from kgx.core.metrics import answer_recall
from kgx.core.reachability import Reach
from kgx.core.trace import KGEvent, LLMEvent, Trace

HEADLINE = "hits1"
CATEGORIES = ("correct", "not_answered", "lost", "not_retrieved", "unreachable", "fallback", "error")
KG_ONLY = frozenset({"lost", "not_retrieved", "unreachable"})  # categories that need a KG
_QUESTION_LINE = re.compile(r"^[ \t]*(?:Question|Q)[ \t]*:.*$", re.M)


def category(status: str, scores: dict[str, float], reach: Optional[Reach], shown: Optional[bool]) -> str:
    """The category of one question (see the module docstring); "" when the record predates it."""
    if status == "error":
        return "error"
    if status == "fallback":
        return "fallback"
    if reach is None and shown is None:
        return ""
    if scores.get(HEADLINE, 0.0) >= 1.0:
        return "correct"
    if reach is None:  # no KG: the answer is simply wrong
        return "not_answered"
    if reach.reachable is False or reach.absent:
        return "unreachable"
    if not scores.get("answer_recall", 0.0):
        return "not_retrieved"
    return "lost" if not shown else "not_answered"


def answer_prompt(trace: Trace) -> str:
    """What the call that answered was shown: the last user message of the question's last
    successful LLM call, without its question line. Few-shot exemplars are earlier messages for
    most methods; when they are inline (several question lines in one message), the text up to
    the end of the paragraph of the one before last is theirs and is left out."""
    calls = [e for e in trace.events if isinstance(e, LLMEvent) and not e.error]
    if not calls:
        return ""
    users = [m.get("content", "") for m in calls[-1].messages if m.get("role") == "user"]
    text = users[-1] if users else ""
    lines = list(_QUESTION_LINE.finditer(text))
    if not lines:
        return text.strip()
    last = lines[-1]
    start = 0
    if len(lines) > 1:
        paragraph_end = text.find("\n\n", lines[-2].end())
        start = paragraph_end if 0 <= paragraph_end < last.start() else last.start()
    line_end = text.find("\n", last.start())
    return (text[start : last.start()] + (text[line_end:] if line_end >= 0 else "")).strip()


def shown(trace: Trace, gold: list[list[str]]) -> bool:
    """A gold alias in the answer call's prompt, by the rule of ``answer_recall``."""
    prompt = answer_prompt(trace)
    return bool(prompt) and answer_recall([prompt], gold)


def left_at(reach: Reach, trace: Trace) -> Optional[dict[str, Any]]:
    """Where exploration left the gold path: over the shortest gold paths, the one the method
    followed furthest, and its first step the method did not take (a ``neighbors`` call for that
    entity, relation and direction). A path followed to the end whose last call was cut by a cap
    says so; one followed to the end uncut means the method met the answer and pruned it."""
    if not reach.paths:
        return None
    followed: dict[tuple[str, str, str], int] = {}
    for e in trace.events:
        if isinstance(e, KGEvent) and e.operation == "neighbors" and not e.error:
            a = e.arguments
            key = (a.get("entity", ""), a.get("relation", ""), a.get("direction", ""))
            followed[key] = max(followed.get(key, 0), e.capped_from)
    best, depth = reach.paths[0], -1
    for path in reach.paths:
        taken = next((i for i, s in enumerate(path) if (s.source, s.relation, s.direction) not in followed), len(path))
        if taken > depth:
            best, depth = path, taken
    name = reach.names.get
    chain = " ".join(
        [name(best[0].source, best[0].source)]
        + [f"-{s.relation}{'' if s.direction == 'out' else ' (in)'}-> {name(s.target, s.target)}" for s in best]
    )
    if depth < len(best):
        step = best[depth]
        return {
            "depth": depth + 1,
            "relation": step.relation,
            "direction": step.direction,
            "entity": name(step.source, step.source),
            "path": chain,
            "why": f"left the gold path at depth {depth + 1}: {step.relation} ({step.direction}) from "
            f"{name(step.source, step.source)!r} was not followed",
        }
    last = best[-1]
    cut = followed[(last.source, last.relation, last.direction)]
    why = (
        f"followed the gold path to its end, but the last step's {cut} neighbours were cut to a cap"
        if cut
        else "followed the gold path to its end and then left the answer out (pruned)"
    )
    return {
        "depth": len(best),
        "relation": last.relation,
        "direction": last.direction,
        "entity": name(last.source, last.source),
        "path": chain,
        "why": why,
    }


def describe(reach: Reach) -> str:
    """One line for the trace: is a gold answer within the method's depth, and how far."""
    if reach.reachable is None:
        return f"reachability unknown within depth {reach.depth}: {reach.reason}"
    if not reach.reachable:
        return f"no gold answer within depth {reach.depth} of the topic entities"
    return f"a gold answer is {reach.distance} hop(s) from a topic entity (depth {reach.depth})"
