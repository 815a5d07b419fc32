"""Core value types shared by datasets, methods, metrics and the runner.

They are plain dataclasses so that a prediction line in ``predictions.jsonl`` is a faithful
copy of what a method produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["ok", "fallback", "error"]


@dataclass(frozen=True)
class Question:
    """One benchmark question.

    ``answers`` holds one alias list per gold answer, so that a metric can tell "one of the
    answers" (hits@1) from "all of the answers" (EM, complete match).
    """

    id: str
    text: str
    topic_entities: dict[str, str] = field(default_factory=dict)
    answers: list[list[str]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Prediction:
    """What a method answered, with the evidence it gathered from the KG.

    ``answer`` is the method's final text as the paper formats it (answers in ``{...}``);
    ``answers`` is the parsed list, best first; ``evidence`` holds the triples or facts
    the answer rests on, which ``answer_recall`` reads. ``stats`` are a method's own figures
    (rounds used, how exploration ended); a run logs their means as ``stat.<name>``.
    """

    answer: str
    answers: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    status: Status = "ok"
    reason: str = ""
    stats: dict[str, float] = field(default_factory=dict)  # method figures per question, e.g. rounds used

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # its fields, shallow: asdict's deep copy was most of a log line's cost


@dataclass(frozen=True)
class Horizon:
    """How far a method sees from its topic entities: what reachability (kgx.diagnose.reach) searches.

    ``depth`` is the method's own bound in KG hops. ``cvt_free``: a hop out of an unnamed (CVT)
    node costs nothing, for a method that reads a CVT's attributes in the step that reached it
    (StructGPT); methods that walk through a CVT like any node (ToG, LMP's two-hop layers) count it.
    """

    depth: int
    cvt_free: bool = False
