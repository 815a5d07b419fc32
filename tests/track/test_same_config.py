"""One run per config in a tracking store, whatever its experiment or output folder
(kgx.track.same_config): nothing is computed twice, and no experiment is FINISHED but empty."""

from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from kgx.core.config import ConfigError
from kgx.track.same_config import REUSES_EXPERIMENT, REUSES_RUN

QUICK = ("dataset.limit=3",)


def store(in_tmp) -> MlflowClient:
    return MlflowClient(f"sqlite:///{in_tmp / 'mlruns' / 'mlflow.db'}")


def runs_in(client: MlflowClient, experiment: str) -> list:
    found = client.get_experiment_by_name(experiment)
    return client.search_runs([found.experiment_id]) if found else []


def test_a_second_experiment_gets_a_pointer_to_the_finished_run(run, in_tmp):
    first = run(*QUICK, "run.experiment=a")
    assert first.status == "FINISHED" and first.computed == 3
    second = run(*QUICK, "run.experiment=b")
    assert second.skipped and second.computed == 0 and second.billed_calls == 0
    client = store(in_tmp)
    (pointer,) = runs_in(client, "b")
    assert pointer.info.status == "FINISHED" and pointer.info.run_id == second.run_id
    assert pointer.data.tags[REUSES_RUN] == first.run_id and pointer.data.tags[REUSES_EXPERIMENT] == "a"
    assert pointer.data.metrics["hits1"] == first.summary["hits1"]
    assert pointer.data.params == client.get_run(first.run_id).data.params
    assert second.reuses == f"a/{first.run_id}"
    third = run(*QUICK, "run.experiment=b")  # the pointer is this experiment's own now: no second one
    assert third.skipped and third.run_id == second.run_id and len(runs_in(client, "b")) == 1


def test_an_unfinished_run_of_another_experiment_is_finished_here_from_its_answers(run, in_tmp):
    first = run(*QUICK, "run.experiment=a")
    client = store(in_tmp)
    client.set_terminated(first.run_id, status="KILLED")  # as a kill -9 leaves it, its answers all logged
    second = run(*QUICK, "run.experiment=b")
    assert second.status == "FINISHED" and second.computed == 0 and second.resumed == 3
    assert second.run_id != first.run_id and [r.info.run_id for r in runs_in(client, "b")] == [second.run_id]
    assert client.get_run(second.run_id).data.metrics["hits1"] == first.summary["hits1"]
    assert client.get_run(first.run_id).info.status == "KILLED"  # left as it was, in its experiment


def test_a_second_output_folder_is_refused_while_the_first_holds_unfinished_answers(run, in_tmp):
    first = run(*QUICK, "run.output_dir=one")
    store(in_tmp).set_terminated(first.run_id, status="KILLED")
    with pytest.raises(ConfigError, match=r"already has answers in \S*/one .*run.output_dir=\S*/one resumes it"):
        run(*QUICK, "run.output_dir=two")
    assert not (in_tmp / "two" / "predictions.jsonl").exists()
    again = run(*QUICK, "run.output_dir=two", "run.force=true")  # starting over elsewhere is a choice
    assert again.status == "FINISHED" and again.computed == 3


def test_a_finished_config_is_skipped_from_another_output_folder(run, in_tmp):
    run(*QUICK, "run.output_dir=one")
    second = run(*QUICK, "run.output_dir=two")
    assert second.skipped and not (in_tmp / "two" / "predictions.jsonl").exists()


def test_a_stores_artifacts_sit_beside_its_database_wherever_the_run_starts(run, in_tmp):
    """A store named by run.tracking_uri keeps the run's artifacts beside its database: none land in
    ./mlruns of the folder the run started in."""
    db = in_tmp / "elsewhere" / "mlflow.db"
    done = run(*QUICK, f"run.tracking_uri=sqlite:///{db}")
    assert done.status == "FINISHED"
    artifact_uri = MlflowClient(f"sqlite:///{db}").get_run(done.run_id).info.artifact_uri
    assert artifact_uri.startswith((db.parent / "artifacts").as_uri())
    assert any((db.parent / "artifacts").rglob("predictions.jsonl"))
    assert not (in_tmp / "mlruns").exists()
