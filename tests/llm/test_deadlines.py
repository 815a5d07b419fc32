"""``llm.timeout_s`` bounds the whole call (issue 33): a server that drips its reply one byte every
0.25 s resets every per-read timeout, yet the call ends at the deadline as an ``llm.timeout``
error, is retried per ``llm.max_retries``, counted by the circuit breaker, and its connection is
closed rather than left dripping."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from kgx.core.faults import Breaker, classify
from kgx.core.trace import Trace
from kgx.llm.client import LLMClient
from kgx.llm.errors import LLMError
from kgx.llm.question import QuestionLLM
from kgx.llm.usage import Meter
from kgx.run.spec import llm_config
from tests.llm.fake_server import Drip, FakeServer, completion

ASK = [{"role": "user", "content": "Question: capital of France?"}]
REPLY = completion('{"answers": ["Paris"]}')


def asker(url: str, retries: int, timeout_s: float = 1.0) -> QuestionLLM:
    cfg = replace(
        llm_config("llama3_8b"), api_base=url, max_retries=retries, backoff_s=0.0, cache=False, timeout_s=timeout_s
    )
    return QuestionLLM(LLMClient(cfg, {}, None, sleep=lambda s: None), Meter(), Trace())


def hung_up(server: FakeServer, n: int, within_s: float = 3.0) -> bool:
    end = time.monotonic() + within_s
    while server.hung_up < n and time.monotonic() < end:
        time.sleep(0.05)
    return server.hung_up == n


def calling_threads() -> set[threading.Thread]:
    """The threads that could be holding a call: not the fake server's own (its handler of an
    abandoned request ends on its own schedule), nor the event loop's bounded pool of resolver
    workers (``asyncio_N``: reused, and grown by one when two lookups overlap)."""
    return {
        t
        for t in threading.enumerate()
        if "process_request_thread" not in t.name
        and "serve_forever" not in t.name
        and not t.name.startswith("asyncio_")
    }


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """The first call's one-time costs (the call loop, the provider's client and imports, ~1 s
    here), which a run pays in LLMClient.prepare and pre-flight, before any question."""
    server = FakeServer(lambda _: (200, REPLY))
    try:
        asker(server.url, retries=0, timeout_s=30.0)("answer", ASK)
    finally:
        server.close()


@pytest.fixture
def dripping():
    server = FakeServer(lambda _: (200, Drip(REPLY)))
    yield server
    server.close()


def test_a_dripping_server_times_out_at_the_deadline_and_is_retried(dripping):
    ask, before = asker(dripping.url, retries=1), calling_threads()
    start = time.monotonic()
    with pytest.raises(LLMError, match=r"after 2 attempts.*llm.timeout_s=1 s") as caught:
        ask("answer", ASK)
    took = time.monotonic() - start
    assert caught.value.kind == "llm.timeout"
    assert 2.0 <= took < 3.5  # two attempts of 1 s each, not the ~55 s the drip lasts
    assert dripping.requests == 2
    assert hung_up(dripping, 2)  # each abandoned call closed its connection
    assert calling_threads() <= before  # no thread left behind by the abandoned calls


def test_the_breaker_counts_a_deadline_as_a_timeout(dripping):
    breaker = Breaker(2)
    for _ in range(2):
        with pytest.raises(LLMError) as caught:
            asker(dripping.url, retries=0)("answer", ASK)
        breaker.observe(classify(caught.value))
    assert breaker.tripped is not None and breaker.tripped.kind == "llm.timeout"


def test_a_reply_within_the_deadline_is_unchanged():
    server = FakeServer(lambda _: (200, Drip(REPLY, every_s=0.0)))
    try:
        assert asker(server.url, retries=0)("answer", ASK) == '{"answers": ["Paris"]}'
    finally:
        server.close()
