"""``llm.structured_output`` against fake OpenAI-compatible servers over HTTP on loopback: auto
finds the first form a server accepts and enforces, at pre-flight, once per backbone; forms a
server rejects move on, a refused key or an unknown model stops the run; questions then use the
form found. Also the config side: the modes, old true/false, api_base from the environment."""

from __future__ import annotations

import socket
from dataclasses import replace
from typing import Any

import pytest

from kgx.core.config import ConfigError, LLMConfig
from kgx.core.trace import Trace
from kgx.llm.client import LLMClient
from kgx.llm.errors import LLMError
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.llm.structured import PROBE_SCHEMA
from kgx.run.spec import llm_config, to_run_spec
from tests.llm.fake_server import FakeServer, completion

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
QUESTION = [{"role": "user", "content": "Question: Which river flows through Canberra?"}]
VALIDATION = (
    500,
    {
        "error": {
            "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
            "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}",
            "type": "internal_server_error",
        }
    },
)


def enforced(body: dict[str, Any]) -> dict[str, Any]:
    """A reply that follows the request's schema, as a server with a JSON grammar writes it."""
    schema = body["response_format"].get("schema") or body["response_format"]["json_schema"]["schema"]
    return completion('{"reply": "OK"}' if schema == PROBE_SCHEMA else '{"answer": "Molonglo River"}')


def vllm(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """json_schema enforced, as vLLM and OpenAI do."""
    if body.get("response_format", {}).get("type") == "json_schema":
        return 200, enforced(body)
    return 200, completion("OK")


def llama_cpp(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """llama-cpp-python's server: json_object with a schema; json_schema is a 500 validation error."""
    form = body.get("response_format", {}).get("type")
    if form == "json_schema":
        return VALIDATION
    return 200, enforced(body) if form == "json_object" else completion("OK")


def ignores(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Accepts response_format and ignores it: nothing is enforced, so the schema is prompted."""
    if "JSON Schema" in body["messages"][-1]["content"]:
        return 200, completion('{"answer": "Molonglo River"}' if "Canberra" in str(body) else '{"reply": "OK"}')
    return 200, completion("OK")


def refuses(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A 400 for any response_format (a server without structured output)."""
    if "response_format" in body:
        return 400, {"error": {"message": "response_format is not supported", "type": "invalid_request_error"}}
    return ignores(body)


@pytest.fixture
def serve():
    servers: list[FakeServer] = []

    def start(answer) -> FakeServer:
        servers.append(FakeServer(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def backbone(url: str, **kw: Any) -> LLMConfig:
    return replace(
        llm_config("llama3_8b"), api_base=url, cache=False, max_retries=2, backoff_s=0.0, timeout_s=10.0, **kw
    )


def ask(client: LLMClient) -> Any:
    return QuestionLLM(client, Meter(), Trace())("answer", QUESTION, schema=SCHEMA)


@pytest.mark.parametrize(
    "answer, mode, probes, form",
    [
        (vllm, "json_schema", 1, "json_schema"),
        (llama_cpp, "json_object_schema", 2, "json_object"),
        (ignores, "prompted", 3, None),
        (refuses, "prompted", 3, None),
    ],
)
def test_auto_keeps_the_first_form_the_server_accepts_and_enforces(serve, answer, mode, probes, form):
    server = serve(answer)
    client = LLMClient(backbone(server.url), {}, None)
    assert client.structured_modes() == {"llama3_8b": "auto"}  # not probed yet
    assert client.preflight() == probes == server.requests
    assert client.structured_modes() == {"llama3_8b": mode}
    assert ask(client) == {"answer": "Molonglo River"}
    question = server.bodies[-1]
    assert question.get("response_format", {}).get("type") == form
    assert ("JSON Schema" in question["messages"][-1]["content"]) == (mode == "prompted")
    assert client.preflight() == 1  # known now: one plain request, no probing again


def test_stage_backbones_on_one_server_are_probed_once(serve):
    server = serve(llama_cpp)
    cfg = backbone(server.url)
    stages = {"select": replace(cfg, name="selector"), "answer": replace(cfg, structured_output="json_schema")}
    client = LLMClient(cfg, stages, None)
    assert client.preflight() == 2 == server.requests
    assert client.structured_modes() == {
        "llama3_8b": "json_object_schema,json_schema",
        "selector": "json_object_schema",
    }


def test_without_preflight_the_first_question_probes(serve):
    server = serve(llama_cpp)
    client = LLMClient(backbone(server.url), {}, None)
    assert ask(client) == {"answer": "Molonglo River"}
    assert server.requests == 3 and server.bodies[-1]["response_format"]["type"] == "json_object"


@pytest.mark.parametrize(
    "status, message, kind",
    [
        (401, "Incorrect API key provided", "llm.auth"),
        (404, "The model `llama3` does not exist", "llm.not_found"),
    ],
)
def test_a_refused_key_or_an_unknown_model_stops_the_probe(serve, status, message, kind):
    server = serve(lambda _: (status, {"error": {"message": message, "type": "invalid_request_error"}}))
    with pytest.raises(LLMError, match="pre-flight request failed") as caught:
        LLMClient(backbone(server.url), {}, None).preflight()
    assert caught.value.kind == kind and message in str(caught.value) and server.url in str(caught.value)
    assert server.requests == 1


@pytest.mark.parametrize("option", ["llama3_8b", "vllm", "ollama"])  # openai/, hosted_vllm/, ollama_chat/
def test_an_unreachable_server_stops_the_probe_after_the_retries(option):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    cfg = replace(llm_config(option), api_base=url, max_retries=2, backoff_s=0.0)
    client = LLMClient(cfg, {}, None, sleep=lambda s: None)
    with pytest.raises(LLMError, match="pre-flight request failed.*after 3 attempts") as caught:
        client.preflight()
    assert caught.value.kind == "llm.unreachable" and url in str(caught.value)


def test_a_plain_request_the_server_rejects_stops_the_run(serve):
    server = serve(lambda _: (400, {"error": {"message": "unknown field: seed", "type": "invalid_request_error"}}))
    with pytest.raises(LLMError, match="unknown field: seed") as caught:
        LLMClient(backbone(server.url), {}, None).preflight()
    assert caught.value.kind == "llm.bad_request" and server.requests == 3  # every form, then stop


def test_a_named_form_is_sent_as_is_and_sampling_parameters_reach_the_body(serve):
    server = serve(llama_cpp)
    cfg = backbone(
        server.url,
        structured_output="json_object_schema",
        extra={"repeat_penalty": 1.0, "top_k": 1, "min_p": 0.0, "top_p": 1.0},
    )
    client = LLMClient(cfg, {}, None)
    assert client.preflight() == 1 and "response_format" not in server.bodies[0]  # the plain OK request
    assert ask(client) == {"answer": "Molonglo River"}
    body = server.bodies[-1]
    assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert (body["repeat_penalty"], body["top_k"], body["min_p"], body["top_p"]) == (1.0, 1, 0.0, 1.0)


@pytest.mark.parametrize(
    "value, mode",
    [
        (True, "json_schema"),
        (False, "prompted"),
        ("True", "json_schema"),
        ("false", "prompted"),
        ("auto", "auto"),
        (None, None),
    ],
)
def test_old_true_false_configs_still_mean_a_form(value, mode):
    assert LLMConfig(structured_output=value).structured_output == mode


def test_an_unknown_form_names_the_field_and_the_choices():
    with pytest.raises(
        ConfigError, match="llm.structured_output=json: choose one of json_schema, json_object_schema, prompted, auto"
    ):
        LLMConfig(structured_output="json")


@pytest.mark.parametrize(
    "override, mode",
    [("llm.structured_output=true", "json_schema"), ("llm.structured_output=json_object_schema", "json_object_schema")],
)
def test_forms_compose_from_the_command_line(compose_cfg, override, mode):
    assert to_run_spec(compose_cfg("llm=vllm", override)).llm.structured_output == mode


@pytest.mark.parametrize(
    "option, variable, default",
    [
        ("vllm", "HOSTED_VLLM_API_BASE", "http://localhost:8000/v1"),
        ("ollama", "OLLAMA_API_BASE", "http://localhost:11434"),
    ],
)
def test_api_base_comes_from_the_environment_else_localhost(compose_cfg, monkeypatch, option, variable, default):
    monkeypatch.delenv(variable, raising=False)
    cfg = compose_cfg(f"llm={option}")
    assert cfg.llm._get_node("api_base")._value() == f"${{oc.env:{variable},{default}}}"  # as --cfg job shows it
    assert to_run_spec(cfg).llm.api_base == default
    monkeypatch.setenv(variable, "http://127.0.0.1:9999/v1")
    assert to_run_spec(compose_cfg(f"llm={option}")).llm.api_base == "http://127.0.0.1:9999/v1"
    assert llm_config(option).api_base == "http://127.0.0.1:9999/v1"  # a stage backbone by name too
    spec = to_run_spec(compose_cfg(f"llm={option}", "llm.api_base=http://127.0.0.1:1234/v1"))
    assert spec.llm.api_base == "http://127.0.0.1:1234/v1" and spec.resolved()["llm"]["api_base"] == spec.llm.api_base
