"""Per-question trace: every LLM and KG call in order, as a person can read it afterwards.

It is what the subgraph and facts-graph pictures are drawn from and what a reader checks when a
metric looks wrong, so it keeps prompts and responses verbatim, including failed attempts.
"""
from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional


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
    kind: str = "llm"


@dataclass
class KGEvent:
    operation: str  # relations | neighbors | names | search
    arguments: dict[str, Any]
    rows: int
    latency_s: float
    error: str = ""
    kind: str = "kg"


@dataclass
class Trace:
    events: list[LLMEvent | KGEvent] = field(default_factory=list)
    error: str = ""  # traceback when the method raised
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, event: LLMEvent | KGEvent) -> None:
        with self._lock:
            self.events.append(event)

    def to_list(self) -> list[dict[str, Any]]:
        with self._lock:
            return [asdict(e) for e in self.events]

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"events": self.to_list(), "error": self.error}
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False))
