"""MLflow logging: one MLflow run per kgx run, resumed when the kgx run resumes.

MLflow 3 refuses a plain file store, so the default is a sqlite database under ``mlruns/`` of
the launch directory with artifacts beside it. Secrets never reach MLflow: the config holds
only the names of the environment variables that carry keys.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

from kgx.core.config import RunConfig
from kgx.core.faults import Failure, describe
from kgx.core.locks import waiting
from kgx.core.masking import masked_url
from kgx.core.numbers import readable
from kgx.track.remote import bound_retries, reaching

MLRUNS = "mlruns"
PARENT_TAG = "mlflow.parentRunId"
# On a FINISHED run a sweep found already done (``reused_by.<parent run id>`` = the job's name): the
# sweep did not run it again, and its table and reports count it as one of its own.
REUSED_TAG = "reused_by."

# A pre-migrated empty MLflow database (migrated schema, no experiment) that a new sqlite store
# starts as a copy of, instead of MLflow creating and migrating it (seconds of alembic). The test
# suite sets it, once per session (tests/conftest.py); MLflow then adds its default experiment to
# the copy on first use exactly as it does to a database it creates.
TEMPLATE_ENV = "KGX_MLFLOW_TEMPLATE"

# The figures a comparison starts from: the columns the dashboard shows (kgx.ui) and the
# figures a sweep's parent run carries for its best configuration (kgx.run.sweep).
HEADLINE = ("hits1", "hits1_tog", "f1", "answer_recall", "errors", "llm_calls_per_q", "total_tokens_per_q", "cost_usd")
PERCENT = {
    "hits1",
    "hits1_tog",
    "hit_any",
    "f1",
    "em",
    "answer_recall",
    "partial_match",
    "complete_match",
    "fallback_rate",
}
KEY_PARAMS = ("method.name", "dataset.name", "llm.name", "kg.name", "run.seed")  # kg: runs on two KGs do not compare
# A sweep's run is named by what it ran (kgx.track.tracker.run_title); the job it was, by which the
# sweep counts it (``method=cot seed=1``), is its tag ``job``.
JOB_TAG = "job"
NAMED = ("method", "dataset", "llm", "kg")  # the config groups a run's name gives
# MLflow 3's runs table loads a saved view from the experiment tag ``mlflow.sharedViewState.<key>``
# when its URL carries ``viewStateShareKey=<key>`` (and no search facets of its own).
VIEW_KEY = "kgx"
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
# Without a kind MLflow 3 infers "GenAI" from the traces and opens on an empty overview.
KIND_TAG = "mlflow.experimentKind"
# The runs table expands the parent of a run of this type, so a sweep's children are visible at once.
RUN_TYPE = {"mlflow.runType": "evaluation"}


def tracking_uri(run: RunConfig, launch_dir: Path) -> str:
    if run.tracking_uri:
        return run.tracking_uri
    if os.environ.get("MLFLOW_TRACKING_URI"):
        return os.environ["MLFLOW_TRACKING_URI"]
    return f"sqlite:///{(launch_dir / MLRUNS / 'mlflow.db').resolve()}"


def seed_from_template(db: Path) -> None:
    """Copy the database named by ``$KGX_MLFLOW_TEMPLATE`` to ``db`` if ``db`` does not exist yet."""
    template = os.environ.get(TEMPLATE_ENV)
    if not template or db.exists():
        return
    db.parent.mkdir(parents=True, exist_ok=True)
    part = db.with_name(f"{db.name}.{os.getpid()}.part")
    shutil.copyfile(template, part)
    os.replace(part, db)  # atomic: a reader never sees half a database


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Dotted keys; an unset field (None, an empty list or mapping) says nothing and is left out,
    so a run's params are the settings it has rather than dozens of ``None``."""
    out: dict[str, str] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif value is not None and value != []:
            out[name] = str(value)
    return out


def run_params(resolved: dict[str, Any]) -> dict[str, str]:
    """The params of a run: its flattened config without the settings of backends it does not
    use (``llm.local`` is read by the in-process backbone only)."""
    from kgx.llm.providers import LOCAL

    params = flatten(resolved)
    backbones = ["llm.", *(f"llm_stages.{k}." for k in resolved.get("llm_stages") or {})]
    unused = [b + "local." for b in backbones if not params.get(b + "model", "").startswith(f"{LOCAL}/")]
    return {k: v for k, v in params.items() if not k.startswith(tuple(unused))}


def shown(name: str, value: float) -> str:
    """A figure as kgx prints it: one decimal for a percentage, else three significant digits or
    the whole number with its thousands grouped (kgx.core.numbers)."""
    if math.isnan(value):
        return "n/a"
    return f"{value:.1f}" if name in PERCENT else readable(value)


def run_title(names: list[str], job: str = "") -> str:
    """A run's name in the runs table: ``tog · metaqa_2hop · gpt4o-mini · metaqa`` (method,
    dataset, backbone, KG: what decides whether two runs compare), then whatever else sets a
    sweep's ``job`` apart from its neighbours (``tog · ... · metaqa · seed=1``)."""
    rest = [part for part in job.split() if part.partition("=")[0] not in NAMED]
    return " · ".join([*names, *rest])


def job_of(run: Any) -> str:
    """The job a sweep's run was (``method=cot seed=1``): its tag, else, for runs logged before
    runs were named by their method, dataset, backbone and KG, its name."""
    return run.data.tags.get(JOB_TAG) or run.info.run_name or ""


def rounded(name: str, value: float) -> float:
    """A figure as MLflow shows it: a percentage to two decimals, a count as it is, another figure
    to four significant digits (tokens per question to one decimal). Unrounded, the runs table
    prints ``90.4766305``; the run's ``metrics.json`` (its folder and artifacts) keeps them exact."""
    if math.isnan(value) or float(value).is_integer():
        return value
    if name in PERCENT:
        return round(value, 2)
    return round(value, 1) if abs(value) >= 1000 else float(f"{value:.4g}")


# The chart view's first section: accuracy against cost per run, then the headline accuracy. MLflow
# adds a bar chart of every other metric below it, by the prefix before '/' (none of kgx's has one).
COMPARISON = "kgx-comparison"
COMPARISON_CHARTS = (("hits1", "total_tokens_per_q"), ("hits1", "llm_calls_per_q"), ("hits1", None), ("f1", None))


def chart(y: str, x: Optional[str]) -> dict[str, Any]:
    """A card of MLflow's chart view: ``y`` against ``x`` per run, or a bar per run of ``y``."""
    card = {"runsCountToCompare": 100, "metricSectionId": COMPARISON, "deleted": False, "isGenerated": False}
    if x is None:
        return {**card, "uuid": f"kgx-{y}", "type": "BAR", "metricKey": y, "displayName": y}
    axes = {"xaxis": {"key": x, "type": "METRIC"}, "yaxis": {"key": y, "type": "METRIC"}}
    return {**card, "uuid": f"kgx-{y}-{x}", "type": "SCATTER", "displayName": f"{y} against {x}", **axes}


def dashboard_view() -> dict[str, Any]:
    """The view kgx.ui opens on: in the runs table the run name, key params and the headline
    figures; in the chart view, a first section comparing the runs, and no empty charts."""
    return {
        "selectedColumns": [f"params.`{k}`" for k in KEY_PARAMS] + [f"metrics.`{m}`" for m in HEADLINE],
        "orderByKey": "attributes.start_time",
        "orderByAsc": False,
        "compareRunCharts": [chart(y, x) for y, x in COMPARISON_CHARTS],
        "compareRunSections": [
            {"uuid": COMPARISON, "name": "Comparison", "display": True, "isReordered": False, "deleted": False}
        ],
        "hideEmptyCharts": True,
    }


def present(client: Any, experiment_id: str) -> None:
    """Make MLflow's UI open the experiment on the runs table with the saved kgx view."""
    client.set_experiment_tag(experiment_id, KIND_TAG, "custom_model_development")
    client.set_experiment_tag(experiment_id, VIEW_TAG, json.dumps(dashboard_view()))


def runs_url(base: str, experiment_id: str) -> str:
    return f"{base}/#/experiments/{experiment_id}/runs?workflowType=machine_learning&viewStateShareKey={VIEW_KEY}"


def git_commit(where: Path) -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class Tracker:
    def __init__(self, run: RunConfig, launch_dir: Path):
        from mlflow.tracking import MlflowClient

        for name in ("mlflow", "alembic"):
            logging.getLogger(name).setLevel(logging.WARNING)

        self.uri = tracking_uri(run, launch_dir)
        if self.uri.startswith(("http://", "https://")):
            bound_retries()
        # MLflow creates and migrates a new sqlite database on first use; two processes doing
        # that at once leave it broken, so its first use happens under a lock beside it.
        db = Path(self.uri[len("sqlite:///") :]) if self.uri.startswith("sqlite:///") else None
        guard = waiting(Path(f"{db}.lock")) if db else contextlib.nullcontext()
        with guard:
            if db:
                seed_from_template(db)
            self.client = MlflowClient(tracking_uri=self.uri)
            with self.reaching(
                f"opening experiment '{run.experiment}'",
                "nothing was run: start it, or choose another store with run.tracking_uri=...",
            ):
                self.experiment_id = self._experiment(run.experiment, db)
        self.run_id: Optional[str] = None
        self.resumed_status: Optional[str] = None  # of a run start() resumed: its status before

    def reaching(self, doing: str, hint: str) -> contextlib.AbstractContextManager[None]:
        """MLflow calls inside raise TrackingUnavailable, naming the server, when it does not answer."""
        return reaching(masked_url(self.uri), doing, hint)

    def _experiment(self, name: str, db: Optional[Path]) -> str:
        """The experiment's id, created if new. A local store's artifacts go beside its database
        (``<its folder>/artifacts``: ``mlruns/artifacts`` for the default store), wherever the
        process started; MLflow's default would be ``./mlruns`` of the working directory."""
        found = self.client.get_experiment_by_name(name)
        if found is not None:
            return found.experiment_id
        artifacts = (db.parent / "artifacts").resolve().as_uri() if db else None
        try:
            created = self.client.create_experiment(name, artifact_location=artifacts)
        except Exception:  # another process created it first
            return self.client.get_experiment_by_name(name).experiment_id
        present(self.client, created)
        return created

    def start(self, name: str, params: dict[str, str], tags: dict[str, str], resume_id: Optional[str]) -> str:
        """Resume ``resume_id`` if it is a run of this experiment, else create a new run (a run of
        another experiment stays there: kgx.track.same_config)."""
        from mlflow.entities import Param, RunTag

        self.run_id, self.resumed_status = None, None
        if resume_id:
            try:
                earlier = self.client.get_run(resume_id)
                mine = earlier.info.experiment_id == self.experiment_id and earlier.info.lifecycle_stage == "active"
            except Exception:  # the id belongs to another tracking store
                mine = False
            if mine:
                self.resumed_status = earlier.info.status
                self.client.update_run(resume_id, status="RUNNING")
                self.run_id = resume_id
        if self.run_id is None:
            self.run_id = self.client.create_run(self.experiment_id, run_name=name).info.run_id
            items = [Param(k, v[:6000]) for k, v in params.items()]
            for i in range(0, len(items), 100):
                self.client.log_batch(self.run_id, params=items[i : i + 100])
        self.client.log_batch(self.run_id, tags=[RunTag(k, v) for k, v in {**RUN_TYPE, **tags}.items()])
        return self.run_id

    def withdraw(self) -> None:
        """Undo :meth:`start` when nothing was computed: a new run is deleted, a resumed one gets
        its earlier status back."""
        if self.run_id is None:
            return
        if self.resumed_status is None:
            self.client.delete_run(self.run_id)
        else:
            self.client.update_run(self.run_id, status=self.resumed_status)
        self.run_id = self.resumed_status = None

    def children(self, parent_id: str) -> list[Any]:
        """The sweep's runs: its own children and the FINISHED runs it reused (``reuse``)."""
        return [
            *self.client.search_runs(
                [self.experiment_id], filter_string=f"tags.`{PARENT_TAG}` = '{parent_id}'", max_results=10_000
            ),
            *self.client.search_runs(
                [self.experiment_id], filter_string=f"tags.`{REUSED_TAG}{parent_id}` != ''", max_results=10_000
            ),
        ]

    def reuse(self, run: Any, parent_id: str, job: str) -> None:
        """A sweep's job whose config already has a FINISHED run elsewhere (a single run, another
        sweep) is skipped; the run is marked as this sweep's so that its table shows the figures."""
        if run.data.tags.get(PARENT_TAG) != parent_id:
            self.client.set_tag(run.info.run_id, f"{REUSED_TAG}{parent_id}", job or "job")

    def record_failure(
        self, name: str, error: str, tags: dict[str, str], params: Optional[dict[str, str]] = None
    ) -> str:
        """A FAILED run for a job that crashed before it could log one, so the sweep knows; with the
        job's params where its config composed, so that reports place it in its cell."""
        from mlflow.entities import Param, RunTag

        run_id = self.client.create_run(self.experiment_id, run_name=name).info.run_id
        tags = {**RUN_TYPE, **tags, "error": error[:5000]}
        self.client.log_batch(run_id, tags=[RunTag(k, v) for k, v in tags.items()])
        items = [Param(k, v[:6000]) for k, v in (params or {}).items()]
        for i in range(0, len(items), 100):
            self.client.log_batch(run_id, params=items[i : i + 100])
        self.client.set_terminated(run_id, status="FAILED")
        return run_id

    def log_metrics(self, metrics: dict[str, float]) -> None:
        """Rounded for display (:func:`rounded`: the run's ``metrics.json`` has them exact); NaN is logged
        as NaN (an unknown cost stays unknown) and named in a tag."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        shown = [Metric(k, rounded(k, float(v)), now, 0) for k, v in metrics.items()]
        self.client.log_batch(self.run_id, metrics=shown)
        unknown = [k for k, v in metrics.items() if math.isnan(v)]
        self.client.set_tag(self.run_id, "unknown_metrics", ",".join(unknown) or "none")

    def log_artifact(self, path: Path, artifact_path: Optional[str] = None) -> None:
        if path.is_dir():
            self.client.log_artifacts(self.run_id, str(path), artifact_path)
        elif path.exists():
            self.client.log_artifact(self.run_id, str(path), artifact_path)

    def log_outcome(self, status: str, failures: list[Failure], tripped: Optional[Failure], unanswered: int) -> None:
        """Mark a run's figures for what they are: ``result`` is ``partial`` unless every
        question has an answer; ``errors`` says what the errors were and ``stopped_early`` why
        the run stopped before its last question."""
        tags = {
            "result": "complete" if status == "FINISHED" else "partial",
            "errors": describe(failures) or "none",
            "stopped_early": (f"{tripped.signature}: {tripped.message}"[:5000] if tripped else "no"),
            "unanswered": str(unanswered),
        }
        from mlflow.entities import RunTag

        self.client.log_batch(self.run_id, tags=[RunTag(k, v) for k, v in tags.items()])

    def end(self, status: str) -> None:
        if status != "FINISHED":
            # An exception may end the run after log_outcome tagged it complete (a disk filling at
            # predictions.parquet): a run that did not finish never carries a complete result.
            self.client.set_tag(self.run_id, "result", "partial")
        self.client.set_terminated(self.run_id, status=status)
