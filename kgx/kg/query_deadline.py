"""Each SPARQL query within ``kg.timeout_s``, from sending it to the answer's last byte.

urllib3's timeouts apply to each socket operation: an endpoint that sends its answer one byte
every 0.25 s never trips them, however long the whole takes. Here each query arms an
:class:`Alarm`; the connection it is sent on registers itself with it (:class:`_Tracked`), and one
watchdog thread per process shuts that connection's socket down at the deadline. The blocked
read then fails at once, urllib3 discards the connection (it never returns to the pool), and
the endpoint sees the client hang up; the caller sees ``Alarm.fired`` and reports ``kg.timeout``.
No thread is started per query: the watchdog sleeps until the earliest deadline still pending.
"""

from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool


@dataclass(eq=False)
class Alarm:
    deadline: float  # time.monotonic()
    connection: Optional[HTTPConnection] = None  # the one the query was sent on
    fired: bool = False
    done: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fire(self) -> None:
        with self.lock:
            if self.done:
                return
            self.fired = True
            sock = getattr(self.connection, "sock", None)
            if sock is not None:  # None: still connecting, which urllib3's connect timeout bounds
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # closed already

    def finish(self) -> None:
        with self.lock:
            self.done = True


class _Watchdog:
    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, Alarm]] = []
        self._order = itertools.count()
        self._owner = 0  # the process whose thread runs it (a forked child starts its own)

    def arm(self, alarm: Alarm) -> None:
        with self._wake:
            if self._owner != os.getpid():
                self._due.clear()
                threading.Thread(target=self._run, name="kgx-kg-deadlines", daemon=True).start()
                self._owner = os.getpid()
            while self._due and self._due[0][2].done:  # finished queries leave as others come
                heapq.heappop(self._due)
            heapq.heappush(self._due, (alarm.deadline, next(self._order), alarm))
            if self._due[0][2] is alarm:  # sooner than what the thread sleeps until
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._wake.wait(self._due[0][0] - time.monotonic() if self._due else None)
                alarm = heapq.heappop(self._due)[2]
            alarm.fire()


_WATCHDOG = _Watchdog()
_current = threading.local()


@contextmanager
def deadline(seconds: float) -> Iterator[Alarm]:
    """Arm an alarm for the queries this thread sends inside the block."""
    alarm = Alarm(time.monotonic() + seconds)
    _current.alarm = alarm
    _WATCHDOG.arm(alarm)
    try:
        yield alarm
    finally:
        alarm.finish()
        _current.alarm = None


class _Tracked:
    """A connection that tells the thread's alarm it carries the query being sent."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        alarm = getattr(_current, "alarm", None)
        if alarm is not None:
            alarm.connection = self  # type: ignore[assignment]
        super().request(*args, **kwargs)  # type: ignore[misc]


class _HTTPConnection(_Tracked, HTTPConnection):
    pass


class _HTTPSConnection(_Tracked, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


POOL_CLASSES = {"http": _HTTPPool, "https": _HTTPSPool}  # for urllib3.PoolManager.pool_classes_by_scheme
