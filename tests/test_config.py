from __future__ import annotations

import subprocess
import sys

import pytest
from hydra.errors import ConfigCompositionException

from kgx.config import CONF_DIR, ConfigError, to_run_spec
from kgx.methods.lmp import LMPConfig
from kgx.methods.sc import SCConfig
from tests.helpers import kgx_env

LLM_OPTIONS = sorted(p.stem for p in (CONF_DIR / "llm").glob("*.yaml"))


def test_defaults_compose_to_the_local_lmp_run(compose_cfg):
    spec = to_run_spec(compose_cfg())
    assert isinstance(spec.method, LMPConfig) and (spec.method.width, spec.method.depth) == (3, 1)
    assert spec.llm.model == "kgx-local/smollm2-135m-instruct"
    assert spec.dataset.name == "demo" and spec.kg.name == "demo"
    assert spec.run.concurrency >= 1 and spec.stages == {}


def test_every_llm_option_named_by_the_issue_exists_and_composes(compose_cfg):
    expected = {"local", "scripted", "gpt35", "gpt4", "gpt4o_mini", "deepseek_v3", "o1_mini",
                "llama3_8b", "llama3_70b", "chatglm3_6b", "ollama", "vllm"}
    assert expected <= set(LLM_OPTIONS)
    models = {name: to_run_spec(compose_cfg(f"llm={name}")).llm for name in expected}
    assert models["gpt35"].model == "gpt-3.5-turbo-0125"
    assert models["gpt4"].model == "gpt-4-0613"
    assert models["deepseek_v3"].model == "deepseek/deepseek-chat"
    assert models["deepseek_v3"].api_key_env == "DEEPSEEK_API_KEY"
    assert models["o1_mini"].model == "o1-mini"
    for name in ("llama3_8b", "llama3_70b", "chatglm3_6b"):
        assert models[name].api_base and models[name].model.startswith("openai/")


def test_self_consistency_schema(compose_cfg):
    spec = to_run_spec(compose_cfg("method=sc", "method.n=7"))
    assert isinstance(spec.method, SCConfig) and spec.method.n == 7 and spec.method.temperature == 0.7


@pytest.mark.parametrize("override, exc", [
    ("method.nonexistent=1", ConfigCompositionException),
    ("method.shots=many", ConfigCompositionException),
    ("run.concurrency=lots", ConfigCompositionException),
    ("method=nope", ConfigCompositionException),
    ("llm=nope", ConfigCompositionException),
    ("dataset.nonexistent=1", ConfigCompositionException),
])
def test_unknown_keys_options_and_wrong_types_fail_at_composition(compose_cfg, override, exc):
    with pytest.raises(exc) as info:
        compose_cfg(override)
    key = override.split("=")[0]
    assert key.split(".")[-1] in str(info.value) + str(info.value.__cause__)


@pytest.mark.parametrize("override, field", [
    ("run.concurrency=0", "run.concurrency"),
    ("llm.temperature=2.5", "llm.temperature"),
    ("llm.temperature=-0.1", "llm.temperature"),
    ("dataset.limit=-3", "dataset.limit"),
    ("method=sc method.temperature=9", "method.temperature"),
    ("method=sc method.n=0", "method.n"),
])
def test_out_of_range_values_name_the_field(compose_cfg, override, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        to_run_spec(compose_cfg(*override.split()))


def test_stage_backbone_by_name_and_by_hydra_group(compose_cfg):
    spec = to_run_spec(compose_cfg("+llm.stages.answer=gpt4"))
    assert spec.stages["answer"].model == "gpt-4-0613"
    assert spec.llm.model == "kgx-local/smollm2-135m-instruct"
    spec = to_run_spec(compose_cfg("+llm@llm.stages.answer=deepseek_v3"))
    assert spec.stages["answer"].model == "deepseek/deepseek-chat"
    assert spec.resolved()["llm_stages"]["answer"]["api_key_env"] == "DEEPSEEK_API_KEY"


def test_unknown_stage_backbone_lists_the_options(compose_cfg):
    with pytest.raises(ConfigError, match="gpt99.*options"):
        to_run_spec(compose_cfg("+llm.stages.answer=gpt99"))


def test_cfg_job_prints_the_whole_resolved_run(in_tmp):
    out = subprocess.run([sys.executable, "-m", "kgx", "--cfg", "job", "llm=gpt4o_mini"],
                         capture_output=True, text=True, env=kgx_env(), check=True).stdout
    for line in ("concurrency: 4", "name: lmp", "width: 3", "model: gpt-4o-mini", "api_key_env: OPENAI_API_KEY",
                 "backend: embedded", "tracking_uri: null", "cache_dir: .kgx_cache"):
        assert line in out
    assert not (in_tmp / "outputs" / "runs").exists()


def test_serial_backbones_cap_the_questions_in_flight(compose_cfg):
    assert to_run_spec(compose_cfg("run.concurrency=8")).workers == 1  # the local model
    assert to_run_spec(compose_cfg("llm=scripted", "run.concurrency=8")).workers == 8
    assert to_run_spec(compose_cfg("llm=scripted", "run.concurrency=8", "+llm.stages.answer=local")).workers == 1
