"""A progress bar for one long phase of a build (a Freebase dump's filter and load, a subgraph
store's load), on stderr: done / total, rate and ETA.

On a terminal it redraws one line; otherwise (a log file, ``nohup``, CI) it prints a plain
line every ``interval_s`` seconds and at the end, so a log shows progress without ``\\r`` noise.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO

Format = Callable[[float], str]


def gigabytes(n: float) -> str:
    return f"{n / 1e9:.2f} GB"


def count(n: float) -> str:
    return f"{n:,.0f}"


def clock(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class PhaseBar:
    """``bar = PhaseBar("filter", total, gigabytes, "MB/s", 1e6); bar.update(done); bar.close()``."""

    def __init__(
        self,
        label: str,
        total: float,
        fmt: Format = count,
        rate_unit: str = "/s",
        rate_scale: float = 1.0,
        start: float = 0.0,
        stream: Optional[TextIO] = None,
        interval_s: float = 10.0,
        extra: Callable[[], str] = lambda: "",
        enabled: bool = True,
    ):
        self.label, self.total, self.fmt = label, total, fmt
        self.rate_unit, self.rate_scale = rate_unit, rate_scale
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval_s = 0.2 if self.tty else interval_s
        self.extra = extra
        self.enabled = enabled  # off: nothing is printed (run.progress=false)
        self.start_done = self.done = start
        self.started = time.monotonic()
        self.shown = float("-inf")  # the first update is shown at once

    def per_s(self, amount: float) -> float:
        """``amount`` per second of this phase so far (a second figure beside the bar's own rate)."""
        elapsed = time.monotonic() - self.started
        return amount / elapsed if elapsed > 0 else 0.0

    def line(self, now: float) -> str:
        elapsed = now - self.started
        rate = (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        share = 100 * self.done / self.total if self.total else 100.0
        extra = self.extra()
        return (
            f"{self.label}: {share:5.1f}% {self.fmt(self.done)}/{self.fmt(self.total)} "
            f"{rate / self.rate_scale:,.1f} {self.rate_unit} elapsed {clock(elapsed)} ETA {clock(left)}"
            + (f" {extra}" if extra else "")
        )

    def update(self, done: float) -> None:
        self.done = done
        now = time.monotonic()
        if now - self.shown >= self.interval_s:
            self.shown = now
            self._show(now)

    def _show(self, now: float, end: str = "") -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r\033[K" + self.line(now) + end)
        else:
            self.stream.write(self.line(now) + "\n")
        self.stream.flush()

    def close(self) -> None:
        self._show(time.monotonic(), "\n")
