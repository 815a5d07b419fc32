"""Per-question trace: every LLM and KG call in order, as a person can read it afterwards.

It is what the subgraph and facts-graph pictures are drawn from and what a reader checks when a
metric looks wrong, so it keeps prompts and responses verbatim, including failed attempts.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any, Callable, Optional


@dataclass
class LLMEvent:
    stage: str
    model: str
    messages: list[dict[str, str]]
    response: str
    temperature: float
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: Optional[float] = None
    cached: bool = False
    retries: int = 0  # transient-error retries spent on this call
    attempt: int = 0  # 0 = first try; >0 = retry after invalid output
    error: str = ""  # parse/validation failure or final transport error
    max_tokens: int = 0  # the request's generation limit (0: not recorded, traces before it was)
    truncated: bool = False  # the provider cut the reply at max_tokens
    kind: str = "llm"


@dataclass
class KGEvent:
    operation: str  # relations | neighbors | names | types | search
    arguments: dict[str, Any]
    rows: int
    latency_s: float
    error: str = ""
    capped_from: int = 0  # rows before a method's cap (0 = not capped), so a cut is never silent
    kind: str = "kg"


@dataclass
class NoteEvent:
    """A decision a method made that no call shows: a fallback, a discarded choice, a cap."""

    stage: str
    message: str
    data: dict[str, Any] = field(default_factory=dict)
    kind: str = "note"


@dataclass
class Trace:
    events: list[LLMEvent | KGEvent | NoteEvent] = field(default_factory=list)
    error: str = ""  # traceback when the method raised
    explanation: Optional[dict[str, Any]] = None  # a method's picture of its evidence (kgx.core.graph.Graph)
    # Told what each KG call returned (operation, result): how an oracle backbone knows what the
    # method retrieved (kgx.llm.oracle_evidence); None in every other run, which then pays nothing.
    watch: Optional[Callable[[str, Any], None]] = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, event: LLMEvent | KGEvent | NoteEvent) -> None:
        with self._lock:
            self.events.append(event)

    def note(self, stage: str, message: str, **data: Any) -> None:
        self.add(NoteEvent(stage, message, data))

    def notes(self, stage: Optional[str] = None) -> list[NoteEvent]:
        with self._lock:
            return [e for e in self.events if isinstance(e, NoteEvent) and stage in (None, e.stage)]

    def to_list(self) -> list[dict[str, Any]]:
        with self._lock:
            return [asdict(e) for e in self.events]

    def line(self, question_id: str, topic_entities: dict[str, str], end_ns: int) -> bytes:
        """The trace as one JSON line of a trace shard (kgx.core.trace_store), its question's id
        first: written by json's C encoder from each event's own fields, shallow (an indented dump
        went through json's Python encoder, and asdict's deep copy took a tenth of a question)."""
        try:
            return self._dump(question_id, topic_entities, end_ns, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in model or question text: keep it escaped
            return self._dump(question_id, topic_entities, end_ns, ensure_ascii=True).encode("ascii")

    def _dump(self, question_id: str, topic_entities: dict[str, str], end_ns: int, ensure_ascii: bool) -> str:
        def dump(value: Any) -> str:
            return json.dumps(value, ensure_ascii=ensure_ascii, default=_plain)

        with self._lock:
            events = ", ".join(dump(vars(event)) for event in self.events)
        return (
            f'{{"id": {dump(question_id)}, "end_ns": {end_ns}, "topic_entities": {dump(topic_entities)}, '
            f'"events": [{events}], "error": {dump(self.error)}, "explanation": {dump(self.explanation)}}}\n'
        )


def _plain(value: Any) -> Any:
    """What json cannot write by itself: a dataclass a method put into a note's data."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
