"""Per-stage generation limits: a stage asks for room for its reply, the request sends
max(llm.max_tokens, that) within what the model allows, the cache key changes only when the limit
does, and a reply the provider cut at the limit is named, counted and asked again with twice the
room. On the scripted backbone (which cuts at max_tokens) and a fake OpenAI-compatible server."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kgx.core.config import LLMConfig, LocalModelConfig
from kgx.core.trace import Trace
from kgx.core.usage import Usage
from kgx.llm.cache import ResponseCache
from kgx.llm.client import LLMClient
from kgx.llm.errors import OutputError
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.run.spec import llm_config
from tests.llm.fake_server import FakeServer, completion

QUESTION = [
    {"role": "user", "content": "Question: Which river flows through Canberra?\nMolonglo River flows through Canberra."}
]
ANSWERS = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
REPLY = {"answer": "Molonglo River flows through Canberra."}  # 13 tokens as the scripted model writes it


def scripted(**kw: Any) -> LLMConfig:
    return LLMConfig(
        **{
            **dict(
                name="scripted",
                model="kgx-scripted/overlap",
                structured_output=True,
                input_cost_per_token=0.0,
                output_cost_per_token=0.0,
                backoff_s=0.0,
            ),
            **kw,
        }
    )


def bound(cfg: LLMConfig, cache: ResponseCache | None = None):
    meter, trace = Meter(), Trace()
    return QuestionLLM(LLMClient(cfg, {}, cache, sleep=lambda s: None), meter, trace), meter, trace


def calls(trace: Trace) -> list:
    return [e for e in trace.events if e.kind == "llm"]


def test_a_cut_reply_is_named_counted_and_asked_again_with_twice_the_room():
    llm, meter, trace = bound(scripted(max_tokens=4, parse_retries=3))
    assert llm("answer", QUESTION, schema=ANSWERS) == REPLY
    events = calls(trace)
    assert [e.max_tokens for e in events] == [4, 8, 16]
    assert [e.truncated for e in events] == [True, True, False]
    assert events[0].error.startswith("truncated at max_tokens=4 (invalid JSON")
    assert events[1].error.startswith("truncated at max_tokens=8 (")
    assert [n.message for n in trace.notes("answer")] == [
        "reply truncated at max_tokens=4: the retry asks for max_tokens=8",
        "reply truncated at max_tokens=8: the retry asks for max_tokens=16",
    ]
    usage = meter.stages["answer"]
    assert (usage.calls, usage.truncated, usage.parse_failures) == (3, 2, 2)
    assert events[0].output_tokens == 4  # the provider's count of what it sent


def test_output_error_says_the_reply_was_truncated():
    llm, meter, trace = bound(scripted(max_tokens=3, parse_retries=1))
    with pytest.raises(OutputError, match=r"after 2 tries: truncated at max_tokens=6 \(") as caught:
        llm("answer", QUESTION, schema=ANSWERS)
    assert caught.value.text.startswith('{"answer"') and meter.total().truncated == 2
    assert (Usage(truncated=2) + Usage(truncated=1)).truncated == 3


def test_a_stage_asks_for_more_than_the_backbone_default_never_less():
    llm, _, trace = bound(scripted(max_tokens=4, parse_retries=0))
    assert llm("answer", QUESTION, schema=ANSWERS, max_tokens=64) == REPLY
    with pytest.raises(OutputError, match="truncated at max_tokens=4"):
        llm("answer", QUESTION, schema=ANSWERS, max_tokens=2)  # the default is the floor
    assert [e.max_tokens for e in calls(trace)] == [64, 4]


def test_a_cut_free_text_reply_is_counted_and_kept():
    llm, meter, trace = bound(scripted(max_tokens=2))
    assert llm("answer", QUESTION) == "{M"
    assert meter.total().truncated == 1 and calls(trace)[0].truncated and not calls(trace)[0].error


def test_the_cache_key_changes_only_when_the_stage_asks_for_more(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    first, _, _ = bound(scripted(max_tokens=64), cache)
    first("answer", QUESTION, schema=ANSWERS)  # a key as before stages could ask
    again, meter, _ = bound(scripted(max_tokens=64), cache)
    again("answer", QUESTION, schema=ANSWERS, max_tokens=64)
    again("answer", QUESTION, schema=ANSWERS, max_tokens=10)
    assert (meter.total().cached_calls, meter.total().billed_calls) == (2, 0)
    again("answer", QUESTION, schema=ANSWERS, max_tokens=65)
    assert meter.total().billed_calls == 1


def test_a_cached_cut_reply_is_still_known_as_cut(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    for _ in range(2):
        llm, meter, trace = bound(scripted(max_tokens=2), cache)
        llm("answer", QUESTION)
    assert meter.total().cached_calls == 1 and meter.total().truncated == 1 and calls(trace)[0].truncated


def test_what_the_model_allows_caps_the_stage_and_the_doubling():
    client = LLMClient(scripted(), {}, None)
    local = replace(llm_config("local"), max_tokens=256, local=LocalModelConfig(n_ctx=1024))
    assert client.limit(local, 685) == 685 and client.limit(local, 5000) == 1024  # n_ctx
    hosted = llm_config("gpt4o_mini")
    assert client.ceiling(hosted) == 16384 and client.limit(hosted, 10**6) == 16384  # litellm's map
    assert client.ceiling(scripted()) is None and client.limit(scripted(), 10**6) == 10**6
    assert client.limit(replace(local, max_tokens=2048), 4096) == 2048  # the backbone's own stays
    llm, _, trace = bound(scripted(max_tokens=3, parse_retries=1))
    llm.client._ceilings["kgx-scripted/overlap"] = 3
    with pytest.raises(OutputError, match="truncated at max_tokens=3"):
        llm("answer", QUESTION, schema=ANSWERS, max_tokens=100)
    assert [e.max_tokens for e in calls(trace)] == [3, 3]
    assert trace.notes()[0].message == (
        "reply truncated at max_tokens=3: the retry cannot ask for more: the model allows no more"
    )


@pytest.fixture
def server():
    """A served model whose replies stop at max_tokens=32 ("length"), as a server reports it."""

    def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        reply = completion('{"answer": "Molonglo' + ('"}' if body["max_tokens"] >= 100 else ""))
        if body["max_tokens"] < 100:
            reply["choices"][0]["finish_reason"] = "length"
        return 200, reply

    fake = FakeServer(answer)
    yield fake
    fake.close()


def served(url: str, **kw: Any) -> LLMConfig:
    return replace(
        llm_config("llama3_8b"),
        api_base=url,
        structured_output="json_schema",
        cache=False,
        max_retries=0,
        timeout_s=10.0,
        max_tokens=32,
        **kw,
    )


def test_the_request_sends_the_larger_of_the_default_and_the_stage_limit(server):
    llm, meter, _ = bound(served(server.url))
    assert llm("answer", QUESTION, schema=ANSWERS, max_tokens=150) == {"answer": "Molonglo"}
    assert server.bodies[-1]["max_tokens"] == 150 and meter.total().truncated == 0
    with pytest.raises(OutputError):
        llm("answer", QUESTION, schema=ANSWERS, max_tokens=16, retries=0)
    assert server.bodies[-1]["max_tokens"] == 32


def test_a_servers_length_finish_is_named_and_the_retry_asks_twice_as_much(server):
    llm, meter, trace = bound(served(server.url, parse_retries=2))
    assert llm("answer", QUESTION, schema=ANSWERS, max_tokens=50) == {"answer": "Molonglo"}
    assert [body["max_tokens"] for body in server.bodies] == [50, 100]
    assert calls(trace)[0].error.startswith("truncated at max_tokens=50 (invalid JSON")
    assert meter.total().truncated == 1
