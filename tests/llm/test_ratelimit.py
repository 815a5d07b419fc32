"""Rate limits per minute, on a fake clock: requests, tokens, and the share of a parallel sweep."""

from __future__ import annotations

from kgx.llm.ratelimit import RateLimiter, share


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_requests_per_minute():
    clock = Clock()
    limiter = RateLimiter(rpm=3, tpm=None, clock=clock, sleep=clock.sleep)
    waits = [limiter.acquire(10) for _ in range(7)]
    assert waits == [0, 0, 0, 60, 0, 0, 60] and clock.now == 120


def test_tokens_per_minute():
    clock = Clock()
    limiter = RateLimiter(rpm=None, tpm=1000, clock=clock, sleep=clock.sleep)
    assert [limiter.acquire(400) for _ in range(3)] == [0, 0, 60]
    assert limiter.acquire(5000) == 60  # larger than the budget: alone in an empty window


def test_parallel_jobs_share_the_limit(monkeypatch):
    monkeypatch.setenv("KGX_PARALLEL_JOBS", "4")
    assert share(1000) == 250 and share(3) == 1 and share(None) is None
    monkeypatch.delenv("KGX_PARALLEL_JOBS")
    assert share(1000) == 1000
