"""Usage figures of LLM calls, added up per stage and per question.

Billed and cached figures are kept apart: a cache hit costs nothing but still tells what the
method consumed, which is what a paper's cost table reports. A request cut at ``llm.timeout_s``
brought nothing the method consumed, but the provider may have done and billed it: it is in the
billed figures only (kgx.llm.pricing.timed_out).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Optional


@dataclass
class Usage:
    calls: int = 0  # logical calls a method made (cached ones included)
    billed_calls: int = 0  # requests that reached the provider and succeeded, or were cut at llm.timeout_s
    cached_calls: int = 0
    input_tokens: int = 0  # prompt tokens of every call, as the provider reported them
    output_tokens: int = 0
    billed_input_tokens: int = 0  # of billed calls; a timed-out one's prompt as kgx counts it
    billed_output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0  # of billed calls with a known price
    unpriced_calls: int = 0  # billed calls whose price is unknown: cost_usd is then a lower bound
    retries: int = 0  # transient-error retries
    parse_failures: int = 0  # outputs that did not parse or validate
    truncated: int = 0  # replies the provider cut at max_tokens (finish_reason "length")
    replies_cut: int = 0  # replies kgx cut at llm.max_reply_chars
    unstorable_chars: int = 0  # lone surrogates in replies, replaced by U+FFFD (kgx.core.boundary)
    secrets_redacted: int = 0  # secrets of the run a reply echoed, redacted

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cost(self) -> Optional[float]:
        """The cost, or None when any billed call had no known price."""
        return None if self.unpriced_calls else self.cost_usd

    def __add__(self, other: "Usage") -> "Usage":
        mine, theirs = vars(self), vars(other)
        return Usage(**{name: mine[name] + theirs[name] for name in _FIELDS})

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # its fields, shallow: asdict's deep copy was most of a log line's cost


_FIELDS = tuple(f.name for f in fields(Usage))  # looked up once: fields() on every sum cost more than adding


@dataclass
class Meter:
    """Usage per stage for one question; methods in threads may record concurrently. ``billed``
    is told of each call the provider billed as it returns (the run's billing log,
    kgx.results.billing), before the question's record can be written."""

    stages: dict[str, Usage] = field(default_factory=dict)
    billed: Optional[Callable[[Usage], None]] = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, stage: str, usage: Usage) -> None:
        if usage.billed_calls and self.billed is not None:
            self.billed(usage)
        with self._lock:
            self.stages[stage] = self.stages.get(stage, Usage()) + usage

    def total(self) -> Usage:
        with self._lock:
            return sum(self.stages.values(), Usage())

    def to_dict(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {stage: u.to_dict() for stage, u in self.stages.items()}
