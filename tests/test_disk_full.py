"""A disk that fills during a run: one message naming the path and how to resume, the questions
written so far kept and logged as the run's figures, and the rerun finishing the rest."""

from __future__ import annotations

import errno

import mlflow
import pytest

from kgx.core.faults import DiskFull
from kgx.results.predlog import PredictionLog


def test_a_full_disk_stops_the_run_keeps_what_was_written_and_the_rerun_finishes(run, in_tmp, monkeypatch):
    write = PredictionLog.extend
    calls = {"n": 0}

    def filling(self, records):
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))
        write(self, records)

    monkeypatch.setattr(PredictionLog, "extend", filling)
    with pytest.raises(DiskFull) as caught:
        run("dataset.limit=10", "run.concurrency=1")
    message = str(caught.value)
    [folder] = [p.relative_to(in_tmp) for p in (in_tmp / "outputs" / "runs").iterdir()]
    assert message.startswith(f"no space left on the device writing {folder / 'predictions.jsonl'} ")
    assert f"questions answered are kept in {folder}" in message and "run the same command" in message
    kept = len((folder / "predictions.jsonl").read_text().splitlines())
    assert kept == 3
    client = mlflow.MlflowClient(f"sqlite:///{in_tmp}/mlruns/mlflow.db")
    [logged] = client.search_runs([client.get_experiment_by_name("kgx").experiment_id])
    assert logged.info.status == "FAILED" and logged.data.metrics["unanswered"] == 7  # the figures of what finished

    monkeypatch.setattr(PredictionLog, "extend", write)
    again = run("dataset.limit=10", "run.concurrency=1")
    assert again.status == "FINISHED" and (again.resumed, again.computed) == (3, 7)
