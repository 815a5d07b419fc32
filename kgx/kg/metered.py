"""``ctx.kg`` for one question: every KG call is timed, counted and traced, like LLM calls."""
from __future__ import annotations

import time
from dataclasses import dataclass, fields
from typing import Any, Callable, Optional

from kgx.core.trace import KGEvent, Trace
from kgx.kg.freebase import KG, Direction


@dataclass
class KGUsage:
    queries: int = 0
    latency_s: float = 0.0
    errors: int = 0
    capped: int = 0  # calls whose result a method cut to its limit

    def __add__(self, other: "KGUsage") -> "KGUsage":
        return KGUsage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # its fields, shallow: asdict's deep copy was most of a log line's cost


class MeteredKG:
    """``max_candidates`` (``kg.max_candidates``) caps every relations/neighbors result, on top of
    a method's own ``limit``; either cut is recorded in the KG event and counted in ``capped``."""

    def __init__(self, kg: KG, trace: Trace, max_candidates: Optional[int] = None):
        self.kg = kg
        self.trace = trace
        self.max_candidates = max_candidates
        self.usage = KGUsage()

    def _limit(self, limit: Optional[int]) -> Optional[int]:
        caps = [c for c in (limit, self.max_candidates) if c is not None]
        return min(caps) if caps else None

    def _call(self, operation: str, arguments: dict[str, Any], fn: Callable[[], Any],
              limit: Optional[int] = None) -> Any:
        start = time.perf_counter()
        try:
            result = fn()
        except Exception as exc:
            self._record(operation, arguments, 0, start, f"{type(exc).__name__}: {exc}")
            raise
        capped_from = 0
        if limit is not None and len(result) > limit:
            capped_from, result = len(result), result[:limit]
        self._record(operation, arguments, len(result), start, "", capped_from)
        return result

    def _record(self, operation: str, arguments: dict[str, Any], rows: int, start: float, error: str,
                capped_from: int = 0) -> None:
        latency = time.perf_counter() - start
        self.usage.queries += 1
        self.usage.latency_s += latency
        self.usage.errors += bool(error)
        self.usage.capped += bool(capped_from)
        self.trace.add(KGEvent(operation, arguments, rows, latency, error, capped_from))

    def relations(self, entity: str, direction: Direction, limit: Optional[int] = None) -> list[str]:
        """``limit`` is a method's cap (a prompt budget); a cut is recorded in the KG event."""
        return self._call("relations", {"entity": entity, "direction": direction},
                          lambda: self.kg.relations(entity, direction), self._limit(limit))

    def neighbors(self, entity: str, relation: str, direction: Direction,
                  limit: Optional[int] = None) -> list[str]:
        """``limit`` caps hub entities (thousands of films of one genre) so prompts stay within the
        model's context; the number before the cut is recorded in the KG event."""
        return self._call("neighbors", {"entity": entity, "relation": relation, "direction": direction},
                          lambda: self.kg.neighbors(entity, relation, direction), self._limit(limit))

    def names(self, ids: list[str]) -> dict[str, str]:
        return self._call("names", {"ids": list(ids)}, lambda: self.kg.names(ids))

    def types(self, ids: list[str]) -> dict[str, str]:
        """Type labels of entities that have one (see ``SparqlKG.types``)."""
        return self._call("types", {"ids": list(ids)}, lambda: self.kg.types(ids))

    def search(self, text: str, limit: int = 10) -> list[str]:
        return self._call("search", {"text": text, "limit": limit}, lambda: self.kg.search(text, limit))
