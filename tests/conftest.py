"""Shared fixtures: every test runs offline, in a temp directory, with kgx's own providers."""
from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from kgx.config import CONF_DIR, register


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def compose_cfg():
    """Compose conf/ with overrides the way ``python -m kgx`` does."""
    register()

    def _compose(*overrides: str):
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            return compose(config_name="config", overrides=list(overrides))

    yield _compose
    GlobalHydra.instance().clear()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def run(compose_cfg, in_tmp):
    """``run(*overrides)``: a whole run of CoT on the scripted backbone in the temp directory."""
    from kgx.run import execute
    from kgx.spec import to_run_spec

    def _run(*overrides: str):
        spec = to_run_spec(compose_cfg("method=cot", "llm=scripted", "run.progress=false", *overrides))
        return execute(spec, in_tmp)

    return _run
