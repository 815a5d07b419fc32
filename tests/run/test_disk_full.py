"""A disk that fills during a run: one message naming the path and how to resume, the questions
written so far kept and logged as the run's figures, and the rerun finishing the rest."""

from __future__ import annotations

import errno

import mlflow
import polars as pl
import pytest

from kgx.core.faults import DiskFull
from kgx.results.predlog import PredictionLog
from tests.inprocess import kgx_main

ARGS = ("method=cot", "llm=scripted", "dataset.limit=4", "run.progress=false", "run.concurrency=1")


def test_a_full_disk_stops_the_run_keeps_what_was_written_and_the_rerun_finishes(run, in_tmp, monkeypatch):
    write = PredictionLog.extend
    calls = {"n": 0, "written": 0}

    def filling(self, records):
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))
        write(self, records)
        calls["written"] += len(records)  # a write holds every question finished since the last: one or more

    monkeypatch.setattr(PredictionLog, "extend", filling)
    with pytest.raises(DiskFull) as caught:
        run("dataset.limit=10", "run.concurrency=1")
    message = str(caught.value)
    [folder] = [p.relative_to(in_tmp) for p in (in_tmp / "outputs" / "runs").iterdir()]
    assert message.startswith(f"no space left on the device writing {folder / 'predictions.jsonl'} ")
    assert f"questions answered are kept in {folder}" in message and "run the same command" in message
    kept = len((folder / "predictions.jsonl").read_text().splitlines())
    assert kept == calls["written"] >= 3
    client = mlflow.MlflowClient(f"sqlite:///{in_tmp}/mlruns/mlflow.db")
    [logged] = client.search_runs([client.get_experiment_by_name("kgx").experiment_id])
    assert logged.info.status == "FAILED" and logged.data.metrics["unanswered"] == 10 - kept  # what finished

    monkeypatch.setattr(PredictionLog, "extend", write)
    again = run("dataset.limit=10", "run.concurrency=1")
    assert again.status == "FINISHED" and (again.resumed, again.computed) == (kept, 10 - kept)


def no_space(path):
    raise OSError(errno.ENOSPC, "No space left on device", str(path))


def test_python_m_kgx_says_it_in_one_message_when_the_disk_fills_in_the_loop(in_tmp, monkeypatch):
    monkeypatch.setattr(PredictionLog, "extend", lambda self, records: no_space(self.path))
    done = kgx_main(in_tmp, *ARGS)
    [folder] = [p.relative_to(in_tmp) for p in (in_tmp / "outputs" / "runs").iterdir()]
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            f"kgx: error: no space left on the device writing {folder / 'predictions.jsonl'} (No space left on device); "
            f"0 questions answered are kept in {folder}. Free space, or point run.output_dir and run.cache_dir"
        )
    )


def test_a_disk_that_fills_after_the_loop_keeps_every_answer_and_its_figures(in_tmp, monkeypatch):
    """The questions all finished, then predictions.parquet finds no space: one message naming the
    file, the figures logged, the run FAILED, and the same command concludes it asking nothing."""
    write = pl.DataFrame.write_parquet
    monkeypatch.setattr(pl.DataFrame, "write_parquet", lambda self, path, **kw: no_space(path))
    done = kgx_main(in_tmp, *ARGS)
    [folder] = [p.relative_to(in_tmp) for p in (in_tmp / "outputs" / "runs").iterdir()]
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"kgx: error: no space left on the device writing {folder / 'predictions.parquet'} " in done.stderr
    assert "run the same command: no answered question is asked again" in done.stderr
    assert len((in_tmp / folder / "predictions.jsonl").read_text().splitlines()) == 4
    client = mlflow.MlflowClient(f"sqlite:///{in_tmp}/mlruns/mlflow.db")
    [logged] = client.search_runs([client.get_experiment_by_name("kgx").experiment_id])
    assert logged.info.status == "FAILED" and logged.data.metrics["n_questions"] == 4
    assert logged.data.tags["result"] == "partial"  # not the "complete" the loop's outcome said

    monkeypatch.setattr(pl.DataFrame, "write_parquet", write)
    again = kgx_main(in_tmp, *ARGS)
    assert again.returncode == 0 and "0 answered, 4 resumed, 0 billed LLM calls" in again.stdout
    [logged] = client.search_runs([client.get_experiment_by_name("kgx").experiment_id])
    assert logged.info.status == "FINISHED" and logged.data.tags["result"] == "complete"
