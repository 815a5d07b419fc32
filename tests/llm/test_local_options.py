"""``llm.local`` reaches llama.cpp: the file, the knobs and the AMX-safe default, one model per
distinct settings, each probed first, and a stage's generation limit; a bad model_path fails
naming the setting. No model runs: llama_cpp.Llama is a fake that reads its model parameters as
the real one does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import litellm
import pytest

from kgx.core.config import LocalModelConfig
from kgx.core.trace import Trace
from kgx.llm import local, local_setup, providers
from kgx.llm.client import LLMClient
from kgx.llm.local_grammar import gbnf
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.run.spec import llm_config


class FakeLlama:
    made: list[dict] = []

    def __init__(self, **kwargs):
        from llama_cpp import llama_cpp as native

        # Llama() takes use_extra_bufts from here, not from its keywords (which it ignores).
        kwargs["model_params.use_extra_bufts"] = native.llama_model_default_params().use_extra_bufts
        self.calls: list[str] = []
        self.requests: list[dict] = []
        FakeLlama.made.append(kwargs)

    def reset(self):
        self.calls.append("reset")

    def create_chat_completion(self, **request):
        self.calls.append("complete")
        self.requests.append(request)
        return {
            "choices": [{"message": {"content": "Canberra"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8},
        }

    def close(self):
        pass


@pytest.fixture
def probed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict]:
    """llama_cpp.Llama is the fake; probes are recorded instead of run."""
    import llama_cpp

    monkeypatch.setattr(llama_cpp, "Llama", FakeLlama)
    monkeypatch.setattr(FakeLlama, "made", [])
    monkeypatch.setattr(local_setup, "MACHINE_LOCK", tmp_path / "llm.lock")
    calls: list[dict] = []
    monkeypatch.setattr(local, "probe", calls.append)
    return calls


def options(**kw) -> dict:
    return dataclasses.asdict(LocalModelConfig(**kw))


def test_defaults_are_the_bundled_model_without_extra_buffers(probed):
    local.LocalLlama().prepare(options())
    [kwargs] = FakeLlama.made
    assert kwargs["model_path"] == str(local_setup.gguf_path())
    assert kwargs["model_params.use_extra_bufts"] is False
    assert kwargs["n_threads"] == kwargs["n_threads_batch"] == local_setup.default_threads()
    assert kwargs["n_ctx"] == 4096 and kwargs["n_batch"] == 512 and kwargs["chat_format"] is None
    assert probed == [{**local_setup.llama_kwargs(options()), "use_extra_bufts": False}]  # what is loaded
    from llama_cpp import llama_cpp as native

    assert native.llama_model_default_params().use_extra_bufts is True  # llama.cpp's default is back


def test_the_knobs_reach_llama_and_each_distinct_setting_loads_once(probed, tmp_path):
    model = tmp_path / "other.gguf"
    model.write_bytes(b"GGUF\x03\x00")
    handler = local.LocalLlama()
    custom = options(
        model_path=str(model), chat_format="chatml", n_ctx=256, n_threads=3, n_batch=64, use_extra_bufts=True
    )
    handler.prepare(custom)
    handler.prepare(custom)
    handler.prepare(options())
    assert FakeLlama.made[0] == {
        "model_path": str(model.resolve()),
        "chat_format": "chatml",
        "n_ctx": 256,
        "n_threads": 3,
        "n_threads_batch": 3,
        "n_batch": 64,
        "model_params.use_extra_bufts": True,
        "verbose": False,
    }
    assert len(FakeLlama.made) == len(probed) == 2


def test_a_request_carries_its_options_through_litellm_and_resets_first(probed, monkeypatch):
    providers.install()
    handler = providers._handlers[providers.LOCAL]
    monkeypatch.setattr(handler, "_models", {})
    reply = litellm.completion(
        model="kgx-local/test", messages=[{"role": "user", "content": "hi"}], local=options(n_threads=1, n_ctx=128)
    )
    assert reply.choices[0].message.content == "Canberra" and reply.usage.total_tokens == 8
    [kwargs] = FakeLlama.made
    assert kwargs["n_threads"] == 1 and kwargs["n_ctx"] == 128
    [model] = handler._models.values()
    assert model.calls == ["reset", "complete"]


@pytest.mark.parametrize(
    "response_format, sent",
    [
        (
            {"type": "json_schema", "json_schema": {"name": "reply", "schema": {"type": "object"}}},
            {"grammar": gbnf({"type": "object"})},
        ),  # kgx builds the grammar (kgx.llm.local_grammar)
        (
            {"type": "json_object", "schema": {"type": "object"}},
            {"response_format": {"type": "json_object", "schema": {"type": "object"}}},
        ),
    ],
)
def test_sampling_parameters_and_both_schema_forms_reach_create_chat_completion(
    probed, monkeypatch, response_format, sent
):
    providers.install()
    handler = providers._handlers[providers.LOCAL]
    monkeypatch.setattr(handler, "_models", {})
    litellm.completion(
        model="kgx-local/test",
        messages=[{"role": "user", "content": "hi"}],
        local=options(),
        temperature=0.0,
        max_tokens=9,
        response_format=response_format,
        repeat_penalty=1.1,
        top_k=1,
        min_p=0.0,
        top_p=0.5,
        mirostat_mode=0,
        stop=["\n"],
    )
    [model] = handler._models.values()
    [request] = model.requests
    if "grammar" in request:
        request["grammar"] = request["grammar"]._grammar  # the GBNF text llama.cpp is given
    assert request == {
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.0,
        "max_tokens": 9,
        "seed": 0,
        "repeat_penalty": 1.1,
        "top_k": 1,
        "min_p": 0.0,
        "top_p": 0.5,
        "mirostat_mode": 0,
        "stop": ["\n"],
        **sent,
    }


@pytest.mark.parametrize("content", [None, b"not a model"])
def test_a_bad_model_path_names_the_setting_and_the_file(probed, tmp_path, content):
    path = tmp_path / "missing.gguf"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(local_setup.LocalModelError) as caught:
        local.LocalLlama().prepare(options(model_path=str(path)))
    assert f"llm.local.model_path={path}" in str(caught.value)
    assert FakeLlama.made == [] and probed == []


def test_a_stage_limit_reaches_create_chat_completion_within_the_context(probed, monkeypatch):
    """Above n_ctx the client caps it; llama-cpp-python clips it further to what the prompt leaves."""
    providers.install()
    handler = providers._handlers[providers.LOCAL]
    monkeypatch.setattr(handler, "_models", {})
    cfg = dataclasses.replace(llm_config("local"), cache=False, max_tokens=256, local=LocalModelConfig(n_ctx=1024))
    llm = QuestionLLM(LLMClient(cfg, {}, None), Meter(), Trace())
    for asked in (None, 685, 5000):
        assert llm("answer", [{"role": "user", "content": "hi"}], max_tokens=asked) == "Canberra"
    [model] = handler._models.values()
    assert [request["max_tokens"] for request in model.requests] == [256, 685, 1024]
