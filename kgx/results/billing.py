"""``billing.jsonl``: one line per provider call a run paid for, written as the call returns.

A question's record (predictions.jsonl) carries what its calls cost, but is written only when the
question ends: the calls of questions in flight when the process is killed were paid for and would
be counted nowhere. The billing log is appended and flushed to the OS per call (a kill -9 loses
nothing flushed), and a rerun counts, per question, what the log holds beyond what that question's
records count (:func:`unsettled`): the calls of attempts that never got a record.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Callable, Optional

from kgx.core.usage import Usage
from kgx.results.record import Record

BILLED = ("billed_calls", "billed_input_tokens", "billed_output_tokens", "cost_usd", "unpriced_calls")


class BillingLog:
    def __init__(self, path: Path):
        self.path = path
        self._out: Optional[IO[str]] = None
        self._lock = threading.Lock()

    def writer(self, question_id: str) -> Callable[[Usage], None]:
        """What a question's meter calls with each billed call (``Meter.billed``)."""
        return lambda usage: self.append(question_id, usage)

    def append(self, question_id: str, usage: Usage) -> None:
        line = json.dumps({"id": question_id, **{name: getattr(usage, name) for name in BILLED}}) + "\n"
        with self._lock:
            if self._out is None:
                self._out = self.path.open("a", encoding="utf-8")
            self._out.write(line)
            self._out.flush()

    def read(self) -> dict[str, Usage]:
        """The billed usage per question id; a line cut by a kill mid-write is skipped."""
        totals: dict[str, Usage] = {}
        if not self.path.exists():
            return totals
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
                usage = Usage(**{name: row[name] for name in BILLED})
            except (ValueError, KeyError, TypeError):
                continue
            totals[row["id"]] = totals.get(row["id"], Usage()) + usage
        return totals

    def close(self) -> None:
        with self._lock:
            if self._out is not None:
                self._out.close()
                self._out = None

    def set_aside(self) -> None:
        """Move an earlier log out of the way (``run.force``), as the predictions log is."""
        self.close()
        if self.path.exists():
            self.path.rename(self.path.with_name(f"billing.{time.strftime('%Y%m%d-%H%M%S')}.jsonl"))


def unsettled(billed: dict[str, Usage], records: Iterable[Record]) -> Usage:
    """What was paid for by attempts that left no record (in flight at a kill): per question, the
    billing log's total less what all its records count, never below zero (records written before
    the billing log existed count calls it does not hold)."""
    counted: dict[str, Usage] = {}
    for record in records:
        counted[record.id] = counted.get(record.id, Usage()) + record.usage
    left = Usage()
    for question_id, paid in billed.items():
        seen = counted.get(question_id, Usage())
        left += Usage(**{name: max(getattr(paid, name) - getattr(seen, name), 0) for name in BILLED})
    return left
