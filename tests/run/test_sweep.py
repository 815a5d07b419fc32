"""Sweeps as a user runs them: one parent run, child runs, skipping finished jobs, failures."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.helpers import REPO, TINY_SWEEP, kgx_env
from tests.inprocess import Done, kgx_main

SWEEP = ("-m", "+sweeps=tiny", "llm=scripted", "run.progress=false")


def sweep(cwd: Path, *args: str) -> Done:
    """The tiny sweep with Hydra's basic launcher (its jobs one after another), in this process."""
    return kgx_main(cwd, *SWEEP, *args)


def sweep_process(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The tiny sweep as its own process: for launchers that start worker processes of their own."""
    command = [sys.executable, "-m", "kgx", *SWEEP, *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=kgx_env(), timeout=600)


def runs(cwd: Path):
    client = MlflowClient(f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("kgx")
    return client.search_runs([experiment.experiment_id], max_results=1000)


def sweep_table(cwd: Path, parent_id: str) -> dict:
    """The sweep's figures per configuration, as its parent run holds them."""
    client = MlflowClient(f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}")
    return json.loads(Path(client.download_artifacts(parent_id, "sweep_table.json", str(cwd))).read_text())


@pytest.mark.slow
def test_parallel_sweep_has_one_parent_and_reruns_nothing(tmp_path):
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "tiny.yaml").write_text(TINY_SWEEP)
    done = sweep_process(tmp_path, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    assert done.returncode == 0, done.stderr
    all_runs = runs(tmp_path)
    parents = [r for r in all_runs if r.data.tags.get("sweep") == "tiny"]
    assert len(parents) == 1
    parent = parents[0]
    children = [r for r in all_runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == 4 and {r.info.status for r in children} == {"FINISHED"}
    assert parent.info.status == "FINISHED" and parent.data.tags["children_finished"] == "4"
    assert {(r.data.params["method.name"], r.data.params["run.seed"]) for r in children} == {
        ("io", "0"),
        ("io", "1"),
        ("cot", "0"),
        ("cot", "1"),
    }
    # Named by what they ran (method, dataset, backbone, KG), then by what else varies; the job in a tag.
    assert {(r.info.run_name, r.data.tags["job"]) for r in children} == {
        ("io · demo · scripted · demo · seed=0", "method=io seed=0"),
        ("io · demo · scripted · demo · seed=1", "method=io seed=1"),
        ("cot · demo · scripted · demo · seed=0", "method=cot seed=0"),
        ("cot · demo · scripted · demo · seed=1", "method=cot seed=1"),
    }
    # The parent's figures are the sweep's mean; every configuration's are in its table artifact.
    means = {}
    for method in ("io", "cot"):
        replicates = [r.data.metrics["hits1"] for r in children if r.data.params["method.name"] == method]
        means[method] = sum(replicates) / 2
    assert parent.data.metrics["hits1"] == pytest.approx(sum(means.values()) / 2, abs=0.01)
    assert not [m for m in parent.data.metrics if "." in m and not m.startswith("failure.")]  # no per-cell metric
    named, run_id = re.fullmatch(r"(.+) \((\w{32})\)", parent.data.tags["best_child"]).groups()
    [best] = [r for r in children if r.info.run_id == run_id]
    assert best.info.run_name == named and best.data.metrics["hits1"] == max(r.data.metrics["hits1"] for r in children)
    assert means[parent.data.tags["best"]] == max(means.values())
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    table = json.loads(
        Path(client.download_artifacts(parent.info.run_id, "sweep_table.json", str(tmp_path))).read_text()
    )
    assert table["io"]["hits1"] == pytest.approx(means["io"]) and table["io"]["runs"] == 2
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    drawn = {a.path for a in client.list_artifacts(parent.info.run_id, "figures")}
    assert {"figures/hits1_vs_total_tokens_per_q.png", "figures/hits1_vs_total_tokens_per_q.html"} <= drawn
    assert "| configuration | runs | hits1 |" in parent.data.tags["mlflow.note.content"]
    assert "| configuration | runs | hits1 |" in done.stdout

    # Rerun one job after another: which launcher ran a finished job does not matter.
    again = sweep(tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already finished") == 4 and "billed" not in again.stdout
    assert len(runs(tmp_path)) == len(all_runs)  # no new child, the same parent


@pytest.mark.slow
def test_a_crashed_job_is_recorded_and_only_it_runs_again(tmp_path):
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "tiny.yaml").write_text(
        TINY_SWEEP.replace("run.seed: 0,1", "dataset.path: null,missing.jsonl")
    )
    # Past the sweep's pre-flight, which would stop it before any job (tests/run/test_sweep_preflight.py).
    done = sweep(tmp_path, "method=cot", "--no-preflight")
    assert done.returncode != 0 and "1 sweep jobs failed" in done.stderr, done.stderr
    assert "failed: MissingFile" in done.stderr
    parent = next(r for r in runs(tmp_path) if r.data.tags.get("sweep") == "tiny")
    assert parent.info.status == "FAILED" and parent.data.tags["children_failed"] == "1"
    assert "missing.jsonl" in parent.data.tags["failed_jobs"]

    again = sweep(tmp_path, "method=cot", "--no-preflight")
    assert again.stdout.count("already finished") == 1 and "failed: MissingFile" in again.stderr


@pytest.mark.slow
def test_a_job_whose_run_had_errors_is_failed_and_runs_again(tmp_path):
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "tiny.yaml").write_text(TINY_SWEEP.replace("run.seed: 0,1", "llm.failure_rate: 0.0,0.7"))
    # Failures are drawn per (prompt, seed, attempt, invocation): with run.seed=22 the pre-flight
    # request of both invocations passes, so the errors are the questions' own.
    args = (
        "method=cot",
        "llm.max_retries=0",
        "llm.backoff_s=0",
        "llm.cache=false",
        "run.max_consecutive_errors=0",
        "run.seed=22",
    )
    done = sweep(tmp_path, *args)
    assert done.returncode != 0 and "questions ended in errors" in done.stderr, done.stderr
    children = [r for r in runs(tmp_path) if r.data.tags.get("mlflow.parentRunId")]
    assert sorted(r.info.status for r in children) == ["FAILED", "FINISHED"]
    failed = next(r for r in children if r.info.status == "FAILED")
    assert failed.data.tags["result"] == "partial" and failed.data.metrics["errors"] > 0

    again = sweep(tmp_path, *args)
    assert again.stdout.count("already finished") == 1  # the job with errors runs again
    rerun = [r for r in runs(tmp_path) if r.data.tags.get("mlflow.parentRunId")]
    assert len(rerun) == 2  # the same child, resumed
    assert next(r for r in rerun if r.info.run_id == failed.info.run_id).data.metrics["invocations"] == 2


def test_a_bad_value_in_a_sweep_stops_it_before_any_job(tmp_path):
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "tiny.yaml").write_text(TINY_SWEEP)
    done = sweep(tmp_path, "llm.temperature=0.5,7")
    assert done.returncode != 0
    assert "llm.temperature=7.0: a temperature must lie in [0, 2]" in done.stderr
    assert not (tmp_path / "outputs" / "runs").exists()
    done = sweep(tmp_path, "method=io,nope")
    assert done.returncode != 0 and "nope" in done.stderr
    assert not (tmp_path / "outputs" / "runs").exists()


def test_the_repository_sweeps_compose():
    """In-process: what ``python -m kgx +sweeps=NAME --cfg hydra`` composes (the search path
    plugin finds kgx's sweeps for Hydra's compose API as for the command line)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas

    register_schemas()
    names = sorted(path.stem for path in (REPO / "sweeps").glob("*.yaml"))
    assert len(names) >= 19
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        for name in names:
            cfg = compose(config_name="config", overrides=[f"+sweeps={name}"], return_hydra_config=True)
            assert cfg.hydra.sweeper.params, name
    GlobalHydra.instance().clear()


def sweep_jobs(*overrides: str) -> list[tuple[list[str], dict[str, str]]]:
    """Every job of a sweep, composed in process as the sweep's callback composes it: its
    overrides and the params its run records."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.spec import to_run_spec
    from kgx.run.sweep import job_overrides
    from kgx.track.tracker import run_params

    register_schemas()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        sweep_config = compose(config_name="config", overrides=list(overrides), return_hydra_config=True)
        jobs = [(o, to_run_spec(compose(config_name="config", overrides=o), o)) for o in job_overrides(sweep_config)]
    GlobalHydra.instance().clear()
    return [(o, run_params(spec.resolved())) for o, spec in jobs]


def test_the_lmp_noise_sweep_drops_the_same_share_of_names_as_of_relations():
    """LMP Table 3's noise: every job drops the share of names it drops of relations (an
    interpolation among the sweeper's params would resolve against the base config: 0.0 in all)."""
    jobs = sweep_jobs("+sweeps=lmp_noise")
    shares = [(job["kg.noise.drop_relations"], job["kg.noise.drop_names"]) for _, job in jobs]
    assert shares == [(s, s) for s in ("0.0", "0.2", "0.4", "0.6", "0.8")]
    assert {job["method.name"] for _, job in jobs} == {"lmp"}
    apart = sweep_jobs("+sweeps=lmp_noise", "kg.noise.drop_names=0.1")  # the command line still sets it apart
    assert {job["kg.noise.drop_names"] for _, job in apart} == {"0.1"}


@pytest.mark.parametrize("name", ["knowpath_cost", "tog_cost"])
def test_the_cost_sweeps_run_each_method_at_its_published_settings_for_the_dataset(name):
    """Each job of these sweeps gets its method's published settings for CWQ
    (conf/paper_settings/<method>_cwq.yaml) where the paper has some, not its defaults."""
    import yaml

    from kgx.core.paths import CONF_DIR

    checked = set()
    for _, job in sweep_jobs(f"+sweeps={name}", "dataset=cwq"):
        path = CONF_DIR / "paper_settings" / f"{job['method.name']}_cwq.yaml"
        if path.is_file():
            written = yaml.safe_load(path.read_text())["method"]
            assert {k: job[f"method.{k}"] for k in written} == {k: str(v) for k, v in written.items()}, path.name
            checked.add(job["method.name"])
    assert checked >= {"knowpath", "lmp", "pog", "structgpt"}


def test_methods_x_datasets_covers_every_method():
    import yaml

    from kgx.core.paths import CONF_DIR

    params = yaml.safe_load((REPO / "sweeps" / "methods_x_datasets.yaml").read_text())["hydra"]["sweeper"]["params"]
    assert sorted(params["method"].split(",")) == sorted(p.stem for p in (CONF_DIR / "method").glob("*.yaml"))


def test_no_sweep_interpolates_in_its_sweeper_params():
    """Hydra resolves ``${...}`` in hydra.sweeper.params against the base config, not the job's:
    a sweep ties one key to another in its job config (as lmp_noise does), never there."""
    import yaml

    files = [*sorted((REPO / "sweeps").glob("*.yaml")), *sorted((REPO / "conf" / "paper").glob("*.yaml"))]
    assert len(files) >= 30
    for path in files:
        params = ((yaml.safe_load(path.read_text()).get("hydra") or {}).get("sweeper") or {}).get("params") or {}
        assert not {k: v for k, v in params.items() if "${" in str(v)}, path.name


@pytest.mark.slow
def test_submitit_local_launcher_runs_the_jobs_as_children(tmp_path):
    (tmp_path / "sweeps").mkdir()
    # One job: each is a child process of its own, which pays kgx's imports again.
    one_job = TINY_SWEEP.replace("run.seed: 0,1", "run.seed: 0").replace("method: io,cot", "method: io")
    (tmp_path / "sweeps" / "tiny.yaml").write_text(one_job)
    done = sweep_process(tmp_path, "hydra/launcher=submitit_local")
    assert done.returncode == 0, done.stderr
    all_runs = runs(tmp_path)
    parent = next(r for r in all_runs if r.data.tags.get("sweep") == "tiny")
    children = [r for r in all_runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == 1 and parent.data.tags["children_finished"] == "1"
    assert children[0].info.status == "FINISHED" and children[0].data.metrics["n_questions"] > 0


def test_slurm_launcher_config_composes():
    done = kgx_main(REPO, "hydra/launcher=slurm", "hydra.launcher.partition=batch", "--cfg", "hydra")
    assert done.returncode == 0, done.stderr
    for line in ("SlurmLauncher", "partition: batch", "timeout_min: 240", "cpus_per_task: 4"):
        assert line in done.stdout


@pytest.mark.slow
def test_an_ad_hoc_grid_gets_its_parent_and_reports_a_config_finished_before_it(tmp_path):
    def kgx(*args: str) -> Done:
        return kgx_main(tmp_path, *args, "llm=scripted", "dataset.limit=2", "run.progress=false")

    single = kgx("method=io")
    assert single.returncode == 0, single.stderr
    done = kgx("-m", "method=io,cot")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("already finished") == 1
    parent = next(r for r in runs(tmp_path) if r.data.tags.get("sweep"))
    # Named by the key it sweeps, made unique by its key; found by its tag.
    assert parent.data.tags["sweep"] == "method" and re.fullmatch(r"method [0-9a-f]{6}", parent.info.run_name)
    assert f"sweep {parent.info.run_name}: 2 finished, 0 failed" in done.stdout
    # The io run finished before the sweep: skipped, and still in the sweep's table with its figures.
    io = next(r for r in runs(tmp_path) if r.data.params.get("method.name") == "io")
    assert io.data.tags[f"reused_by.{parent.info.run_id}"] == "method=io"
    assert parent.data.tags["children_finished"] == "2"
    table = sweep_table(tmp_path, parent.info.run_id)
    assert table["io"]["runs"] == 1 and table["io"]["hits1"] == io.data.metrics["hits1"]
    assert "| io | 1 |" in done.stdout


@pytest.mark.slow
def test_a_sweep_named_on_the_command_line_is_logged_and_reported_by_that_name(tmp_path):
    from kgx.report.runs import load_runs

    name = "table 1, second try"
    done = kgx_main(tmp_path, "-m", "method=io,cot", "llm=scripted", "dataset.limit=2", f"run.sweep_name='{name}'")
    assert done.returncode == 0, done.stderr
    assert f"sweep {name}: 2 finished, 0 failed" in done.stdout
    (parent,) = [r for r in runs(tmp_path) if r.data.tags.get("sweep")]
    assert parent.info.run_name == parent.data.tags["sweep"] == name
    frame = load_runs(uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}", parent=name)
    assert sorted(frame["params.method.name"]) == ["cot", "io"]


def test_job_names_and_sweep_names_say_what_varies():
    from omegaconf import OmegaConf

    from kgx.run.sweep import display_name, job_name, sweep_name, swept_keys

    jobs = [["+sweeps=grid", f"method={m}", "dataset=cwq", f"run.seed={s}"] for m in ("lmp", "io") for s in (0, 1)]
    varying = swept_keys(jobs)
    assert varying == ["method", "run.seed"]
    assert job_name(jobs[1], varying) == "method=lmp seed=1"
    config = OmegaConf.create({"hydra": {"runtime": {"choices": {}}}, "run": {"sweep_name": None}})
    assert sweep_name(config, ["method", "dataset"]) == "method×dataset"
    assert display_name(config, "method×dataset", ["method", "dataset"], "3fa2c1d4") == "method×dataset 3fa2c1"
    config.hydra.runtime.choices["sweeps"] = "grid"
    assert sweep_name(config, varying) == "grid"
    assert display_name(config, "grid", varying, "3fa2c1d4") == "grid: method×seed 3fa2c1"
    config.run.sweep_name = "table 1, second try"
    assert (
        sweep_name(config, varying)
        == display_name(config, "table 1, second try", varying, "3fa2")
        == ("table 1, second try")
    )
