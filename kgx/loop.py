"""The question loop of a run: answer in parallel, log each as it finishes, stop when told.

Three things stop it before the last question: Ctrl-C (questions in flight finish and are
logged, queued ones are dropped), and the :class:`~kgx.failures.Breaker` when the same failure
repeats (an outage). Either way every finished question is on disk, and a rerun resumes.
"""
from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, SimpleQueue
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
    rewritten in place with every finished question, so a killed invocation's time counts up to
    its last logged question. The file stays open (opening it per question cost more than
    answering one on a fast backbone) and always holds 32 bytes: a number and padding."""

    WIDTH = 32

    def __init__(self, path: Path, earlier: float):
        self.path = path
        self.earlier = earlier
        self.start = time.perf_counter()
        self._fd: Optional[int] = None

    def elapsed(self) -> float:
        return self.earlier + time.perf_counter() - self.start

    def tick(self, final: bool = False) -> float:
        elapsed = self.elapsed()
        fresh = self._fd is None
        if fresh:  # not truncated on opening: the old value stays readable until overwritten
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.pwrite(self._fd, f"{elapsed:.6f}".ljust(self.WIDTH).encode(), 0)
        if fresh:
            os.ftruncate(self._fd, self.WIDTH)
        if final:
            os.close(self._fd)
            self._fd = None
        return elapsed


@dataclass
class LoopResult:
    new: dict[str, Record] = field(default_factory=dict)
    interrupted: bool = False
    tripped: Optional[Failure] = None  # the repeated failure that stopped the loop early
    not_started: int = 0  # questions dropped when the loop stopped early
    wall_s: float = 0.0  # the run's wall time so far, this invocation's and every earlier one's


class Workers:
    """``n`` threads answering the questions put to them, each result (or the exception that
    escaped ``answer``) put on ``finished``. All are started before the first question: a thread
    started while hundreds of others run waits ~20 ms for the interpreter lock just to report that
    it started, and a pool that starts them on demand made the loop wait seconds for that. Daemon
    threads: Ctrl-C does not wait for questions in flight (they are not logged; a rerun does them)."""

    def __init__(self, n: int, answer: Answer, finished: SimpleQueue[Finished]):
        self.answer = answer
        self.finished = finished
        self.todo: SimpleQueue[Optional[Question]] = SimpleQueue()
        self.threads = [threading.Thread(target=self._work, name=f"kgx-q{i}", daemon=True) for i in range(n)]
        for thread in self.threads:
            thread.start()

    def _work(self) -> None:
        while (question := self.todo.get()) is not None:
            try:
                self.finished.put(Finished(self.answer(question)))
            except BaseException as exc:  # answer_one records failures; this is a bug, raised in the loop
                self.finished.put(Finished(None, exc))

    def put(self, question: Question) -> None:
        self.todo.put(question)

    def stop(self, wait: bool) -> None:
        for _ in self.threads:
            self.todo.put(None)
        if wait:
            for thread in self.threads:
                thread.join()


@dataclass
class Finished:
    record: Optional[Record]
    exc: Optional[BaseException] = None

    def result(self) -> Record:
        if self.exc is not None:
            raise self.exc
        assert self.record is not None
        return self.record


def answer_all(todo: list[Question], answer: Answer, workers: int, log: PredictionLog, progress: Progress,
               breaker: Breaker, clock: WallClock) -> LoopResult:
    """Answer ``todo`` with ``workers`` questions in flight, handing out the next one only when
    one has been logged: a stop (the breaker, Ctrl-C) then leaves at most ``workers - 1``
    questions running, and memory does not grow with the number of questions. Finished
    questions arrive on a queue and are logged together (with hundreds in flight the loop's
    thread waits for the interpreter lock after every write it makes)."""
    result = LoopResult()
    queue = iter(todo)
    finished: SimpleQueue[Finished] = SimpleQueue()
    pool = Workers(min(workers, len(todo)) or 1, answer, finished)
    running = 0

    def hand_out(n: int) -> int:
        handed = 0
        for question in itertools.islice(queue, n):
            pool.put(question)
            handed += 1
        return handed

    try:
        running = hand_out(workers)
        while running:
            batch = _finished(finished)
            running -= len(batch)
            records = [done.result() for done in batch]
            log.extend(records)
            for record in records:
                result.new[record.id] = record
                progress.update(record)
                if breaker.observe(record.failure) and result.tripped is None:
                    result.tripped = breaker.tripped
            clock.tick()
            if result.tripped is None:
                running += hand_out(len(batch))
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        pool.stop(wait=not result.interrupted)
        progress.close()
        log.close()
        result.wall_s = clock.tick(final=True)
    result.not_started = len(todo) - len(result.new)
    return result


def _finished(finished: SimpleQueue[Finished]) -> list[Finished]:
    """The questions finished since the last look, at least one; waking twice a second so that
    Ctrl-C is seen promptly."""
    while True:
        try:
            batch = [finished.get(timeout=0.5)]
            break
        except Empty:
            continue
    while True:
        try:
            batch.append(finished.get_nowait())
        except Empty:
            return batch
