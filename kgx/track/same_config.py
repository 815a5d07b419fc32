"""One run per config in a tracking store, whatever its experiment or output folder.

The config hash (tag ``config_hash``, kgx.run.lifecycle) identifies a run's results. Without
this rule a second experiment or a second ``run.output_dir`` for the same config would compute it
again, or resume the first experiment's run and leave the second one empty while reporting
FINISHED. The rule:

- A FINISHED run of the config anywhere in the store is not computed again. When it is in another
  experiment, this experiment gets a *pointer run*: FINISHED, with the original's figures, params
  and tags, tagged ``reuses_run`` and ``reuses_experiment`` (its artifacts stay with the original).
  This experiment's tables then show the config, and a later invocation here is skipped at once.
- An unfinished run of the config whose answers are in another output folder is refused, naming
  that folder: ``run.output_dir=<it>`` resumes it there, ``run.force=true`` starts over here.
- An unfinished run in another experiment is not resumed there (Tracker.start starts one in this
  experiment); its answers, in the config's folder, are reused all the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from kgx.core.config import ConfigError

REUSES_RUN = "reuses_run"
REUSES_EXPERIMENT = "reuses_experiment"
NOT_COPIED = ("mlflow.", "reused_by.")  # MLflow's own tags, a sweep's parent and reuse marks stay with the original


def runs_of(tracker: Any, config_hash: str) -> list[Any]:
    """Every run of the config in the store, this experiment's first, the latest first within each."""
    ids = [e.experiment_id for e in tracker.client.search_experiments()]
    runs = tracker.client.search_runs(
        ids,
        filter_string=f"tags.config_hash = '{config_hash}'",
        max_results=1000,
        order_by=["attributes.end_time DESC"],
    )
    return sorted(runs, key=lambda run: run.info.experiment_id != tracker.experiment_id)


def finished_run(tracker: Any, config_hash: str, name: str) -> Optional[Any]:
    """The FINISHED run of the config that makes this invocation a skip: this experiment's own, else
    a pointer to another experiment's, made here once."""
    done = next((run for run in runs_of(tracker, config_hash) if run.info.status == "FINISHED"), None)
    if done is None or done.info.experiment_id == tracker.experiment_id:
        return done
    return pointer(tracker, done, name)


def pointer(tracker: Any, run: Any, name: str) -> Any:
    """A FINISHED run of this experiment standing for ``run`` (of another experiment)."""
    from mlflow.entities import Metric, Param, RunTag

    client = tracker.client
    made = client.create_run(tracker.experiment_id, run_name=name or run.info.run_name).info.run_id
    tags = {k: v for k, v in run.data.tags.items() if not k.startswith(NOT_COPIED)}
    tags[REUSES_RUN] = run.info.run_id
    tags[REUSES_EXPERIMENT] = client.get_experiment(run.info.experiment_id).name
    tags["mlflow.note.content"] = (
        f"Computed once, by run {run.info.run_id} of experiment '{tags[REUSES_EXPERIMENT]}' (its artifacts "
        f"are there): this run shows its figures here."
    )
    params = [Param(k, v) for k, v in run.data.params.items()]
    metrics = [Metric(k, v, run.info.end_time or 0, 0) for k, v in run.data.metrics.items()]
    client.log_batch(made, tags=[RunTag(k, v) for k, v in tags.items()])
    for i in range(0, max(len(params), len(metrics)), 100):
        client.log_batch(made, metrics=metrics[i : i + 100], params=params[i : i + 100])
    client.set_terminated(made, status="FINISHED")
    return client.get_run(made)


def check_folder(tracker: Any, config_hash: str, folder: Path) -> None:
    """Refuse to compute the config in ``folder`` while another folder holds its unfinished answers."""
    for run in runs_of(tracker, config_hash):
        other = run.data.tags.get("output_dir")
        if run.info.status == "FINISHED" or not other or Path(other).resolve() == folder.resolve():
            continue
        if (Path(other) / "predictions.jsonl").exists():
            raise ConfigError(
                f"this config (hash {config_hash}) already has answers in {other} (mlflow run {run.info.run_id}, "
                f"{run.info.status}); computing it in {folder} too would ask them again. run.output_dir={other} "
                f"resumes it there; run.force=true starts over in {folder}"
            )
