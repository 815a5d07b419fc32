"""Several worker processes answering one run's questions (``run.processes``).

One interpreter tops out near 25-30 ToG questions a second: with hundreds of questions
in flight the run waits on its own CPU, not on the LLM. Here N children each answer with a pool of
threads, and the parent keeps every guarantee of the single-process loop by keeping every
decision: it is the only writer of ``predictions.jsonl`` (children return finished records), the
only owner of the breaker and the run's figures, and it hands out every question. A child holds
at most as many questions as it has threads, and gets the next one only once the parent has seen
the record of the last, in the order records arrive: a trip of the breaker leaves at most
``concurrency - 1`` questions running, as in one process, and no question starts after it.

Children come from a fork server (a clean interpreter that imported kgx and litellm once), not
from a fork of the run's process: that one holds threads, sqlite connections and a provider's
open HTTP connections, which a forked copy must never touch. A child builds its own KG handle,
response cache connection, LLM client and method once (the caller's ``build``), with the
parent's environment and working directory, and a share of the rate limits
(``KGX_PARALLEL_JOBS`` times the processes). The response cache and the reachability cache are
sqlite files in WAL mode, already shared by parallel runs. A child dies with the parent: its
pipe from the parent reaches end of file at once, and kgx.core.lifeline covers the fork server.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from queue import SimpleQueue
from typing import Any, Optional

from kgx.core.faults import Breaker, Failure
from kgx.core.lifeline import die_with_parent, watch_parent
from kgx.core.types import Question
from kgx.llm.ratelimit import JOBS_ENV
from kgx.run.loop import Answer, Finished

PRELOAD = ["kgx.run.fork_server"]  # the fork server's lifeline, then kgx and litellm
READY = "ready"


class WorkerLost(RuntimeError):
    """A worker process failed to start or ended while it held questions."""


@dataclass
class Crash:
    """An exception that escaped ``answer`` (or ``build``) in a child, as text: it may not pickle."""

    text: str


def start_method() -> str:
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def warm() -> None:
    """Start the fork server now (it imports kgx and litellm in the background, on another core),
    so that the children are quick to start once the run reaches its questions."""
    if start_method() == "forkserver":
        from multiprocessing import forkserver

        multiprocessing.set_forkserver_preload(PRELOAD)
        forkserver.ensure_running()


def split(threads: int, processes: int) -> list[int]:
    """``threads`` questions in flight over ``processes`` children, as evenly as they go."""
    return [threads // processes + (i < threads % processes) for i in range(processes)]


@dataclass
class _Child:
    process: Any
    to_child: Connection
    from_child: Connection
    threads: int
    running: int = 0
    closing: bool = False


class ProcessPool:
    """The children of one run: :meth:`open` starts them and waits until each has built its parts
    (before the run's clock), :meth:`start` hands out ``todo``, :meth:`stop` ends them. While
    running it has the face of kgx.run.loop.Workers: records (or a child's crash) arrive on
    ``finished``, then one ``Finished(exited=True)`` per child."""

    def __init__(self, children: list[_Child]):
        self.children = children
        self.tripped: Optional[Failure] = None
        self._lock = threading.Lock()
        self._stopped = False
        self._todo: Iterator[Question] = iter(())
        self._dispatcher: Optional[threading.Thread] = None

    @classmethod
    def open(cls, processes: int, threads: int, build: Callable[[], Answer]) -> "ProcessPool":
        """Start ``processes`` children sharing ``threads`` questions in flight; each calls ``build``
        once for its ``answer``. A child that cannot build raises WorkerLost here, with its traceback."""
        warm()  # if the run has not: the fork server must be kgx's (its preload is the lifeline)
        ctx = multiprocessing.get_context(start_method())
        env = dict(os.environ)
        env[JOBS_ENV] = str(int(env.get(JOBS_ENV, "1")) * processes)  # rate limits: a share per child
        children = []
        for i, n in enumerate(split(threads, processes)):
            down_r, down_w = ctx.Pipe(duplex=False)
            up_r, up_w = ctx.Pipe(duplex=False)
            process = ctx.Process(
                target=serve, args=(down_r, up_w, build, n, env, os.getcwd()), name=f"kgx-worker-{i}", daemon=True
            )
            process.start()
            down_r.close()
            up_w.close()
            children.append(_Child(process, down_w, up_r, n))
        pool = cls(children)
        try:
            for child in children:
                pool._ready(child)
        except BaseException:
            pool.kill()
            raise
        return pool

    def _ready(self, child: _Child) -> None:
        try:
            first = child.from_child.recv()
        except EOFError:
            child.process.join()
            raise WorkerLost(
                f"worker process {child.process.pid} ended (exit code {child.process.exitcode}) while starting"
            ) from None
        if isinstance(first, Crash):
            raise WorkerLost(f"worker process {child.process.pid} could not start:\n{first.text}")

    def __enter__(self) -> "ProcessPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def exits(self) -> int:
        return len(self.children)

    def start(self, todo: Iterator[Question], finished: SimpleQueue[Finished], breaker: Breaker) -> "ProcessPool":
        """Hand out ``todo``, feeding ``breaker`` each record in the order they arrive."""
        self._todo = todo
        self._dispatcher = threading.Thread(
            target=self._dispatch, args=(finished, breaker), name="kgx-dispatch", daemon=True
        )
        self._dispatcher.start()
        return self

    def _dispatch(self, finished: SimpleQueue[Finished], breaker: Breaker) -> None:
        live = {child.from_child: child for child in self.children}
        with self._lock:
            for child in self.children:
                self._hand(child)
        while live:
            for conn in wait(list(live)):
                child = live[conn]
                try:
                    batch = conn.recv()
                except (EOFError, OSError):
                    del live[conn]
                    self._lost(child, finished)
                    continue
                with self._lock:
                    for item in batch:
                        child.running -= 1
                        if isinstance(item, Crash):  # a bug: raised in the loop, as in one process
                            self._stopped = True
                            crash = WorkerLost(f"a question failed in a worker process:\n{item.text}")
                            finished.put(Finished(None, crash))
                            continue
                        if breaker.observe(item.failure) and self.tripped is None:
                            self.tripped, self._stopped = breaker.tripped, True
                        finished.put(Finished(item))
                    self._hand(child)

    def _hand(self, child: _Child) -> None:
        """Give ``child`` a question per idle thread, none once stopped; a child with nothing
        running and nothing left to take is told to end. Called with the lock held."""
        given = [] if self._stopped else [q for _, q in zip(range(child.threads - child.running), self._todo)]
        child.running += len(given)
        try:
            if given:
                child.to_child.send(given)
            elif not child.running and not child.closing:
                child.closing = True
                child.to_child.send(None)
        except OSError:  # it died, or was killed: its end of file tells the dispatcher
            pass

    def _lost(self, child: _Child, finished: SimpleQueue[Finished]) -> None:
        """A child's pipe closed: it ended as told, or died (a signal, native code, memory)."""
        child.process.join()
        with self._lock:
            lost = child.running and not self._stopped
        if lost:
            finished.put(
                Finished(
                    None,
                    WorkerLost(
                        f"worker process {child.process.pid} ended (exit code {child.process.exitcode}) with "
                        f"{child.running} questions in flight: they are not logged, and a rerun computes them"
                    ),
                )
            )
        finished.put(Finished(None, exited=True))

    def stop(self, wait: bool) -> None:
        """No question is handed out after this; ``wait``: until the children have returned the
        questions they hold and ended. Without waiting (Ctrl-C) the children are killed: the
        questions in flight would not be logged either way."""
        with self._lock:
            self._stopped = True
            if wait:
                for child in self.children:
                    self._hand(child)  # an idle child is told to end now
        if not wait:
            self.kill()
        elif self._dispatcher is not None and self._dispatcher is not threading.current_thread():
            self._dispatcher.join()

    def kill(self) -> None:
        for child in self.children:
            if child.process.is_alive():
                child.process.kill()
            child.to_child.close()
        for child in self.children:
            child.process.join()

    def close(self) -> None:
        """End the children, whether or not they got questions (the run may stop before its loop)."""
        if self._dispatcher is None:
            self.stop(wait=True)
            for child in self.children:
                child.process.join(timeout=5)
        self.kill()


def serve(
    down: Connection, up: Connection, build: Callable[[], Answer], threads: int, env: dict[str, str], cwd: str
) -> None:
    """A child: build the parts once, then answer what the parent hands out with ``threads``
    threads, returning records in batches. Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    watch_parent(os.getppid())  # the fork server, which ends with the run's process
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        answer = build()
    except BaseException:
        up.send(Crash(traceback.format_exc()))
        return
    up.send(READY)
    todo: SimpleQueue[Optional[Question]] = SimpleQueue()
    done: SimpleQueue[Any] = SimpleQueue()

    def work() -> None:
        while (question := todo.get()) is not None:
            try:
                done.put(answer(question))
            except BaseException:
                done.put(Crash(traceback.format_exc()))

    def receive() -> None:
        while True:
            try:
                given = down.recv()
            except (EOFError, OSError):  # the parent is gone: nothing this child does can be logged
                os.kill(os.getpid(), signal.SIGKILL)
                return
            if given is None:
                done.put(None)
                return
            for question in given:
                todo.put(question)

    for i in range(threads):
        threading.Thread(target=work, name=f"kgx-q{i}", daemon=True).start()
    threading.Thread(target=receive, name="kgx-receive", daemon=True).start()
    while True:
        batch = [done.get()]
        while not done.empty():
            batch.append(done.get())
        if any(item is None for item in batch):  # told to end: nothing is running
            return
        up.send(batch)
