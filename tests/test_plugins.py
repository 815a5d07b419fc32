"""An outsider's package extends kgx without editing it: the example plugin of
docs/contributing/extending.md (a method, a dataset format, a KG backend, a report command and a
paper table, each declared as an entry point) is installed into a folder of its own and used
through kgx's own commands (kgx.core.registry)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from kgx.core.registry import Registry, RegistryError
from tests.helpers import REPO, kgx_env

PLUGIN = REPO / "docs" / "examples" / "kgx-hop"
DATA = PLUGIN / "kgx_hop" / "data"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    """The plugin installed with pip into a folder of its own (its own environment for kgx's
    entry points: kgx itself stays as it is), and the environment that sees both."""
    site = tmp_path_factory.mktemp("plugin-site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"] + ["--target", str(site), str(PLUGIN)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    env = kgx_env()
    env["PYTHONPATH"] = os.pathsep.join([str(site), env["PYTHONPATH"]])
    return env


def kgx(cwd: Path, env: dict[str, str], *args: str, module: str = "kgx") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_a_plugins_method_dataset_format_and_kg_backend_run_without_editing_kgx(installed, tmp_path):
    args = [
        "method=one_hop",
        "dataset=custom",
        "dataset.loader=qa_lines",
        f"dataset.path={DATA / 'capitals.txt'}",
        "kg=adjacency",
        f"kg.path={DATA / 'capitals.json'}",
        "llm=scripted",
        "run.progress=false",
    ]
    done = kgx(tmp_path, installed, *args)
    assert done.returncode == 0, done.stderr
    assert (
        "one_hop on custom with scripted: hits@1=100.0" in done.stdout and "over 2 questions (0 errors)" in done.stdout
    )
    (run,) = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}").search_runs(["1"])
    assert run.data.params["kg.backend"] == "adjacency" and run.data.params["dataset.loader"] == "qa_lines"
    assert run.data.metrics["llm_calls_per_q"] == 1.0

    report = kgx(tmp_path, installed, "hops", module="kgx.report")
    assert report.returncode == 0, report.stderr
    assert report.stdout == "one_hop\t100.0\t1.00\n"
    tables = kgx(tmp_path, installed, "paper", module="kgx.report")
    assert "hop_table1       One-hop (an example), Table 1:" in tables.stdout and "knowpath_table1" in tables.stdout
    shown = kgx(tmp_path, installed, "--info", "searchpath")
    assert shown.returncode == 0 and "kgx_hop/kgx_conf" in shown.stdout  # its paper's sweep: +paper=hop_table1

    helped = kgx(tmp_path, installed, "method=one_hopp")
    assert "did you mean one_hop?" in helped.stderr


def test_a_name_no_component_has_lists_the_closest_and_where_plugins_come_from():
    registry: Registry[int] = Registry("widget", "kgx.test_widgets")
    registry.register("spanner", 1, "here")
    with pytest.raises(RegistryError, match=r"widget 'spaner' is not registered; did you mean spanner\? "):
        registry.named("spaner")
    with pytest.raises(RegistryError, match="'kgx.test_widgets' entry point"):
        registry.named("hammer")


def test_a_name_registered_twice_by_different_components_names_both():
    registry: Registry[int] = Registry("widget", "kgx.test_widgets")
    registry.register("spanner", 1, "kgx_hop.one")
    registry.register("spanner", 1, "kgx_hop.one")  # the same component again: a module imported twice
    with pytest.raises(RegistryError, match=r"widget 'spanner' is registered twice: by kgx_hop.one and by other.mod"):
        registry.register("spanner", 2, "other.mod")
