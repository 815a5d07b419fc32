"""MLflow logging: one MLflow run per kgx run, resumed when the kgx run resumes.

MLflow 3 refuses a plain file store, so the default is a sqlite database under ``mlruns/`` of
the launch directory with artifacts beside it. Secrets never reach MLflow: the config holds
only the names of the environment variables that carry keys.
"""
from __future__ import annotations

import contextlib
import logging
import math
import os
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

from kgx.config import RunConfig
from kgx.failures import Failure, describe
from kgx.locks import waiting

MLRUNS = "mlruns"
PARENT_TAG = "mlflow.parentRunId"


def tracking_uri(run: RunConfig, launch_dir: Path) -> str:
    if run.tracking_uri:
        return run.tracking_uri
    if os.environ.get("MLFLOW_TRACKING_URI"):
        return os.environ["MLFLOW_TRACKING_URI"]
    return f"sqlite:///{(launch_dir / MLRUNS / 'mlflow.db').resolve()}"


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        else:
            out[name] = str(value)
    return out


def git_commit(where: Path) -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class Tracker:
    def __init__(self, run: RunConfig, launch_dir: Path):
        from mlflow.tracking import MlflowClient

        for name in ("mlflow", "alembic"):
            logging.getLogger(name).setLevel(logging.WARNING)

        self.uri = tracking_uri(run, launch_dir)
        # MLflow creates and migrates a new sqlite database on first use; two processes doing
        # that at once leave it broken, so its first use happens under a lock beside it.
        guard = waiting(Path(self.uri[len("sqlite:///"):] + ".lock")) if self.uri.startswith("sqlite:///") \
            else contextlib.nullcontext()
        with guard:
            self.client = MlflowClient(tracking_uri=self.uri)
            self.experiment_id = self._experiment(run.experiment, launch_dir)
        self.run_id: Optional[str] = None

    def _experiment(self, name: str, launch_dir: Path) -> str:
        found = self.client.get_experiment_by_name(name)
        if found is not None:
            return found.experiment_id
        default = tracking_uri(RunConfig(), launch_dir)
        artifacts = (launch_dir / MLRUNS / "artifacts").resolve().as_uri() if self.uri == default else None
        try:
            return self.client.create_experiment(name, artifact_location=artifacts)
        except Exception:  # another process created it first
            return self.client.get_experiment_by_name(name).experiment_id

    def start(self, name: str, params: dict[str, str], tags: dict[str, str],
              resume_id: Optional[str]) -> str:
        """Resume ``resume_id`` if it exists in this store, else create a new run."""
        from mlflow.entities import Param, RunTag

        if resume_id:
            try:
                self.client.get_run(resume_id)
                self.client.update_run(resume_id, status="RUNNING")
                self.run_id = resume_id
            except Exception:  # the id belongs to another tracking store
                self.run_id = None
        if self.run_id is None:
            self.run_id = self.client.create_run(self.experiment_id, run_name=name).info.run_id
            items = [Param(k, v[:6000]) for k, v in params.items()]
            for i in range(0, len(items), 100):
                self.client.log_batch(self.run_id, params=items[i:i + 100])
        self.client.log_batch(self.run_id, tags=[RunTag(k, v) for k, v in tags.items()])
        return self.run_id

    def finished_run(self, config_hash: str) -> Optional[Any]:
        """A FINISHED run of the same config, if any: such a job is skipped, not recomputed."""
        runs = self.client.search_runs(
            [self.experiment_id],
            filter_string=f"tags.config_hash = '{config_hash}' and attributes.status = 'FINISHED'",
            max_results=1, order_by=["attributes.end_time DESC"],
        )
        return runs[0] if runs else None

    def children(self, parent_id: str) -> list[Any]:
        return self.client.search_runs([self.experiment_id], filter_string=f"tags.`{PARENT_TAG}` = '{parent_id}'",
                                       max_results=10_000)

    def record_failure(self, name: str, error: str, tags: dict[str, str]) -> str:
        """A FAILED run for a job that crashed before it could log one, so the sweep knows."""
        from mlflow.entities import RunTag

        run_id = self.client.create_run(self.experiment_id, run_name=name).info.run_id
        self.client.log_batch(run_id, tags=[RunTag(k, v) for k, v in {**tags, "error": error[:5000]}.items()])
        self.client.set_terminated(run_id, status="FAILED")
        return run_id

    def log_metrics(self, metrics: dict[str, float]) -> None:
        """NaN is logged as NaN (an unknown cost stays unknown) and named in a tag."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self.client.log_batch(self.run_id, metrics=[Metric(k, float(v), now, 0) for k, v in metrics.items()])
        unknown = [k for k, v in metrics.items() if math.isnan(v)]
        self.client.set_tag(self.run_id, "unknown_metrics", ",".join(unknown) or "none")

    def log_artifact(self, path: Path, artifact_path: Optional[str] = None) -> None:
        if path.is_dir():
            self.client.log_artifacts(self.run_id, str(path), artifact_path)
        elif path.exists():
            self.client.log_artifact(self.run_id, str(path), artifact_path)

    def log_outcome(self, status: str, failures: list[Failure], tripped: Optional[Failure],
                    unanswered: int) -> None:
        """Mark a run's figures for what they are: ``result`` is ``partial`` unless every
        question has an answer; ``errors`` says what the errors were and ``stopped_early`` why
        the run stopped before its last question."""
        tags = {"result": "complete" if status == "FINISHED" else "partial",
                "errors": describe(failures) or "none",
                "stopped_early": (f"{tripped.signature}: {tripped.message}"[:5000] if tripped else "no"),
                "unanswered": str(unanswered)}
        from mlflow.entities import RunTag

        self.client.log_batch(self.run_id, tags=[RunTag(k, v) for k, v in tags.items()])

    def end(self, status: str) -> None:
        self.client.set_terminated(self.run_id, status=status)
