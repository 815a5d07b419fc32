"""``ctx.kg`` for one question: every KG call is timed, counted and traced, like LLM calls.

It also counts the entities the question's method showed the model and how many of them had no
name: a method puts an entity into a prompt by its label (``names``), and an entity
without ``type.object.name`` is shown by its attributes (a CVT) or, with none, as a bare id such as
``m.06w2sn5``. Many unnamed entities mean the KG lacks names (a frequent complaint about ToG's
Freebase setup), not that the method reasoned badly.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

from kgx.core.trace import KGEvent, Trace
from kgx.core.usage import KGUsage
from kgx.kg.freebase import KG, Direction, is_literal


class MeteredKG:
    """``max_candidates`` (``kg.max_candidates``) caps every relations/neighbors result, on top of
    a method's own ``limit``; either cut is recorded in the KG event and counted in ``capped``."""

    def __init__(self, kg: KG, trace: Trace, max_candidates: Optional[int] = None):
        self.kg = kg
        self.trace = trace
        self.max_candidates = max_candidates
        self.usage = KGUsage()
        self._shown: set[str] = set()  # the entities counted in ``usage.entities``

    def _limit(self, limit: Optional[int]) -> Optional[int]:
        caps = [c for c in (limit, self.max_candidates) if c is not None]
        return min(caps) if caps else None

    def _call(
        self, operation: str, arguments: dict[str, Any], fn: Callable[[], Any], limit: Optional[int] = None
    ) -> Any:
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
        if self.trace.watch is not None:
            self.trace.watch(operation, result)
        return result

    def _record(
        self, operation: str, arguments: dict[str, Any], rows: int, start: float, error: str, capped_from: int = 0
    ) -> None:
        latency = time.perf_counter() - start
        self.usage.queries += 1
        self.usage.latency_s += latency
        self.usage.errors += bool(error)
        self.usage.capped += bool(capped_from)
        self.trace.add(KGEvent(operation, arguments, rows, latency, error, capped_from))

    def relations(self, entity: str, direction: Direction, limit: Optional[int] = None) -> list[str]:
        """``limit`` is a method's cap (a prompt budget); a cut is recorded in the KG event."""
        return self._call(
            "relations",
            {"entity": entity, "direction": direction},
            lambda: self.kg.relations(entity, direction),
            self._limit(limit),
        )

    def neighbors(self, entity: str, relation: str, direction: Direction, limit: Optional[int] = None) -> list[str]:
        """``limit`` caps hub entities (thousands of films of one genre) so prompts stay within the
        model's context; the number before the cut is recorded in the KG event."""
        return self._call(
            "neighbors",
            {"entity": entity, "relation": relation, "direction": direction},
            lambda: self.kg.neighbors(entity, relation, direction),
            self._limit(limit),
        )

    def names(self, ids: list[str]) -> dict[str, str]:
        """Labels to show; the entities among ``ids`` are counted as shown, named or not."""
        return self._call("names", {"ids": list(ids)}, lambda: self._labels(ids))

    def _labels(self, ids: list[str]) -> dict[str, str]:
        """The KG's labels, counting the entities shown. A KG that cannot say which entities have
        no name (only ``names``) is taken to label an unnamed entity by its id."""
        if hasattr(self.kg, "labels"):
            labels, unnamed = self.kg.labels(ids)
        else:
            labels = self.kg.names(ids)
            unnamed = {x for x, label in labels.items() if label == x}
        for x in ids:
            if is_literal(x) or x in self._shown:
                continue
            self._shown.add(x)
            self.usage.entities += 1
            self.usage.unnamed += x in unnamed
            self.usage.bare += x in unnamed and labels.get(x, x) == x
        return labels

    def types(self, ids: list[str]) -> dict[str, str]:
        """Type labels of entities that have one (see ``SparqlKG.types``)."""
        return self._call("types", {"ids": list(ids)}, lambda: self.kg.types(ids))

    def search(self, text: str, limit: int = 10) -> list[str]:
        return self._call("search", {"text": text, "limit": limit}, lambda: self.kg.search(text, limit))
