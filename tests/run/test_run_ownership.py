"""A run's figures are its own: an output folder belongs to one config, one config computes once at
a time across folders and processes (kgx.track.claims), and a run a killed process left RUNNING is
marked KILLED by the next command that finds it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from kgx.core.config import ConfigError
from kgx.track import claims
from tests.helpers import kgx_env, kgx_process
from tests.inprocess import kgx_main

QUICK = ("dataset.limit=3",)


def store(where: Path) -> MlflowClient:
    return MlflowClient(f"sqlite:///{where / 'mlruns' / 'mlflow.db'}")


def test_a_folder_of_another_config_stops_the_run_before_anything_is_written(run, in_tmp):
    io = run(*QUICK, "method=io", "run.output_dir=shared")
    before = {p.name: p.read_bytes() for p in (in_tmp / "shared").iterdir() if p.is_file()}
    with pytest.raises(ConfigError) as caught:
        run(*QUICK, "method=cot", "run.output_dir=shared")
    message = str(caught.value)
    assert "holds the results of another config: io on demo with scripted" in message
    assert "this run is cot on demo with scripted" in message and "method.name (io there, cot here)" in message
    assert "leave run.output_dir unset" in message
    assert {p.name: p.read_bytes() for p in (in_tmp / "shared").iterdir() if p.is_file()} == before
    client = store(in_tmp)
    (only,) = client.search_runs(["1"])  # no run of cot, and io's run keeps its own hash
    assert only.info.run_id == io.run_id and only.data.tags["method"] == "io"
    again = run(*QUICK, "method=cot")  # cot in its own folder is not "already finished"
    assert again.status == "FINISHED" and not again.skipped and again.computed == 3


def test_a_folder_from_before_manifests_is_judged_by_its_config(run, in_tmp):
    run(*QUICK, "method=io", "run.output_dir=old")
    (in_tmp / "old" / "manifest.json").unlink()
    with pytest.raises(ConfigError, match="another config: io on demo with scripted"):
        run(*QUICK, "method=cot", "run.output_dir=old")
    again = run(*QUICK, "method=io", "run.output_dir=old", "run.concurrency=2")  # execution settings differ
    assert again.skipped


def test_the_manifest_names_the_config_that_owns_the_folder(run, in_tmp):
    done = run(*QUICK, "method=io", "run.output_dir=mine")
    manifest = json.loads((in_tmp / "mine" / "manifest.json").read_text())
    tags = store(in_tmp).get_run(done.run_id).data.tags
    assert manifest == {"config_hash": tags["config_hash"], "run": "io on demo with scripted"}


def test_a_sweep_whose_configs_share_a_fixed_folder_is_refused_at_launch(in_tmp):
    result = kgx_main(in_tmp, "-m", "method=io,cot", "llm=scripted", "dataset.limit=2", "run.output_dir=fixed")
    assert result.returncode == 1
    assert "run.output_dir=" in result.stderr and "is shared by 2 different configs of this sweep" in result.stderr
    assert "(method=io, method=cot)" in result.stderr
    assert not (in_tmp / "fixed").exists() and not (in_tmp / "mlruns").exists()


def twins(where: Path, *extra: str) -> list[tuple[int, str, str]]:
    """The same config started twice at once in two folders: each process's exit code, stdout, stderr."""
    args = ["method=tog", "llm=scripted", "dataset.limit=24", "run.concurrency=1", "run.progress=false"]
    args += ["llm.latency_s=0.05", *extra]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "kgx", *args, f"run.output_dir={folder}"],
            cwd=where,
            env=kgx_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for folder in ("a", "b")
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs)]


def billed(stdout: str) -> int:
    """The calls an invocation billed, from its summary (0 for a skip)."""
    line = next((x for x in stdout.splitlines() if "billed LLM calls" in x), "")
    return int(line.rsplit(",", 1)[1].split()[0]) if line else 0


def check_twins(done: list[tuple[int, str, str]]) -> None:
    """One computed, the other waited (saying for whom) and was skipped: 1.0x the calls of one run."""
    assert [code for code, _, _ in done] == [0, 0], done
    calls = sorted(billed(out) for _, out, _ in done)
    assert calls[0] == 0 and calls[1] > 24, calls
    (waited,) = [err for _, _, err in done if "is being computed by mlflow run" in err]
    assert "nothing billed meanwhile" in waited and ("/a (pid" in waited or "/b (pid" in waited)
    assert sum(out.startswith("already finished") for _, out, _ in done) == 1


@pytest.mark.slow
def test_one_config_started_twice_at_once_computes_once(in_tmp):
    kgx_main(in_tmp, "llm=scripted", "dataset.limit=1", "run.progress=false")  # the store exists before
    check_twins(twins(in_tmp))


def test_a_claim_ahead_is_waited_for_and_a_dead_one_is_not(run, in_tmp, monkeypatch):
    """The bakery's rule on one store: a live RUNNING run of the config with a smaller ticket is
    waited for; one whose process is gone is marked KILLED and does not block."""
    done = run(*QUICK, "method=io", "run.output_dir=first")
    client = store(in_tmp)
    digest = client.get_run(done.run_id).data.tags["config_hash"]
    client.delete_run(done.run_id)  # the config is not FINISHED anywhere now
    rival = client.create_run("1", run_name="rival").info.run_id
    client.set_tag(rival, "config_hash", digest)
    client.set_tag(rival, "output_dir", str(in_tmp / "rival"))
    client.set_tag(rival, claims.TICKET_TAG, "1")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    client.set_tag(rival, claims.OWNER_TAG, f"{socket.gethostname()} {dead.stdout.strip()} 1")
    again = run(*QUICK, "method=io", "run.output_dir=second")
    assert again.status == "FINISHED" and again.computed == 3
    assert client.get_run(rival).info.status == "KILLED"
    assert client.get_run(rival).data.tags["result"] == "partial"

    waited: list[str] = []
    monkeypatch.setattr(claims, "wait_for", lambda tracker, first: waited.append(first.info.run_id))
    client.delete_run(again.run_id)
    live = client.create_run("1", run_name="live").info.run_id
    for key, value in {
        "config_hash": digest,
        claims.TICKET_TAG: "1",
        claims.OWNER_TAG: claims.owner_tag(),  # this very process: alive
    }.items():
        client.set_tag(live, key, value)
    calls = {"n": 0}
    real_ahead = claims.ahead

    def ahead_then_finish(tracker, config_hash):
        found = real_ahead(tracker, config_hash)
        calls["n"] += 1
        if found is not None:  # the live claim ends while this run waits
            client.set_terminated(live, status="KILLED")
        return found

    monkeypatch.setattr(claims, "ahead", ahead_then_finish)
    third = run(*QUICK, "method=io", "run.output_dir=third")
    assert waited == [live] and calls["n"] == 2
    assert third.status == "FINISHED" and third.computed == 3
    assert client.search_runs(["1"], "attributes.status = 'RUNNING'") == []


def test_a_run_left_running_by_a_killed_process_is_marked_killed_by_the_next_command(in_tmp):
    proc = kgx_process(
        in_tmp,
        "method=tog",
        "llm=scripted",
        "dataset.limit=48",
        "run.concurrency=1",
        "run.progress=false",
        "llm.latency_s=0.2",
    )
    logs = list((in_tmp / "outputs" / "runs").glob("*/predictions.jsonl"))
    deadline = time.time() + 120
    while not logs and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        logs = list((in_tmp / "outputs" / "runs").glob("*/predictions.jsonl"))
    assert logs, proc.stderr.read() if proc.poll() is not None else "no answer logged in time"
    proc.kill()
    proc.wait()
    client = store(in_tmp)
    (left,) = client.search_runs(["1"])
    assert left.info.status == "RUNNING"  # kill -9: nothing ended it
    result = kgx_main(in_tmp, "method=io", "llm=scripted", "dataset.limit=1", "run.progress=false")
    assert result.returncode == 0
    assert (
        f"mlflow run {left.info.run_id} (tog · demo · scripted · demo) was left RUNNING by pid {proc.pid}"
        in result.stderr
    )
    assert client.get_run(left.info.run_id).info.status == "KILLED"
