"""What a model or server sends back cannot break what kgx writes: replies and error
bodies pass the text boundary (kgx.core.boundary) where they enter, through litellm over HTTP on
loopback: lone surrogates replaced and counted, echoed secrets redacted, long replies cut, and an
invalid reply never cached."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import litellm
import pytest

from kgx.core.boundary import SECRETS, clean, clean_value, needs_cleaning
from kgx.core.trace import Trace
from kgx.llm.cache import ResponseCache
from kgx.llm.client import LLMClient
from kgx.llm.errors import LLMError, OutputError
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.run.spec import llm_config
from tests.llm.fake_server import FakeServer, completion

KEY = "sk-test-4f9a1c2e7b3d"
ASK = [{"role": "user", "content": "Question: capital of France?"}]
ANSWERS = {"type": "object", "properties": {"answers": {"type": "array"}}, "required": ["answers"]}


@pytest.fixture
def secret_key(monkeypatch):
    monkeypatch.setenv("KGX_TEST_KEY", KEY)
    yield KEY
    SECRETS.clear()


def bound(url: str, cache=None, **kw):
    cfg = replace(
        llm_config("llama3_8b"),
        api_base=url,
        structured_output="prompted",
        max_retries=0,
        backoff_s=0.0,
        cache=cache is not None,
        **kw,
    )
    meter, trace = Meter(), Trace()
    return QuestionLLM(LLMClient(cfg, {}, cache, sleep=lambda s: None), meter, trace), meter, trace


def serve(content: str, status: int = 200) -> FakeServer:
    return FakeServer(lambda _: (status, completion(content) if status == 200 else json.loads(content)))


def test_a_lone_surrogate_in_parsed_json_is_replaced_and_counted():
    server = serve('{"answers": ["Par\\ud800is"]}')  # the model wrote the JSON escape itself
    try:
        llm, meter, trace = bound(server.url)
        assert llm("answer", ASK, schema=ANSWERS) == {"answers": ["Par\ufffdis"]}
    finally:
        server.close()
    assert meter.total().unstorable_chars == 1
    assert [n.message for n in trace.notes()] == ["parsed reply made storable: 1 lone surrogate replaced by U+FFFD"]


def test_a_lone_surrogate_in_the_reply_text_never_reaches_the_cache(tmp_path):
    server = serve('{"answers": ["Par\ud800is"]}')  # a raw surrogate, sent as the escape \\ud800 on the wire
    cache = ResponseCache(tmp_path / "llm.sqlite")
    try:
        llm, meter, _ = bound(server.url, cache)
        assert llm("answer", ASK, schema=ANSWERS) == {"answers": ["Par\ufffdis"]}
        again, meter_again, _ = bound(server.url, cache)
        assert again("answer", ASK, schema=ANSWERS) == {"answers": ["Par\ufffdis"]}
    finally:
        server.close()
    assert server.requests == 1  # the second came from the cache, with the same counts
    assert meter.total().unstorable_chars == meter_again.total().unstorable_chars == 1
    assert "\\ud800" not in (tmp_path / "llm.sqlite").read_bytes().decode("utf-8", "replace")


def test_an_api_key_echoed_in_an_error_body_is_redacted(secret_key):
    body = json.dumps({"error": {"message": f"bad request from key {secret_key}", "type": "invalid_request_error"}})
    server = serve(body, status=400)
    try:
        llm, _, trace = bound(server.url, api_key_env="KGX_TEST_KEY")
        with pytest.raises(LLMError) as caught:
            llm("answer", ASK)
    finally:
        server.close()
    assert secret_key not in str(caught.value) and "[secret KGX_TEST_KEY]" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__  # no raw text in a traceback
    assert secret_key not in json.dumps(trace.to_list())


def test_an_api_key_echoed_in_a_reply_is_redacted_and_counted(secret_key):
    server = serve(json.dumps({"answers": [f"your key is {secret_key}"]}))
    try:
        llm, meter, _ = bound(server.url, api_key_env="KGX_TEST_KEY")
        assert llm("answer", ASK, schema=ANSWERS) == {"answers": ["your key is [secret KGX_TEST_KEY]"]}
    finally:
        server.close()
    assert meter.total().secrets_redacted == 1


def test_a_long_reply_is_cut_at_max_reply_chars_and_recorded():
    server = serve("x" * 50_000)
    try:
        llm, meter, trace = bound(server.url, max_reply_chars=1000)
        assert llm("answer", ASK) == "x" * 1000
    finally:
        server.close()
    assert meter.total().replies_cut == 1
    assert trace.notes()[0].message == "reply cut at llm.max_reply_chars=1000 (it had 50000 characters)"


def test_an_invalid_reply_is_not_cached_so_a_rerun_asks_again(tmp_path):
    server = serve("I think it is Paris.")
    cache = ResponseCache(tmp_path / "llm.sqlite")
    try:
        for _ in range(2):
            llm, meter, _ = bound(server.url, cache, parse_retries=1)
            with pytest.raises(OutputError):
                llm("answer", ASK, schema=ANSWERS)
            assert meter.total().cached_calls == 0
    finally:
        server.close()
    assert server.requests == 4  # two tries per run, none replayed


def test_one_invalid_sample_spoils_no_other():
    replies = iter(['{"answers": ["Paris"]}', "no JSON here", '{"answers": ["Lyon"]}'])
    server = FakeServer(lambda _: (200, completion(next(replies))))
    try:
        llm, _, _ = bound(server.url, parse_retries=0)
        got = llm("answer", ASK, schema=ANSWERS, n=3)
    finally:
        server.close()
    assert got[0] == {"answers": ["Paris"]} and isinstance(got[1], OutputError) and got[2] == {"answers": ["Lyon"]}


def test_the_boundary_knows_basic_auth_in_base64_and_a_bearer_token():
    try:
        SECRETS.add_pair("kg-reader", "pa55word!", "KG_USER", "KG_PASSWORD")
        SECRETS.add("Bearer tok-123456789", "KG_TOKEN")
        header = base64.b64encode(b"kg-reader:pa55word!").decode()
        text, repairs = clean(f"Authorization: Basic {header}; token tok-123456789; pw pa55word%21")
        assert text == (
            "Authorization: Basic [secret KG_USER:KG_PASSWORD]; token [secret KG_TOKEN]; pw [secret KG_PASSWORD]"
        )
        assert repairs.redacted == 3 and repairs.replaced == 0
        assert needs_cleaning(header.encode()) and not needs_cleaning(b'{"results": []}')
    finally:
        SECRETS.clear()


def test_short_values_are_not_treated_as_secrets():
    try:
        SECRETS.add("abc", "SHORT")
        assert clean("abc abc") == ("abc abc", clean("")[1])
    finally:
        SECRETS.clear()


def test_parsed_values_are_walked_keys_included():
    value, repairs = clean_value({"a\udc00": ["x\ud800", 3, None, {"b": "ok"}]})
    assert value == {"a\ufffd": ["x\ufffd", 3, None, {"b": "ok"}]} and repairs.replaced == 2


def test_a_reply_without_usage_is_billed_with_kgxs_own_counts():
    """litellm reports zeros for a reply that carries no usage: kgx counts the prompt and the reply
    itself (kgx.llm.pricing) rather than bill a call of 0 tokens."""
    body = completion('{"answers": ["Paris"]}')
    del body["usage"]
    server = FakeServer(lambda _: (200, body))
    try:
        llm, meter, _ = bound(server.url, input_cost_per_token=1e-6, output_cost_per_token=2e-6)
        assert llm("answer", ASK) == '{"answers": ["Paris"]}'
    finally:
        server.close()
    u = meter.total()
    prompt = litellm.token_counter(model="gpt-3.5-turbo", messages=ASK)
    reply = litellm.token_counter(model="gpt-3.5-turbo", text='{"answers": ["Paris"]}', count_response_tokens=True)
    assert (u.billed_calls, u.billed_input_tokens, u.billed_output_tokens) == (1, prompt, reply) and reply > 0
    assert u.cost == pytest.approx(prompt * 1e-6 + reply * 2e-6)
