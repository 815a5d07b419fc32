"""Self-consistency (Wang et al. 2023): n chain-of-thought samples, majority vote on the answer.

Samples differ by their sample index (seed and cache key), so they are real samples even at a
deterministic backbone and are never collapsed into one cached reply.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kgx.core.config import ConfigError, check_temperature
from kgx.core.metrics import normalize
from kgx.core.types import Prediction, Question
from kgx.llm.errors import OutputError
from kgx.methods import cot
from kgx.methods.base import Context, register
from kgx.methods.cot import CoTConfig


@dataclass
class SCConfig(CoTConfig):
    name: str = "sc"
    n: int = 5  # sampled reasoning chains, majority vote (Wang et al. 2023)
    temperature: float = 0.7

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.n < 1:
            raise ConfigError(f"method.n={self.n}: must be at least 1")
        check_temperature("method.temperature", self.temperature)


@register("sc", config=SCConfig, stages=("answer",))
def answer(question: Question, ctx: Context) -> Prediction:
    p = ctx.params
    replies = ctx.llm(
        "answer",
        cot.messages(question, p.shots, p.exemplars),
        schema=cot.SCHEMA,
        temperature=p.temperature,
        n=p.n,
        retries=p.max_retries,
    )
    invalid = [r for r in replies if isinstance(r, OutputError)]
    if invalid:
        ctx.trace.note("answer", f"{len(invalid)} of {p.n} samples without a valid answer: left out of the vote")
    samples = [cot.to_prediction(r) for r in replies if not isinstance(r, OutputError)]
    votes = Counter(normalize(s.answers[0]) for s in samples if s.answers)
    if not votes:
        return Prediction(answer="{}", status="fallback", reason="no sample gave an answer")
    winner, count = votes.most_common(1)[0]
    chosen = next(s for s in samples if s.answers and normalize(s.answers[0]) == winner)
    chosen.reason = f"majority {count}/{p.n}"
    return chosen
