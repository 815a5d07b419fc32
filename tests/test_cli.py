"""``python -m kgx`` as a user runs it: bad input stops before any work; Ctrl-C keeps work."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.helpers import kgx_env
from tests.inprocess import kgx_main


def kgx(cwd: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgx", *args], cwd=cwd, capture_output=True, text=True, env=kgx_env(), timeout=300, **kw
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["method.nonexistent=1"], "kgx: error: method.nonexistent: lmp has no setting 'nonexistent'"),
        (["run.concurrency=0"], "run.concurrency=0: must be at least 1"),
        (["llm=deepseek_v3"], "set the environment variable DEEPSEEK_API_KEY"),
        (["dataset.path=missing/cwq.jsonl"], "missing/cwq.jsonl"),
        (
            ["llm=scripted", "kg=sparql", "kg.endpoint=http://127.0.0.1:9/sparql", "kg.retries=0"],
            "SPARQL endpoint http://127.0.0.1:9/sparql unreachable after 1 tries",
        ),
    ],
)
def test_bad_input_fails_before_any_work(tmp_path, args, message):
    done = kgx_main(tmp_path, *args)
    assert done.returncode != 0
    assert message in done.stderr + done.stdout
    assert not (tmp_path / "outputs" / "runs").exists() and not (tmp_path / "mlruns").exists()


def test_a_config_error_exits_the_process_non_zero_naming_the_key(tmp_path):
    """The cases above run in this process; one goes through the interpreter as a user's does."""
    done = kgx(tmp_path, "method.nonexistent=1")
    assert done.returncode == 1
    assert "kgx: error: method.nonexistent: lmp has no setting 'nonexistent' (its settings: name, " in done.stderr
    assert not (tmp_path / "outputs").exists() and not (tmp_path / "mlruns").exists()


@pytest.mark.slow
def test_scripted_run_prints_its_figures(tmp_path):
    done = kgx_main(tmp_path, "method=cot", "llm=scripted", "dataset.limit=4", "run.progress=false")
    assert done.returncode == 0, done.stderr
    assert "over 4 questions (0 errors)" in done.stdout and "4 answered, 0 resumed, 4 billed" in done.stdout


@pytest.mark.slow
def test_ctrl_c_keeps_finished_questions_and_the_rerun_completes_them(tmp_path):
    args = [
        "method=cot",
        "llm=scripted",
        "llm.latency_s=0.3",
        "llm.cache=false",
        "run.concurrency=2",
        "dataset.limit=30",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgx", *args],
        cwd=tmp_path,
        env=kgx_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = None
    deadline = time.time() + 120
    while time.time() < deadline:
        found = list((tmp_path / "outputs" / "runs").glob("*/predictions.jsonl"))
        if found and len(found[0].read_text().splitlines()) >= 4:
            log = found[0]
            break
        time.sleep(0.1)
    assert log is not None, "no prediction appeared"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    kept = [json.loads(x) for x in log.read_text().splitlines()]
    assert 4 <= len(kept) < 30
    run_id = (log.parent / "mlflow_run_id").read_text()
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    assert client.get_run(run_id).info.status == "KILLED"

    done = kgx_main(tmp_path, *args, "run.progress=false")
    assert done.returncode == 0, done.stderr
    assert f"{30 - len(kept)} answered, {len(kept)} resumed" in done.stdout
    ids = [json.loads(x)["id"] for x in log.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 30
    assert client.get_run(run_id).info.status == "FINISHED"


def test_kgx_composes_from_any_directory_with_the_users_sweeps_and_config_dir(tmp_path):
    """From a directory that is not the repository: kgx's own sweeps, the user's ./sweeps (searched
    first) and a config group of the user's added with --config-dir all compose."""
    own = kgx(tmp_path, "+sweeps=baselines_smoke", "--cfg", "hydra")
    assert own.returncode == 0, own.stderr
    assert "method: io,cot" in own.stdout.replace("'", "")
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "mine.yaml").write_text(
        "# @package _global_\nhydra:\n  sweeper:\n    params:\n      method: io,sc\n"
    )
    mine = kgx(tmp_path, "+sweeps=mine", "--cfg", "hydra")
    assert mine.returncode == 0, mine.stderr
    assert "method: io,sc" in mine.stdout.replace("'", "")
    (tmp_path / "extra" / "llm").mkdir(parents=True)
    (tmp_path / "extra" / "llm" / "mine.yaml").write_text("name: mine\nmodel: kgx-scripted/overlap\n")
    job = kgx(tmp_path, "--config-dir", str(tmp_path / "extra"), "llm=mine", "--cfg", "job")
    assert job.returncode == 0, job.stderr
    assert "name: mine\n  model: kgx-scripted/overlap" in job.stdout
    listed = kgx(tmp_path, "--help")
    assert "baselines_smoke" in listed.stdout and "mine" in listed.stdout
