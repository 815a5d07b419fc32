"""Shared fixtures: every test runs offline, in a temp directory, with kgx's own providers."""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path

import pytest
from hydra.core.global_hydra import GlobalHydra
from mlflow.store.db import utils as mlflow_db
from omegaconf import DictConfig

from kgx.core.collector import tune
from kgx.methods import METHODS
from kgx.run.compose import register_schemas
from tests.inprocess import compose_fresh

tune()  # each worker holds kgx's whole import heap, as a run does (kgx.core.collector)

# MLflow finds the newest schema revision by reading all its migration scripts whenever it opens a
# store (~45 ms of CPU), and each test's run opens a new one: the installed MLflow's answer holds for
# the whole session.
mlflow_db._get_latest_schema_revision = functools.cache(mlflow_db._get_latest_schema_revision)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker per core and one more, at most four. Tests wait on subprocesses,
    servers and sleeps part of their time: on 2 cores, 3 workers kept both busy 92% of the suite's
    wall time (user+sys over wall; pytest 1,008 s against 1,094 s with 2 workers). Each worker holds a migrated MLflow store and
    may start a sweep of its own; past four, memory and ports matter more than cores."""
    return max(1, min((os.cpu_count() or 1) + 1, 4))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on the real local model is slow whatever marks its file gives it. Files holding slow
    tests run first: the workers take files in this order, and a long file taken last would
    leave one worker running it alone."""
    for item in items:
        if item.get_closest_marker("local_model") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: each file keeps its order


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(scope="session")
def _mlflow_template(tmp_path_factory: pytest.TempPathFactory):
    """One migrated empty MLflow database per session, which every new default store of kgx (this
    process and ``python -m kgx`` subprocesses, through the environment) starts as a copy of. The
    xdist workers of a session share it: the first to need it makes it (an MLflow client and its
    migrations, seconds of CPU) while the others wait, and it appears whole (made aside, renamed)."""
    from kgx.core.locks import waiting
    from kgx.track.tracker import TEMPLATE_ENV
    from tests.helpers import migrated_mlflow_db

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the session's own folder
    db = shared / "mlflow-template" / "mlflow.db"
    with waiting(shared / "mlflow-template.lock"):
        if not db.exists():
            made = migrated_mlflow_db(tmp_path_factory.mktemp("mlflow-template"))
            db.parent.mkdir(exist_ok=True)
            made.replace(db)
    before = os.environ.get(TEMPLATE_ENV)
    os.environ[TEMPLATE_ENV] = str(db)
    yield db
    if before is None:
        os.environ.pop(TEMPLATE_ENV, None)
    else:
        os.environ[TEMPLATE_ENV] = before


@pytest.fixture(autouse=True)
def _fast_mlflow_store(request: pytest.FixtureRequest) -> None:
    """A test with a temp directory may start a run there: give it the template. Tests without one
    (most unit tests) do not pay for making it."""
    if {"tmp_path", "tmp_path_factory"} & set(request.fixturenames):
        request.getfixturevalue("_mlflow_template")


@pytest.fixture
def no_mlflow_template(_fast_mlflow_store, monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test of MLflow creating a new store itself (migrations included): no template."""
    from kgx.track.tracker import TEMPLATE_ENV

    monkeypatch.delenv(TEMPLATE_ENV, raising=False)


_COMPOSED: dict[tuple, DictConfig] = {}


@pytest.fixture
def compose_cfg():
    """``compose_fresh``, with a copy of an earlier config where a test of this worker composed the
    same overrides with the same methods registered: a fifth of the quick tier's 565 composes
    repeat one, at about 0.2 s of CPU each. A copy's ``${kgx.token:}`` is drawn anew, as the
    first config handed out is never resolved."""
    register_schemas()

    def _compose(*overrides: str) -> DictConfig:
        key = (overrides, tuple((name, getattr(found, "config", None)) for name, found in METHODS.items()))
        if key not in _COMPOSED:
            _COMPOSED[key] = compose_fresh(*overrides)
        return copy.deepcopy(_COMPOSED[key])

    yield _compose
    GlobalHydra.instance().clear()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def run(compose_cfg, in_tmp):
    """``run(*overrides)``: a whole run of CoT on the scripted backbone in the temp directory."""
    from kgx.run.execute import execute
    from kgx.run.spec import to_run_spec

    def _run(*overrides: str):
        spec = to_run_spec(compose_cfg("method=cot", "llm=scripted", "run.progress=false", *overrides))
        return execute(spec, in_tmp)

    return _run


@pytest.fixture
def pilot_rounds(monkeypatch) -> list[list[str]]:
    """The question ids of every pilot round, in order, as the estimate hands them to a run."""
    from kgx.run import execute as run

    rounds, real = [], run.execute

    def spy(spec, launch_dir, *args, **kwargs):
        rounds.append(list(spec.dataset.ids))
        return real(spec, launch_dir, *args, **kwargs)

    monkeypatch.setattr(run, "execute", spy)
    return rounds


@pytest.fixture(scope="module")
def films_kb(tmp_path_factory):
    """The six-film MetaQA-shaped KB of tests/films.py, in a folder of its own."""
    from tests.films import write_kb

    return write_kb(tmp_path_factory.mktemp("films"))


@pytest.fixture(scope="module")
def films_kg(films_kb):
    """That KB as a KG."""
    from kgx.kg import open_kg
    from tests.films import films_config

    return open_kg(films_config(films_kb), films_kb.parent / "cache")
