"""Per-process request and token budgets per minute (``llm.rpm``, ``llm.tpm``).

A provider's limit holds for the whole account, so a sweep of N parallel jobs gives each job
1/N of it (the sweep callback publishes N in ``KGX_PARALLEL_JOBS``): the sweep as a whole never
exceeds the limit, whichever jobs happen to run at once.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from typing import Callable, Optional

JOBS_ENV = "KGX_PARALLEL_JOBS"
WINDOW_S = 60.0


def share(limit: Optional[int]) -> Optional[int]:
    """This process's part of a per-minute limit."""
    if limit is None:
        return None
    return max(1, limit // max(1, int(os.environ.get(JOBS_ENV, "1"))))


class RateLimiter:
    def __init__(
        self,
        rpm: Optional[int],
        tpm: Optional[int],
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.rpm, self.tpm = rpm, tpm
        self.clock, self.sleep = clock, sleep
        self.events: deque[tuple[float, int]] = deque()
        self._lock = threading.Lock()

    def acquire(self, tokens: int) -> float:
        """Wait until a request of ``tokens`` fits in the last minute's budget; the seconds waited.
        A request larger than the whole token budget goes alone into an empty window."""
        waited = 0.0
        while True:
            with self._lock:
                now = self.clock()
                while self.events and self.events[0][0] <= now - WINDOW_S:
                    self.events.popleft()
                used = sum(t for _, t in self.events)
                fits_requests = self.rpm is None or len(self.events) < self.rpm
                fits_tokens = self.tpm is None or not self.events or used + tokens <= self.tpm
                if fits_requests and fits_tokens:
                    self.events.append((now, tokens))
                    return waited
                pause = self.events[0][0] + WINDOW_S - now
            self.sleep(pause)
            waited += pause
