"""What a question consumed: usage figures of its LLM calls (``Usage``) and KG calls (``KGUsage``).

Value types only, added up per stage, per question and per run (``+``); the LLM client meters
them (:class:`kgx.llm.meter.Meter`), the metered KG counts them (:class:`kgx.kg.metered.MeteredKG`)
and a question's record carries them (:class:`kgx.results.record.Record`).

Billed and cached figures are kept apart: a cache hit costs nothing but still tells what the
method consumed, which is what a paper's cost table reports. A request cut at ``llm.timeout_s``
brought nothing the method consumed, but the provider may have done and billed it: it is in the
billed figures only (kgx.llm.pricing.timed_out).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Optional


@dataclass
class Usage:
    """What LLM calls consumed and cost: one call's, a stage's, a question's or a run's."""

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
class KGUsage:
    """What one question's KG calls cost and showed the model (or a run's, added up)."""

    queries: int = 0
    latency_s: float = 0.0
    errors: int = 0
    capped: int = 0  # calls whose result a method cut to its limit
    entities: int = 0  # distinct entities the method labelled (``names``) to show the model
    unnamed: int = 0  # of them, those without a name: shown by their attributes or their id
    bare: int = 0  # of the unnamed, those shown as a bare id (no attribute to describe them either)
    crucial: int = 0  # kg.drop: entity pairs on the question's gold path (kgx.diagnose.crucial)
    cut: int = 0  # kg.drop: of them, the pairs removed from the KG the method read
    dropped: int = 0  # kg.drop: the triples those pairs held (every relation, both ways)

    @property
    def unnamed_share(self) -> float:
        """The share (0..1) of the entities shown that had no name; NaN when none was shown."""
        return self.unnamed / self.entities if self.entities else float("nan")

    def __add__(self, other: "KGUsage") -> "KGUsage":
        return KGUsage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # its fields, shallow: asdict's deep copy was most of a log line's cost
