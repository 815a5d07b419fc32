"""Reachability as a question's record keeps it: is a gold answer within the method's depth of
the question's topic entities in the run's KG, how far, and by which shortest paths.

The value only; :mod:`kgx.diagnose.reach` computes it (a meet-in-the-middle search in the KG) and
:mod:`kgx.diagnose.breakdown` reads it to say why a question was missed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

NO_GOLD_NODE = "no gold answer is a node of the KG"


@dataclass(frozen=True)
class Step:
    """One hop of a path in the KG, as walked from the topic side."""

    source: str  # entity id the step leaves (topic side first)
    relation: str  # relation id, e.g. "film.film.directed_by"
    direction: str  # "out" if the KG triple is (source, relation, target), "in" if (target, relation, source)
    target: str  # entity id or quoted literal


@dataclass
class Reach:
    """One question's reachability. ``distance`` 0 (a topic entity is a gold answer) has no steps."""

    reachable: Optional[bool]  # None: no gold answer in the KG, a cap hit before the ends met, or the KG failed
    depth: int  # the horizon searched
    distance: Optional[int] = None  # hops (as the horizon counts them) to the nearest gold answer
    paths: list[list[Step]] = field(default_factory=list)  # up to max_paths shortest, topic first, ending at a gold
    names: dict[str, str] = field(default_factory=dict)  # labels of the nodes on ``paths``
    gold_ids: list[str] = field(default_factory=list)  # the gold answers as KG nodes (literals quoted)
    queries: int = 0  # KG SELECTs this check issued (0 from the cache; the KG's result cache may have served some)
    cached: bool = False
    seconds: float = 0.0  # wall time of this check (a cache lookup's when cached)
    reason: str = ""  # why unknown / which cap was hit ("" when fine)
    hops: Optional[int] = None  # the dataset's meta.hops, to compare with ``distance`` (kgx.diagnose.hops)
    chained: bool = False  # whether the dataset gives the question's gold chain (MetaQA's qtype, a gold path)

    @property
    def absent(self) -> bool:
        """No gold answer is a node of the KG the question sees: the data's gap, not a method's."""
        return self.reachable is None and self.reason == NO_GOLD_NODE

    def to_dict(self) -> dict[str, Any]:
        """``asdict(self)`` without its deep copy (a tenth of a fast question's CPU): steps hold strings."""
        paths = [[dict(vars(step)) for step in path] for path in self.paths]
        return {**vars(self), "paths": paths, "names": dict(self.names), "gold_ids": list(self.gold_ids)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Reach":
        paths = [[Step(**step) for step in path] for path in data.get("paths", [])]
        return cls(**{**data, "paths": paths})
