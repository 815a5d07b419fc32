"""The question loop of a run: answer in parallel, log each as it finishes, stop when told.

Three things stop it before the last question: Ctrl-C (no question starts after it; those in
flight are not logged), the :class:`~kgx.core.faults.Breaker` when the same failure repeats (an
outage), and a full disk (the questions not written are not the run's). Either way every finished
question that was written is on disk, and a rerun resumes.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Optional, Protocol

from kgx.core.faults import Breaker, Failure, disk_full
from kgx.core.types import Question
from kgx.results.predlog import PredictionLog
from kgx.results.record import Record

Answer = Callable[[Question], Record]


class Pool(Protocol):
    """What answers the questions: threads here (Workers), or worker processes (kgx.run.processes)."""

    tripped: Optional[Failure]

    @property
    def exits(self) -> int:
        """How many ``Finished(exited=True)`` it puts before it is done."""
        ...

    def stop(self, wait: bool) -> None: ...


Start = Callable[[Iterator[Question], "SimpleQueue[Finished]", Breaker], Pool]


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
        self.bar.set_postfix_str(
            f"hits@1={100 * self.hits / self.n:.1f} tok={self.tokens} "
            f"cost=${self.cost:.4f}{'+?' if self.unpriced else ''}{errors}"
        )

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
    disk_full: Optional[OSError] = None  # a write failed for want of space: the loop stopped there


class Workers:
    """``n`` threads taking questions from ``todo`` themselves, each record (or the exception that
    escaped ``answer``) put on ``finished``, and a ``Finished(exited=True)`` when a thread stops.

    A thread takes its next question as soon as it is done with one: handed out by the loop's
    thread, which waits its turn for the interpreter lock among hundreds of others, questions
    in flight fell to ~225 of 256 and each waited ~24 ms to start. The breaker sees each record
    in the thread that made it, before that thread takes another question, so a stop leaves at
    most ``n - 1`` questions running, and none is started after it. The threads start together
    once all exist: a thread started while hundreds of others run waits ~20 ms for the
    interpreter lock just to report that it started. Daemon threads: Ctrl-C does not wait for
    questions in flight (they are not logged; a rerun does them)."""

    def __init__(
        self, n: int, answer: Answer, todo: Iterator[Question], finished: SimpleQueue[Finished], breaker: Breaker
    ):
        self.answer = answer
        self.finished = finished
        self.breaker = breaker
        self.tripped: Optional[Failure] = None
        self._todo = todo
        self._lock = threading.Lock()
        self._stopped = False
        self._go = threading.Event()
        self.threads = [threading.Thread(target=self._work, name=f"kgx-q{i}", daemon=True) for i in range(n)]
        for thread in self.threads:
            thread.start()
        self._go.set()

    @property
    def exits(self) -> int:
        return len(self.threads)

    def _next(self) -> Optional[Question]:
        with self._lock:
            return None if self._stopped else next(self._todo, None)

    def _work(self) -> None:
        self._go.wait()
        try:
            while (question := self._next()) is not None:
                try:
                    record = self.answer(question)
                except BaseException as exc:  # answer_one records failures; this is a bug, raised in the loop
                    self.stop(wait=False)
                    self.finished.put(Finished(None, exc))
                    return
                with self._lock:
                    if self.breaker.observe(record.failure) and self.tripped is None:
                        self.tripped, self._stopped = self.breaker.tripped, True
                self.finished.put(Finished(record))
        finally:
            self.finished.put(Finished(None, exited=True))

    def stop(self, wait: bool) -> None:
        """No question starts after this; ``wait``: until those running are done."""
        with self._lock:
            self._stopped = True
        if wait:
            for thread in self.threads:
                if thread is not threading.current_thread():
                    thread.join()


@dataclass
class Finished:
    record: Optional[Record]
    exc: Optional[BaseException] = None
    exited: bool = False  # the thread that put it takes no more questions

    def result(self) -> Record:
        if self.exc is not None:
            raise self.exc
        assert self.record is not None
        return self.record


def in_threads(answer: Answer, workers: int, questions: int) -> Start:
    """The single-process pool: ``workers`` threads (fewer for fewer questions) in this process."""
    return lambda todo, finished, breaker: Workers(min(workers, questions) or 1, answer, todo, finished, breaker)


def answer_all(
    todo: list[Question],
    start: Start,
    log: PredictionLog,
    progress: Progress,
    breaker: Breaker,
    clock: WallClock,
) -> LoopResult:
    """Answer ``todo`` with the pool ``start`` makes (threads: :func:`in_threads`; processes:
    kgx.run.processes), logging them as they finish: a stop (the breaker, Ctrl-C) leaves at most
    ``workers - 1`` questions running, and memory does not grow with the number of questions.
    Finished questions arrive on a queue and are logged together (with hundreds in flight the
    loop's thread waits for the interpreter lock after every write it makes)."""
    result = LoopResult()
    finished: SimpleQueue[Finished] = SimpleQueue()
    pool = start(iter(todo), finished, breaker)
    live = pool.exits
    try:
        while live:
            batch = _finished(finished)
            live -= sum(done.exited for done in batch)
            try:
                records = [done.result() for done in batch if not done.exited]
                log.extend(records)
            except OSError as exc:  # a full disk: what is logged so far is the run's; the rest reruns
                if not disk_full(exc):
                    raise
                result.disk_full = exc
                break
            for record in records:
                result.new[record.id] = record
                progress.update(record)
            clock.tick()
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        pool.stop(wait=not result.interrupted)
        progress.close()
        log.close()
        result.wall_s = clock.tick(final=True)
    result.tripped = pool.tripped
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
