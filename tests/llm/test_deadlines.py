"""``llm.timeout_s`` bounds the whole call: a server that drips its reply one byte every
0.25 s resets every per-read timeout, yet the call ends at the deadline as an ``llm.timeout``
error, is retried per ``llm.max_retries``, counted by the circuit breaker, and its connection is
closed rather than left dripping. Each attempt cut at the deadline is billed (kgx.llm.pricing)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import litellm
import pytest

from kgx.core.faults import Breaker, classify
from kgx.core.trace import Trace
from kgx.core.usage import Usage
from kgx.llm.client import LLMClient
from kgx.llm.errors import LLMError
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.run.spec import llm_config
from tests.helpers import trace_of
from tests.llm.fake_server import Drip, FakeServer, completion, io_against, misbehaving

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


def prompt_tokens() -> int:
    """The prompt's tokens as kgx counts them where a provider does not (kgx.llm.pricing)."""
    return litellm.token_counter(model="gpt-3.5-turbo", messages=ASK)


def test_a_call_cut_at_the_deadline_is_billed_with_its_prompt_tokens():
    """The provider had the request, and may have done and billed the work: the timed-out attempt
    is a billed call with the prompt's tokens, beside the reply that came on the retry."""
    first = iter([True])
    server = FakeServer(lambda _: (200, Drip(REPLY) if next(first, False) else REPLY))
    paid: list[Usage] = []
    ask = asker(server.url, retries=1)
    ask.meter.billed = paid.append
    try:
        assert ask("answer", ASK) == '{"answers": ["Paris"]}'
    finally:
        server.close()
    u = ask.meter.total()
    assert (u.calls, u.retries, u.input_tokens, u.output_tokens) == (1, 1, 5, 1)  # what the method used
    assert (u.billed_calls, u.billed_input_tokens, u.billed_output_tokens) == (2, 5 + prompt_tokens(), 1)
    assert u.unpriced_calls == 2 and u.cost is None  # the model is in no price map
    assert [p.billed_calls for p in paid] == [2]  # the run's billing log is told of both


def test_a_call_that_only_timed_out_is_billed_for_every_attempt(dripping):
    ask = asker(dripping.url, retries=1)
    ask.client.default = replace(ask.client.default, input_cost_per_token=1e-6, output_cost_per_token=2e-6)
    with pytest.raises(LLMError):
        ask("answer", ASK)
    u = ask.meter.total()
    assert (u.calls, u.cached_calls, u.input_tokens) == (1, 0, 0)
    assert (u.billed_calls, u.billed_input_tokens, u.billed_output_tokens) == (2, 2 * prompt_tokens(), 0)
    assert u.cost == pytest.approx(2 * prompt_tokens() * 1e-6)


def test_a_request_that_never_connected_is_not_billed():
    closed = FakeServer(lambda _: (200, REPLY))
    closed.close()  # nothing listens on its port any more
    ask = asker(closed.url, retries=0)
    with pytest.raises(LLMError) as caught:
        ask("answer", ASK)
    assert caught.value.kind == "llm.unreachable" and ask.meter.total().billed_calls == 0


def test_a_run_bills_the_calls_that_timed_out(run):
    """Every question's only call is cut at the deadline: the run answered none, failed both, and
    paid for both, in its billing log, its figures and the line it prints."""
    server = FakeServer(misbehaving("drip"))
    try:
        out = run(
            *io_against(server.url),
            "llm.timeout_s=1",
            "llm.max_retries=0",
            "run.max_consecutive_errors=0",
        )
    finally:
        server.close()
    assert out.status == "FAILED" and [f.kind for f in out.failures] == ["llm.timeout"] * 2
    assert (out.computed, out.failed, out.billed_calls) == (0, 2, 2)
    log = [json.loads(line) for line in (out.out_dir / "billing.jsonl").read_text().splitlines()]
    prompts = {r.id: trace_of(out.out_dir, r)["events"][0]["messages"] for r in out.records}
    assert {row["id"]: row["billed_input_tokens"] for row in log} == {
        qid: litellm.token_counter(model="gpt-3.5-turbo", messages=messages) for qid, messages in prompts.items()
    }
    assert out.summary["billed_calls"] == 2 and out.summary["billed_tokens"] == sum(
        r["billed_input_tokens"] for r in log
    )
    assert out.summary["llm_calls_per_q"] == 1 and out.summary["total_tokens_per_q"] == 0  # nothing came back
