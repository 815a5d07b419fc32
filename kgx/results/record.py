"""One question's result, typed: a line of ``predictions.jsonl`` and everything a run adds up.

The record carries the usage objects themselves (LLM usage in total and per stage, KG usage),
so the run's totals are their sums (``Usage.__add__``) rather than re-sums of dictionary keys
that every reader has to know. On disk it stays the JSON line kgx has always written, so logs of
earlier versions resume.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Optional

from kgx.core.faults import Failure
from kgx.core.reachability import Reach
from kgx.core.types import Prediction, Status
from kgx.core.usage import KGUsage, Usage
from kgx.diagnose.breakdown import category

# What a log line keeps of reachability; the gold paths go to the question's trace.
REACH_KEPT = ("reachable", "depth", "distance", "queries", "cached", "reason", "seconds", "hops", "chained")


class RecordError(ValueError):
    """A log line that is JSON but not a prediction record."""


@dataclass
class Record:
    id: str
    question: str
    gold: list[list[str]]
    prediction: Prediction
    scores: dict[str, float]  # every metric of kgx.core.metrics.QUESTION_METRICS, 0..1
    status: Status
    usage: Usage
    stages: dict[str, Usage] = field(default_factory=dict)  # usage per LLM stage of the method
    kg: KGUsage = field(default_factory=KGUsage)
    latency_s: float = 0.0
    # Where the question's time went, for the estimate's wall model (kgx.estimate.wall): its thread's CPU
    # seconds but reachability's (method, scoring, trace: what one interpreter runs one at a time), and the
    # CPU seconds of its reachability check (a cold cache's cost; about 0 from the cache); the check's wall
    # seconds are the reach's own (``reach_s``).
    cpu_s: float = 0.0
    reach_cpu_s: float = 0.0
    trace: str = ""  # the trace file, relative to the run's output directory
    error: Optional[Failure] = None  # why a question with status "error" failed (kgx.core.faults)
    reach: Optional[Reach] = None  # is a gold answer within the method's depth (None: no KG); paths in the trace
    shown: Optional[bool] = None  # a gold answer was in the prompt of the call that answered
    left_at: Optional[dict[str, Any]] = None  # not_retrieved: where exploration left the gold path

    @property
    def breakdown(self) -> str:
        """Why the question was missed, or "correct" (kgx.diagnose.breakdown)."""
        return category(self.status, self.scores, self.reach, self.shown)

    @property
    def reach_s(self) -> float:
        """Wall seconds of the question's reachability check: ``Reach.seconds``, the one source
        (a log line carries it under ``reach`` and, for its readers, as ``reach_s``)."""
        return self.reach.seconds if self.reach is not None else 0.0

    @property
    def calls(self) -> int:
        return self.usage.calls

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens

    @property
    def failed(self) -> bool:
        return self.status == "error"

    @property
    def failure(self) -> Optional[Failure]:
        """The failure of an error record; records written before failures were classified
        count as method errors."""
        if not self.failed:
            return None
        return self.error or Failure("method", False, "unknown", self.prediction.reason)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "gold": self.gold,
            "prediction": self.prediction.to_dict(),
            "scores": self.scores,
            "status": self.status,
            "error": self.error.to_dict() if self.error else None,
            "calls": self.calls,
            "tokens": self.tokens,
            "latency_s": self.latency_s,
            "cpu_s": self.cpu_s,
            "reach_s": self.reach_s,
            "reach_cpu_s": self.reach_cpu_s,
            "usage": self.usage.to_dict(),
            "stages": {stage: u.to_dict() for stage, u in self.stages.items()},
            "kg": self.kg.to_dict(),
            "trace": self.trace,
            "breakdown": self.breakdown,
            "shown": self.shown,
            "reach": None if self.reach is None else {key: getattr(self.reach, key) for key in REACH_KEPT},
            "left_at": self.left_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Record":
        """A log line back as a record; a field missing from an older kgx's line takes its default,
        anything else malformed raises RecordError naming the field."""
        try:
            return cls(
                id=data["id"],
                question=data.get("question", ""),
                gold=data.get("gold", []),
                prediction=_typed(Prediction, data["prediction"]),
                scores=dict(data.get("scores", {})),
                status=data["status"],
                usage=_typed(Usage, data.get("usage", {})),
                stages={stage: _typed(Usage, u) for stage, u in data.get("stages", {}).items()},
                kg=_typed(KGUsage, data.get("kg", {})),
                latency_s=float(data.get("latency_s", 0.0)),
                cpu_s=float(data.get("cpu_s", 0.0)),
                reach_cpu_s=float(data.get("reach_cpu_s", 0.0)),
                trace=data.get("trace", ""),
                error=Failure.from_dict(data["error"]) if data.get("error") else None,
                reach=_typed(Reach, data["reach"]) if data.get("reach") else None,
                shown=data.get("shown"),
                left_at=data.get("left_at"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RecordError(f"not a prediction record ({type(exc).__name__}: {exc})") from None


def _typed(cls: type, data: dict[str, Any]) -> Any:
    """``cls(**data)`` keeping only the fields ``cls`` knows (a newer kgx may have added some)."""
    known = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in known})
