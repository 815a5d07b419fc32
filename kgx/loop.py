"""The question loop of a run: answer in parallel, log each as it finishes, stop when told.

Three things stop it before the last question: Ctrl-C (questions in flight finish and are
logged, queued ones are dropped), and the :class:`~kgx.failures.Breaker` when the same failure
repeats (an outage). Either way every finished question is on disk, and a rerun resumes.
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from kgx.failures import Breaker, Failure
from kgx.predlog import PredictionLog
from kgx.record import Record
from kgx.types import Question

Answer = Callable[[Question], Record]


class Progress:
    """done/total with running hits@1, tokens and cost (tqdm on stderr); sums kept as they
    grow, so an update costs the same at question 10 and question 100,000."""

    def __init__(self, total: int, done: list[Record], enabled: bool):
        from tqdm import tqdm

        self.bar = tqdm(total=total, initial=len(done), disable=not enabled, unit="q", dynamic_ncols=True)
        self.enabled = enabled
        self.n = self.hits = self.tokens = self.errors = 0
        self.cost = 0.0
        self.unpriced = False
        for record in done:
            self._add(record)
        self._show()

    def _add(self, record: Record) -> None:
        self.n += 1
        self.hits += record.scores["hits1"]
        self.tokens += record.usage.total_tokens
        self.cost += record.usage.cost_usd
        self.unpriced = self.unpriced or bool(record.usage.unpriced_calls)
        self.errors += record.failed

    def update(self, record: Record) -> None:
        self._add(record)
        self.bar.update(1)
        self._show()

    def _show(self) -> None:
        if not self.n or not self.enabled:
            return
        errors = f" errors={self.errors}" if self.errors else ""
        self.bar.set_postfix_str(f"hits@1={100 * self.hits / self.n:.1f} tok={self.tokens} "
                                 f"cost=${self.cost:.4f}{'+?' if self.unpriced else ''}{errors}")

    def close(self) -> None:
        self.bar.close()


class WallClock:
    """Wall time of every invocation that built a run, kept in ``wall_s`` beside the log and
    written with every finished question (a few microseconds), so a killed invocation's time
    counts up to its last logged question."""

    def __init__(self, path: Path, earlier: float):
        self.path = path
        self.earlier = earlier
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return self.earlier + time.perf_counter() - self.start

    def tick(self) -> float:
        elapsed = self.elapsed()
        self.path.write_text(str(elapsed))
        return elapsed


@dataclass
class LoopResult:
    new: dict[str, Record] = field(default_factory=dict)
    interrupted: bool = False
    tripped: Optional[Failure] = None  # the repeated failure that stopped the loop early
    not_started: int = 0  # questions dropped when the loop stopped early
    wall_s: float = 0.0  # the run's wall time so far, this invocation's and every earlier one's


def answer_all(todo: list[Question], answer: Answer, workers: int, log: PredictionLog, progress: Progress,
               breaker: Breaker, clock: WallClock) -> LoopResult:
    """Answer ``todo`` with ``workers`` questions in flight, handing out the next one only when
    one has been logged: a stop (the breaker, Ctrl-C) then leaves at most ``workers - 1``
    questions running, and memory does not grow with the number of questions."""
    result = LoopResult()
    queue = iter(todo)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kgx-q")
    pending: set[Future] = set()

    def hand_out(n: int) -> None:
        for question in itertools.islice(queue, n):
            pending.add(pool.submit(answer, question))

    try:
        hand_out(workers)
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                pending.discard(fut)
                record = fut.result()
                log.append(record)
                result.new[record.id] = record
                progress.update(record)
                clock.tick()
                if breaker.observe(record.failure) and result.tripped is None:
                    result.tripped = breaker.tripped
            if result.tripped is None:
                hand_out(len(finished))
    except KeyboardInterrupt:
        result.interrupted = True
        pool.shutdown(wait=False, cancel_futures=True)
    finally:
        pool.shutdown(wait=not result.interrupted)
        progress.close()
        result.wall_s = clock.tick()
    result.not_started = len(todo) - len(result.new)
    return result
