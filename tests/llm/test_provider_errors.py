"""What a real OpenAI-compatible server's refusals become, through litellm over HTTP on loopback:
requests that cannot succeed are not retried, outages are, and both name the backbone."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kgx.core.trace import Trace
from kgx.llm.client import LLMClient
from kgx.llm.errors import LLMError
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.run.spec import llm_config
from tests.llm.fake_server import OK, FakeServer


@pytest.fixture
def server(request):
    status, body = request.param
    fake = FakeServer(lambda _: (status, body))
    yield fake
    fake.close()


def client(url: str) -> LLMClient:
    cfg = replace(llm_config("llama3_8b"), api_base=url, max_retries=3, backoff_s=0.0, cache=False, timeout_s=10.0)
    return LLMClient(cfg, {}, None, sleep=lambda s: None)


def ask(c: LLMClient):
    return QuestionLLM(c, Meter(), Trace())("answer", [{"role": "user", "content": "Question: q?"}])


# litellm 1.106 itself resends a 422 once with unsupported params dropped; kgx never retries.
@pytest.mark.parametrize(
    "server, kind, sent",
    [
        ((401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}), "llm.auth", 1),
        ((403, {"error": {"message": "not allowed", "type": "permission_error"}}), "llm.auth", 1),
        (
            (404, {"error": {"message": "The model `x` does not exist", "type": "invalid_request_error"}}),
            "llm.not_found",
            1,
        ),
        ((400, {"error": {"message": "bad field", "type": "invalid_request_error"}}), "llm.bad_request", 1),
        ((422, {"error": {"message": "unprocessable", "type": "invalid_request_error"}}), "llm.bad_request", 2),
        (
            (500, {"error": {"message": "1 validation error for ChatCompletionRequest", "type": "server_error"}}),
            "llm.bad_request",
            1,
        ),
    ],
    indirect=["server"],
)
def test_requests_that_cannot_succeed_are_sent_once(server, kind, sent):
    with pytest.raises(LLMError) as caught:
        ask(client(server.url))
    assert caught.value.kind == kind and server.requests == sent
    assert server.url in str(caught.value) or "no completion came back" in str(caught.value)


@pytest.mark.parametrize("server", [(503, {"error": {"message": "overloaded", "type": "server_error"}})], indirect=True)
def test_an_outage_is_retried_then_named(server):
    with pytest.raises(LLMError, match="after 4 attempts.*overloaded") as caught:
        ask(client(server.url))
    assert caught.value.kind == "llm.server" and server.requests == 4


@pytest.mark.parametrize("server", [(401, {"error": {"message": "Incorrect API key provided"}})], indirect=True)
def test_preflight_names_the_model_the_server_and_the_providers_message(server):
    with pytest.raises(LLMError, match="pre-flight request failed") as caught:
        client(server.url).preflight()
    message = str(caught.value)
    assert "llama3_8b" in message and server.url in message and "Incorrect API key provided" in message


@pytest.mark.parametrize("server", [(200, OK)], indirect=True)
def test_preflight_sends_one_request_per_distinct_backbone(server):
    cfg = replace(llm_config("llama3_8b"), api_base=server.url, cache=False, structured_output="prompted")
    stages = {"answer": cfg, "select": replace(cfg, name="other", api_base=server.url + "/")}
    assert LLMClient(cfg, stages, None).preflight() == 2 and server.requests == 2
