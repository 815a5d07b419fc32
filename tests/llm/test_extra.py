"""``llm.extra`` is sent with every request: ``+llm.extra.api_key=...`` is the key the server
gets (and is written nowhere), and a key kgx sets itself is refused before the run, naming the
setting to use instead (kgx.llm.client, kgx.core.config_checks)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from kgx.core.boundary import SECRETS
from kgx.core.config_checks import ConfigError
from kgx.core.trace import Trace
from kgx.llm.client import LLMClient
from kgx.llm.errors import LLMError, check_keys
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.run.spec import llm_config
from tests.inprocess import kgx_main
from tests.llm.fake_server import FakeServer, completion, io_against

KEY = "sk-extra-7d3c9b1a5e"
ASK = [{"role": "user", "content": "Question: capital of France?"}]


@pytest.fixture
def server():
    served = FakeServer(lambda _: (200, completion('{"answers": ["Canberra"]}')))
    yield served
    served.close()
    SECRETS.clear()


def asker(url: str, **kw) -> QuestionLLM:
    cfg = replace(llm_config("llama3_8b"), api_base=url, structured_output="prompted", cache=False, **kw)
    return QuestionLLM(LLMClient(cfg, {}, None, sleep=lambda s: None), Meter(), Trace())


def test_an_api_key_in_llm_extra_is_the_key_the_server_gets(server):
    asker(server.url, extra={"api_key": KEY})("answer", ASK)
    assert server.headers[-1]["authorization"] == f"Bearer {KEY}"


def test_an_api_key_in_llm_extra_takes_the_place_of_api_key_env(server, monkeypatch):
    monkeypatch.delenv("KGX_TEST_UNSET_KEY", raising=False)
    cfg = replace(llm_config("llama3_8b"), api_key_env="KGX_TEST_UNSET_KEY", extra={"api_key": KEY})
    check_keys([cfg])  # no demand for the variable: the key is given
    asker(server.url, api_key_env="KGX_TEST_UNSET_KEY", extra={"api_key": KEY})("answer", ASK)
    assert server.headers[-1]["authorization"] == f"Bearer {KEY}"


def test_an_api_key_in_llm_extra_echoed_in_an_error_is_redacted():
    echo = FakeServer(lambda _: (401, {"error": {"message": f"invalid key {KEY}", "type": "auth"}}))
    try:
        with pytest.raises(LLMError) as caught:
            asker(echo.url, extra={"api_key": KEY}, max_retries=0)("answer", ASK)
    finally:
        echo.close()
        SECRETS.clear()
    assert KEY not in str(caught.value) and "[secret llm.extra.api_key]" in str(caught.value)


def test_a_run_sends_the_extra_api_key_and_writes_it_nowhere(server, tmp_path):
    done = kgx_main(tmp_path, *io_against(server.url), "run.progress=false", f"+llm.extra.api_key={KEY}")
    assert done.returncode == 0, done.stderr
    assert server.requests == 3  # pre-flight and one call per question
    assert {h["authorization"] for h in server.headers} == {f"Bearer {KEY}"}
    assert KEY not in done.stdout + done.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert [p for p in files if KEY.encode() in p.read_bytes()] == []
    config = json.loads(next(p for p in files if p.name == "config.json").read_text())
    assert config["llm"]["extra"] == {"api_key": "[secret llm.extra.api_key]"}


@pytest.mark.parametrize(
    ("key", "instead"),
    [("temperature", "use llm.temperature"), ("model", "use llm.model"), ("seed", "use run.seed")],
)
def test_a_key_kgx_sets_itself_is_refused_in_one_line_before_the_run(tmp_path, key, instead):
    done = kgx_main(tmp_path, "method=io", "dataset=demo", "llm=scripted", f"+llm.extra.{key}=1")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"kgx: error: llm.extra.{key}: kgx sets {key} in every request itself; {instead}"
    ]
    assert not (tmp_path / "outputs" / "runs").exists()


def test_every_backbone_config_refuses_it_as_it_is_made():
    with pytest.raises(ConfigError, match=r"llm.extra.messages: kgx sets messages in every request itself"):
        replace(llm_config("scripted"), extra={"messages": []})
