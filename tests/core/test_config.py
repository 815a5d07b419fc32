from __future__ import annotations

import copy

import pytest
from hydra._internal.core_plugins import file_config_source, importlib_resources_config_source
from hydra.core.config_store import ConfigStore
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from kgx.core.config import ConfigError
from kgx.core.paths import CONF_DIR
from kgx.methods.lmp import LMPConfig
from kgx.methods.sc import SCConfig
from kgx.run import compose
from kgx.run.compose import ParsedOnce
from kgx.run.spec import to_run_spec
from tests.inprocess import compose_fresh, kgx_main

LLM_OPTIONS = sorted(p.stem for p in (CONF_DIR / "llm").glob("*.yaml"))


def test_defaults_compose_to_the_local_lmp_run(compose_cfg):
    spec = to_run_spec(compose_cfg())
    # its 16 demo questions reach 2 hops: the main job walks 2 (conf/paper_backbone/lmp_demo_local.yaml)
    assert isinstance(spec.method, LMPConfig) and (spec.method.width, spec.method.depth) == (3, 2)
    assert spec.settings.source.startswith("not published: the main job's demo questions reach 2 hops")
    assert spec.llm.model == "kgx-local/smollm2-135m-instruct"
    assert spec.dataset.name == "demo" and spec.kg.name == "demo"
    assert spec.run.concurrency >= 1 and spec.stages == {}


def test_every_papers_backbone_is_an_llm_option_that_composes(compose_cfg):
    expected = {
        "local",
        "scripted",
        "gpt35",
        "gpt4",
        "gpt4o_mini",
        "deepseek_v3",
        "o1_mini",
        "llama3_8b",
        "llama3_70b",
        "chatglm3_6b",
        "ollama",
        "vllm",
    }
    assert expected <= set(LLM_OPTIONS)
    # cot: it has no temperature of its own, so o1-mini's only one (1) is the one sent.
    models = {name: to_run_spec(compose_cfg(f"llm={name}", "method=cot")).llm for name in expected}
    assert models["gpt35"].model == "gpt-3.5-turbo-0125"
    assert models["gpt4"].model == "gpt-4-0613"
    assert models["deepseek_v3"].model == "deepseek/deepseek-chat"
    assert models["deepseek_v3"].api_key_env == "DEEPSEEK_API_KEY"
    assert models["o1_mini"].model == "o1-mini-2024-09-12"
    for name in ("llama3_8b", "llama3_70b", "chatglm3_6b"):
        assert models[name].api_base and models[name].model.startswith("openai/")


def test_self_consistency_schema(compose_cfg):
    spec = to_run_spec(compose_cfg("method=sc", "method.n=7"))
    assert isinstance(spec.method, SCConfig) and spec.method.n == 7 and spec.method.temperature == 0.7


@pytest.mark.parametrize(
    "override, exc",
    [
        ("method.nonexistent=1", ConfigCompositionException),
        ("method.shots=many", ConfigCompositionException),
        ("run.concurrency=lots", ConfigCompositionException),
        ("method=nope", ConfigCompositionException),
        ("llm=nope", ConfigCompositionException),
        ("dataset.nonexistent=1", ConfigCompositionException),
    ],
)
def test_unknown_keys_options_and_wrong_types_fail_at_composition(compose_cfg, override, exc):
    with pytest.raises(exc) as info:
        compose_cfg(override)
    key = override.split("=")[0]
    assert key.split(".")[-1] in str(info.value) + str(info.value.__cause__)


@pytest.mark.parametrize(
    "override, field",
    [
        ("run.concurrency=0", "run.concurrency"),
        ("llm.temperature=2.5", "llm.temperature"),
        ("llm.temperature=-0.1", "llm.temperature"),
        ("dataset.limit=-3", "dataset.limit"),
        ("method=sc method.temperature=9", "method.temperature"),
        ("method=sc method.n=0", "method.n"),
    ],
)
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
    done = kgx_main(in_tmp, "--cfg", "job", "llm=gpt4o_mini")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for line in (
        "concurrency: 4",
        "name: lmp",
        "width: 3",
        "model: gpt-4o-mini",
        "api_key_env: OPENAI_API_KEY",
        "backend: embedded",
        "tracking_uri: null",
        "cache_dir: .kgx_cache",
    ):
        assert line in out
    assert not (in_tmp / "outputs" / "runs").exists()


def test_serial_backbones_cap_the_questions_in_flight(compose_cfg):
    assert to_run_spec(compose_cfg("run.concurrency=8")).workers == 1  # the local model
    assert to_run_spec(compose_cfg("llm=scripted", "run.concurrency=8")).workers == 8
    assert to_run_spec(compose_cfg("llm=scripted", "run.concurrency=8", "+llm.stages.answer=local")).workers == 1


# --------------------------------------------------------------------------- registered once


@pytest.mark.parametrize(
    "overrides, field, named",
    [
        (["method=tog", "+method.widht=5"], "method.widht", "width"),
        (["method=lmp", "+method.dpeth=2"], "method.dpeth", "depth"),
        (["method=cgpe", "+llm.stages.anwser=gpt4"], "llm.stages.anwser", "clue_extraction, path_exploration, answer"),
        (["method=io", "+llm.stages.sampling=gpt4"], "llm.stages.sampling", "its stages: answer"),
    ],
)
def test_misspelt_settings_and_stages_are_errors_naming_the_valid_ones(compose_cfg, overrides, field, named):
    with pytest.raises(ConfigError) as info:
        to_run_spec(compose_cfg(*overrides))
    assert str(info.value).startswith(field) and named in str(info.value)


def test_every_method_default_comes_from_its_schema_alone(compose_cfg):
    """conf/method/*.yaml hold comments and overrides only: composing a method gives its schema."""
    import dataclasses

    from kgx.methods import METHODS

    for name, method in METHODS.items():
        composed = to_run_spec(compose_cfg(f"method={name}", "llm=scripted")).method  # no setting of the main job's
        assert composed == method.config(), name
        assert dataclasses.fields(method.config)[0].name == "name" and method.stages


def test_execution_settings_leave_the_run_identity_alone(compose_cfg):
    from kgx.run.lifecycle import config_hash

    base = config_hash(to_run_spec(compose_cfg("llm=scripted")))
    same = [
        "llm.rpm=60",
        "llm.timeout_s=5",
        "llm.max_retries=1",
        "kg.store=elsewhere",
        "run.concurrency=2",
        "+llm.stages.answer=scripted",
        "llm.backoff_s=0.1",
    ]
    assert config_hash(to_run_spec(compose_cfg("llm=scripted", *same[:-2], same[-1]))) == base
    different = ["llm.temperature=0.3", "method.width=2", "run.seed=1", "kg.max_candidates=5", "llm.max_tokens=64"]
    assert len({base, *(config_hash(to_run_spec(compose_cfg("llm=scripted", d))) for d in different)}) == 6


def test_the_oracles_behaviour_version_enters_oracle_runs_only(compose_cfg, monkeypatch):
    """Finished oracle runs from before the chain-order oracle are redone, not skipped: the oracle's
    behaviour version is in their identity. No other run's hash moves: a scripted run keeps the hash
    it had before versions existed (pinned; a new result field in its config legitimately moves it)."""
    from kgx.core import run_identity
    from kgx.run.lifecycle import config_hash

    scripted = to_run_spec(compose_cfg("llm=scripted"))
    assert "behaviours" not in scripted.identity() and config_hash(scripted) == "e9940c01a329"
    oracle = to_run_spec(compose_cfg("llm=oracle", "method=tog"))
    staged = to_run_spec(compose_cfg("method=tog", "+llm.stages.answer=oracle"))
    assert oracle.identity()["behaviours"] == staged.identity()["behaviours"] == {"kgx-oracle/": 4}
    before = {config_hash(oracle), config_hash(staged)}
    monkeypatch.setattr(run_identity, "BEHAVIOURS", {"kgx-oracle/": 5})
    assert not before & {config_hash(oracle), config_hash(staged)}
    monkeypatch.setattr(run_identity, "BEHAVIOURS", {})
    # the hash it had before versions existed (ToG's settings added since keep their defaults: left out)
    assert config_hash(oracle) == "8b50a424852b"


def test_a_setting_added_later_keeps_the_hash_of_configs_at_its_default(compose_cfg):
    """kgx.core.run_identity.added: ToG's score_per came after runs were recorded."""
    from kgx.run.lifecycle import config_hash

    plain = to_run_spec(compose_cfg("method=tog", "llm=scripted"))
    assert (
        "score_per" not in plain.identity()["method"] and config_hash(plain) == "60c94ab55429"
    )  # as before score_per existed
    released = to_run_spec(compose_cfg("method=tog", "llm=scripted", "method.score_per=relation"))
    assert released.identity()["method"]["score_per"] == "relation" and config_hash(released) != config_hash(plain)


def test_a_new_method_needs_only_its_own_file(in_tmp, compose_cfg, monkeypatch):
    """Registering a schema and a function is enough for ``method=<name>`` to compose and run."""
    from dataclasses import dataclass

    from kgx import methods
    from kgx.core.config import MethodConfig
    from kgx.core.types import Prediction
    from kgx.methods.answers import braces
    from kgx.methods.base import register as register_method
    from kgx.run.compose import register_schemas
    from kgx.run.execute import execute

    @dataclass
    class EchoConfig(MethodConfig):
        name: str = "echo"
        times: int = 2

    def echo(question, ctx):
        return Prediction(answer=braces([question.text] * ctx.params.times), answers=[question.text])

    monkeypatch.setitem(methods.METHODS, "echo", None)
    register_method("echo", config=EchoConfig, stages=())(echo)
    register_schemas()
    spec = to_run_spec(
        compose_cfg("method=echo", "method.times=3", "llm=scripted", "dataset.limit=2", "run.progress=false")
    )
    assert spec.method == EchoConfig(times=3)
    outcome = execute(spec, in_tmp)
    assert outcome.status == "FINISHED" and outcome.records[0].prediction.answer.count("?") == 3
    with pytest.raises(ConfigError, match="echo has no such setting"):
        to_run_spec(compose_cfg("method=echo", "+method.tmies=3"))


def test_a_compose_shares_the_config_store_and_parses_yaml_once_and_composes_the_same(compose_cfg, monkeypatch):
    """kgx.run.compose keeps Hydra from deep-copying every registered schema and from parsing
    the same YAML again at each compose."""
    overrides = ("method=tog", "dataset=metaqa_2hop", "llm=scripted", "method.width=2")
    store = ConfigStore.instance()
    assert copy.deepcopy(store) is store
    assert file_config_source.OmegaConf is importlib_resources_config_source.OmegaConf is ParsedOnce
    shared = OmegaConf.to_container(compose_fresh(*overrides))
    texts = set(compose._PARSED)
    assert OmegaConf.to_container(compose_fresh(*overrides)) == shared and set(compose._PARSED) == texts
    assert any("# @package hydra" in text and "subdir:" in text for text in texts)  # Hydra's own (pkg://hydra.conf)
    monkeypatch.delattr(ConfigStore, "__deepcopy__")  # Hydra's own copying and parsing
    monkeypatch.setattr(file_config_source, "OmegaConf", OmegaConf)
    monkeypatch.setattr(importlib_resources_config_source, "OmegaConf", OmegaConf)
    assert copy.deepcopy(store) is not store
    assert OmegaConf.to_container(compose_fresh(*overrides)) == shared
    assert shared["method"]["name"] == "tog" and shared["method"]["width"] == 2


def test_a_config_file_that_is_not_yaml_is_one_line_naming_it(tmp_path):
    (tmp_path / "conf" / "llm").mkdir(parents=True)
    broken = tmp_path / "conf" / "llm" / "broken.yaml"
    broken.write_text("model: scripted\nmax_tokens: [64\n")
    done = kgx_main(tmp_path, "--config-dir", str(tmp_path / "conf"), "llm=broken")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        done.stderr.splitlines()[0]
        == f"kgx: error: {broken}:3:1: not valid YAML: expected ',' or ']', but got '<stream end>'"
    )
