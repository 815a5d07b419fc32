"""Usage per stage of one question, as its LLM calls are made (``ctx.llm`` records into it)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from kgx.core.usage import Usage


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
