"""Progress of a long KG build on stderr: triples per second and the time left.

On a terminal it is a tqdm bar over the build's units (questions of a subgraph file); anywhere
else (a log file, CI, a sweep's job output) a plain line every ``every`` seconds, since carriage
returns make a log unreadable. The ETA comes from the units done, the rate from the triples.
"""
from __future__ import annotations

import sys
import time
from typing import Optional, TextIO


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


class BuildProgress:
    """``update(units, triples)`` as work finishes; ``close()`` prints the last line."""

    def __init__(self, label: str, total: int, unit: str, enabled: bool = True, stream: Optional[TextIO] = None,
                 every: float = 10.0):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.every = every
        self.units = self.triples = 0
        self.start = self._last = time.perf_counter()
        self._bar = None
        if enabled and self.stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit=f" {unit}", desc=label, file=self.stream, dynamic_ncols=True)

    def rate(self) -> float:
        elapsed = time.perf_counter() - self.start
        return self.triples / elapsed if elapsed > 0 else 0.0

    def update(self, units: int, triples: int) -> None:
        self.units += units
        self.triples += triples
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(units)
            self._bar.set_postfix_str(f"{self.triples:,} triples, {self.rate():,.0f} triples/s", refresh=False)
            return
        now = time.perf_counter()
        if now - self._last >= self.every:
            self._last = now
            print(self.line(), file=self.stream, flush=True)

    def line(self) -> str:
        elapsed = time.perf_counter() - self.start
        left = elapsed * (self.total - self.units) / self.units if self.units else float("nan")
        eta = _duration(left) if self.units else "unknown"
        return (f"kgx: {self.label}: {self.units:,}/{self.total:,} {self.unit}, {self.triples:,} triples, "
                f"{self.rate():,.0f} triples/s, ETA {eta}")

    def close(self, note: str = "") -> None:
        if self._bar is not None:
            self._bar.close()
        if self.enabled:
            elapsed = time.perf_counter() - self.start
            print(f"kgx: {self.label}: {self.triples:,} triples from {self.units:,} {self.unit} in "
                  f"{_duration(elapsed)} ({self.rate():,.0f} triples/s){note}", file=self.stream, flush=True)
