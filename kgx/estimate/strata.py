"""The job's questions by kind, the order a pilot draws them in and its default size (``kgx.estimate.model``).

When the questions say their kind (MetaQA's ``qtype``, CWQ's ``compositionality_type``, GrailQA's
``level``, a dataset's ``hops``), calls and tokens vary far less within a kind than between kinds,
so a pilot spread over the kinds predicts the job better than a plain random one; and a kind the
pilot never sees can only be guessed from the others. Hence the default pilot: one question of
every kind, and a second of every kind that has one while that keeps the pilot within half the job
(so that each kind's spread is measured, not only stood in for), at least ``MIN_PILOT`` questions,
at most the whole job. Half the job is where an estimate stops being cheaper than the run: the
pilot's calls are cached and the run gets them free, but a pilot of most of the job has spent
most of what it was asked to predict. ``MIN_PILOT`` is what the interval's own rule asks
(``kgx.estimate.interval``, Cochran's n ≥ 25·G1²) for a figure of skewness 1, about that of KG
methods' tokens per question (0.8-1.0 for LMP, ToG and KnowPath on MetaQA 2-hop's first 30).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from kgx.core.config import ConfigError
from kgx.core.types import Question
from kgx.datasets.kinds import kind_key

MIN_PILOT = 25  # the default pilot's least size: Cochran's rule at skewness 1 (module docstring)
DEFAULT_PILOT = (
    f"one of every kind, two of each where that is at most half the job, at least {MIN_PILOT}, at most the job"
)


@dataclass(frozen=True)
class Strata:
    """The job's questions by kind: ``kind`` maps every question id to its stratum, ``key`` the
    meta key that said it ("" for one stratum: plain random sampling)."""

    key: str
    kind: dict[str, str]

    @classmethod
    def of(cls, questions: list[Question], key: str = "auto") -> Strata:
        """Strata by meta ``key``; "auto": the first of KINDS that every question carries with
        more than one value among them, else one stratum; "none": one stratum."""
        if key == "auto":
            key = kind_key([q.meta for q in questions]) or "none"
        if key == "none":
            return cls("", {q.id: "" for q in questions})
        lacking = [q.id for q in questions if key not in q.meta]
        if lacking:
            raise ConfigError(f"--strata {key}: {len(lacking)} questions have no meta '{key}' (e.g. {lacking[0]})")
        return cls(key, {q.id: str(q.meta[key]) for q in questions})

    @property
    def sizes(self) -> dict[str, int]:
        return dict(Counter(self.kind.values()))

    def default_pilot(self) -> int:
        """The pilot's size when ``--pilot`` is not given (module docstring): the first
        ``default_pilot()`` ids of ``order`` hold one question of every kind, and two of every
        kind that has two when that is at most half the job."""
        sizes, size = self.sizes.values(), len(self.kind)
        twice = sum(min(2, n) for n in sizes)
        return min(size, max(MIN_PILOT, twice if twice <= size / 2 else len(sizes)))

    def order(self, seed: int) -> list[str]:
        """Every question id in the order the pilot draws them, so that a pilot of any size is
        its first ids and a growing pilot takes the next ones: each stratum in its own seeded
        random order; one question of every stratum first, then a second of every stratum that
        has one (the largest first, both times), so that a pilot as large as the number of
        kinds has a mean of each and one twice as large a spread of each; then always one of
        the stratum furthest below its proportional share of the pilot."""
        rng = random.Random(seed)
        members: dict[str, list[str]] = {}
        for qid, kind in self.kind.items():
            members.setdefault(kind, []).append(qid)
        queues = {kind: rng.sample(ids, len(ids)) for kind, ids in sorted(members.items())}
        taken, size, order = dict.fromkeys(queues, 0), len(self.kind), []
        for n in range(1, size + 1):
            kind = max(
                (k for k in queues if taken[k] < len(queues[k])),
                key=lambda k: (-min(taken[k], 2), len(queues[k]) * n / size - taken[k], len(queues[k])),
            )
            order.append(queues[kind][taken[kind]])
            taken[kind] += 1
        return order
