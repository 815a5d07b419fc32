"""Self-consistency (Wang et al. 2023): n chain-of-thought samples, majority vote on the answer.

Samples differ by their sample index (seed and cache key), so they are real samples even at a
deterministic backbone and are never collapsed into one cached reply.
"""
from __future__ import annotations

from collections import Counter

from kgx.methods import cot
from kgx.methods.base import Context, register
from kgx.metrics import normalize
from kgx.types import Prediction, Question


@register("sc")
def answer(question: Question, ctx: Context) -> Prediction:
    p = ctx.params
    replies = ctx.llm("answer", cot.messages(question, p.shots), schema=cot.SCHEMA,
                      temperature=p.temperature, n=p.n)
    samples = [cot.to_prediction(r) for r in replies]
    votes = Counter(normalize(s.answers[0]) for s in samples if s.answers)
    if not votes:
        return Prediction(answer="{}", status="fallback", reason="no sample gave an answer")
    winner, count = votes.most_common(1)[0]
    chosen = next(s for s in samples if s.answers and normalize(s.answers[0]) == winner)
    chosen.reason = f"majority {count}/{p.n}"
    return chosen
