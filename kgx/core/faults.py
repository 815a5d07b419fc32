"""What a failed question ran into: the world (infrastructure) or the method's own code.

A run must never report an outage as a result. Every exception a question can end in is
classified here, once. Infrastructure errors (a provider or endpoint that cannot be reached, a
timeout, a refused key, an exhausted rate limit, a rejected request) carry a ``kind`` such as
``llm.auth`` or ``kg.unreachable``; any other exception is a ``method`` error, named by its type.
Both kinds leave the question in the log as ``status=error``, make the run FAILED, and are
computed again by a rerun. The :class:`Breaker` stops a run early when the same failure repeats,
so that an outage costs a few questions, not the rest of the dataset.
"""

from __future__ import annotations

import errno
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, Optional

from kgx.core.boundary import clean_text


class InfraError(RuntimeError):
    """A failure of something the run depends on, not of the method; ``kind`` says which."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Failure:
    """Why one question ended in ``status=error``; stored in its record under ``error``."""

    kind: str  # "llm.unreachable", "llm.auth", "kg.unreachable", ...; "method" for the method's own code
    infra: bool
    exception: str  # the exception's type name
    message: str

    @property
    def signature(self) -> str:
        """What makes two failures "the same" for the breaker: the kind, and for a method error
        its exception type (a bug hit on every question repeats its type, not its message)."""
        return self.kind if self.infra else f"method {self.exception}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Failure":
        return cls(**data)


def classify(exc: BaseException) -> Failure:
    """The failure ``exc`` stands for; its message passes the text boundary (a server's error body
    in it may echo a secret or hold a lone surrogate: kgx.core.boundary)."""
    message = clean_text(str(exc))[:2000]
    if isinstance(exc, InfraError):
        return Failure(exc.kind, True, type(exc).__name__, message)
    return Failure("method", False, type(exc).__name__, message)


class Breaker:
    """Trips when ``limit`` questions in a row (in the order they finish) fail the same way.

    Transient faults are retried inside each call, so they seldom fail a whole question, and a
    question that succeeds resets the count: a 20% flaky provider never trips it, a dead one
    trips it after ``limit`` questions. ``limit`` 0 never trips.
    """

    def __init__(self, limit: int):
        self.limit = limit
        self.streak = 0
        self.last: Optional[Failure] = None
        self.tripped: Optional[Failure] = None

    def observe(self, failure: Optional[Failure]) -> bool:
        if failure is None:
            self.streak, self.last = 0, None
            return False
        same = self.last is not None and self.last.signature == failure.signature
        self.streak = self.streak + 1 if same else 1
        self.last = failure
        if self.limit and self.streak >= self.limit and self.tripped is None:
            self.tripped = failure
        return self.tripped is not None


def describe(failures: list[Failure]) -> str:
    """``"3 kg.unreachable, 1 method KeyError"``: what the errors of a run were, most first."""
    counts = Counter(f.signature for f in failures)
    return ", ".join(f"{n} {sig}" for sig, n in counts.most_common())


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


class DiskFull(Exception):
    """A write failed for want of space: the run stops, keeping what is on disk, and says how to go on."""


def disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL


def disk_full_message(exc: OSError, kept: str) -> str:
    """What a full disk is told as: the path, what was kept, how to resume."""
    where = f" writing {exc.filename}" if exc.filename else ""
    return (
        f"no space left on the device{where} ({exc.strerror}); {kept}. Free space, or point run.output_dir "
        f"and run.cache_dir at another disk, and run the same command: no answered question is asked again"
    )
