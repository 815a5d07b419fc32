"""Sweeps: one MLflow parent run per Hydra multirun, every job a child run of it.

The parent is made once, in the launching process (a Hydra callback), before any job starts:
that also creates the sqlite store and the experiment, so parallel jobs never race to do it.
Its id reaches the jobs through a file in the sweep directory. A job that
crashes is recorded as a FAILED child and does not stop the others; rerunning the sweep
skips every job whose config already has a FINISHED run, so only the failed ones run again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from hydra import compose
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from kgx.core.boundary import SECRETS
from kgx.core.config import ConfigError, RunConfig
from kgx.core.masking import masked_config, masked_overrides, masked_text
from kgx.llm.ratelimit import JOBS_ENV
from kgx.run import hydra_record, sweep_preflight
from kgx.run.lifecycle import config_hash
from kgx.run.spec import to_run_spec
from kgx.run.sweep_table import log_table, short
from kgx.run.sweep_workers import bind_workers
from kgx.track import claims
from kgx.track.tracker import JOB_TAG, PARENT_TAG, REUSED_TAG, Tracker, job_of, run_params

SWEEP_GROUP = "sweeps"
PAPER_GROUP = "paper"  # +paper=<table>: a paper's table (conf/paper/), reported by kgx.report paper
SWEEP_FILE = "kgx_sweep.json"  # in the multirun directory: the parent run and the jobs in parallel
# The parent run's heartbeat while its sweep runs (kgx.track.claims), held by the launching process:
# not on the callback, which launchers pickle to their workers.
BEATING = contextlib.ExitStack()


@dataclass(frozen=True)
class Job:
    name: Optional[str]  # what sets the job apart in its sweep, e.g. "method=cot seed=1"
    parent_id: Optional[str]


def _sweep_file(sweep_dir: str) -> Path:
    return Path(sweep_dir) / SWEEP_FILE


def current_job() -> Job:
    """Inside a multirun: this job's overrides and its sweep's parent run; else nothing.

    The parent is read from the sweep directory, not inherited through the environment: some
    launchers start their workers before the sweep begins (joblib reuses its pool), others on
    other machines (SLURM). The share of the rate limits is published to this process here."""
    if not HydraConfig.initialized() or HydraConfig.get().mode != RunMode.MULTIRUN:
        return Job(None, None)
    hydra = HydraConfig.get()
    sweep = json.loads(_sweep_file(hydra.sweep.dir).read_text())
    os.environ[JOBS_ENV] = str(sweep["parallel_jobs"])
    name = job_name(list(hydra.overrides.task), sweep.get("varying", []))
    shown = SECRETS.redact(name or hydra.job.override_dirname or hydra.job.name)[0]  # a credential given to -m
    return Job(shown, sweep["parent_run_id"])


def swept_keys(jobs: list[list[str]]) -> list[str]:
    """The override keys whose value differs between jobs, in the order they were given."""
    values: dict[str, set[str]] = {}
    for overrides in jobs:
        for override in overrides:
            key, _, value = override.partition("=")
            values.setdefault(key, set()).add(value)
    return [key for key, seen in values.items() if len(seen) > 1]


def job_name(overrides: list[str], varying: list[str]) -> str:
    """A child run is named by what varies, in the sweep's order (``method=cot seed=1``): the
    fixed overrides are the same for every child, and put first they cut every name in the
    runs table to the same text."""
    given = dict(o.partition("=")[::2] for o in overrides)
    return " ".join(f"{short(key)}={given[key]}" for key in varying if key in given)


def _tracker(config: DictConfig) -> Tracker:
    run = RunConfig(tracking_uri=config.run.tracking_uri, experiment=config.run.experiment)
    return Tracker(run, Path.cwd())


def job_failed(config: DictConfig, job: Job, exc: BaseException) -> None:
    """Record a crashed job as a FAILED child run, with the reason, and let the sweep go on."""
    reason = SECRETS.redact(masked_text(f"{type(exc).__name__}: {exc}"))[0]
    print(f"kgx: job {job.name} failed: {reason}", file=sys.stderr)
    try:  # the job's params, so that a report places the failure in its cell (a config error has none)
        params = run_params(to_run_spec(config).resolved())
    except Exception:
        params = {}
    tags = {PARENT_TAG: job.parent_id or "", JOB_TAG: job.name or "job"}
    _tracker(config).record_failure(job.name or "job", reason, tags, params)


def job_overrides(config: DictConfig) -> list[list[str]]:
    """Every job's overrides, as Hydra's basic sweeper will expand them."""
    params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
    parsed = OverridesParser.create().parse_overrides([*params, *config.hydra.overrides.task])
    return BasicSweeper.split_arguments(parsed, None)[0]


def validate_jobs(config: DictConfig) -> int:
    """Range-check every job before any starts (Hydra checks keys and options, not ranges);
    a bad one stops the sweep, named. A paper's table also needs every dataset file it names:
    a missing one stops it here, with where to get it, rather than failing its cells one by one."""
    jobs = job_overrides(config)
    paper = config.hydra.runtime.choices.get(PAPER_GROUP)
    checked: dict[str, str] = {}  # dataset -> what is wrong with its file ("" when nothing)
    folders: dict[str, dict[str, list[str]]] = {}  # a fixed run.output_dir -> config hash -> its jobs
    specs: list[tuple[str, Any]] = []  # (job name, spec) for the pre-flight
    varying = swept_keys(jobs)
    for overrides in jobs:
        try:
            spec = to_run_spec(compose(config_name=config.hydra.job.config_name, overrides=overrides), overrides)
        except ConfigError as exc:
            # SystemExit, not an exception: Hydra turns callback exceptions into warnings.
            raise SystemExit(f"kgx: error: sweep job {' '.join(overrides)}: {exc}") from exc
        name = job_name(overrides, varying) or "the default job"
        specs.append((name, spec))
        if spec.run.output_dir:
            named = folders.setdefault(str(Path(spec.run.output_dir).resolve()), {})
            named.setdefault(config_hash(spec), []).append(name)
        if paper and spec.dataset.name not in checked:
            checked[spec.dataset.name] = sweep_preflight.file_problem(spec.dataset)
    for folder, configs in folders.items():
        if len(configs) > 1:
            shared = ", ".join(names[0] for names in configs.values())
            raise SystemExit(
                f"kgx: error: run.output_dir={folder} is shared by {len(configs)} different configs of this sweep "
                f"({shared}): a folder holds one config's results. Leave run.output_dir unset (each config gets "
                f"its own folder under outputs/runs/), or make it differ per job"
            )
    found = [text for text in checked.values() if text]
    if found:
        raise SystemExit(f"kgx: error: paper table {paper} needs data this machine lacks:\n  " + "\n  ".join(found))
    if not sweep_preflight.skipped():
        problems = sweep_preflight.check(specs)
        if problems:
            raise SystemExit(sweep_preflight.message(problems, len(jobs)))
    if expected := sweep_preflight.local_time(specs):
        print(expected, file=sys.stderr)
    return len(jobs)


def sweep_name(config: DictConfig, varying: list[str]) -> str:
    """``run.sweep_name``, else a sweep file's name (``+sweeps=tiny``) or a paper table's
    (``+paper=lmp_table1``), else the keys an ad-hoc multirun sweeps (``method×dataset``): the
    sweep's ``sweep`` tag, by which reports find it."""
    choices = config.hydra.runtime.choices
    given = config.run.get("sweep_name")
    return (
        given or choices.get(SWEEP_GROUP) or choices.get(PAPER_GROUP) or "×".join(short(k) for k in varying) or "sweep"
    )


def display_name(config: DictConfig, name: str, varying: list[str], key: str) -> str:
    """The parent run's name: ``run.sweep_name`` as given; else what the sweep is and what it
    varies, with its key, so two sweeps of one file over different settings are told apart in
    the runs table (``tiny: method×seed 3fa2c1``)."""
    if config.run.get("sweep_name"):
        return name
    keys = "×".join(short(k) for k in varying)
    return f"{name}: {keys} {key[:6]}" if keys and keys != name else f"{name} {key[:6]}"


class SweepTracking(Callback):
    """Hydra callback (conf/config.yaml): the parent run of a multirun."""

    def __init__(self) -> None:
        self.parent_id: Optional[str] = None
        self.varying: list[str] = []
        self.name = "sweep"

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        hydra_record.redact_logs(config)  # the launcher prints each job's overrides
        try:
            self._start(config)
        except Exception as exc:  # Hydra would only warn, and every job would then fail alone
            raise SystemExit(f"kgx: error: the sweep could not start: {type(exc).__name__}: {exc}") from exc

    def _start(self, config: DictConfig) -> None:
        jobs = validate_jobs(config)
        self.varying = swept_keys(job_overrides(config))
        tracker = _tracker(config)
        claims.reap(tracker)
        name = sweep_name(config, self.varying)
        overrides = list(config.hydra.overrides.task)
        key = hashlib.sha256(json.dumps([name, sorted(overrides)]).encode()).hexdigest()[:12]
        self.name = display_name(config, name, self.varying, key)
        earlier = tracker.client.search_runs([tracker.experiment_id], f"tags.sweep_key = '{key}'", max_results=1)
        if earlier:
            self.parent_id = earlier[0].info.run_id
            tracker.client.update_run(self.parent_id, status="RUNNING")
        else:
            self.parent_id = tracker.client.create_run(tracker.experiment_id, run_name=self.name).info.run_id
            shown = masked_overrides(overrides)  # a credential given on the command line is not recorded
            tags = {"sweep": name, "sweep_key": key, "sweep_jobs": str(jobs), "sweep_overrides": " ".join(shown)}
            if config.hydra.runtime.choices.get(PAPER_GROUP):  # kgx.report lays the sweep out as the paper does
                tags[PAPER_GROUP] = config.hydra.runtime.choices[PAPER_GROUP]
            for tag, value in tags.items():
                tracker.client.set_tag(self.parent_id, tag, value)
            swept = config.hydra.sweeper.get("params")
            params = OmegaConf.to_container(swept) if swept else {}
            tracker.client.log_dict(
                self.parent_id, {"sweep": name, "params": masked_config(params), "overrides": shown}, "sweep.json"
            )
        tracker.client.set_tag(self.parent_id, claims.OWNER_TAG, claims.owner_tag())
        BEATING.enter_context(claims.heartbeat(tracker.client, self.parent_id))
        parallel = max(1, int(config.hydra.launcher.get("n_jobs") or 1))
        bind_workers(str(config.hydra.launcher.get("_target_", "")))  # a killed launcher takes its workers along
        path = _sweep_file(config.hydra.sweep.dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps({"parent_run_id": self.parent_id, "parallel_jobs": parallel, "varying": self.varying})
        )

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from kgx.report import (  # plotting libraries: only when a sweep ends
            ReportError,
            log_summary,
        )
        from kgx.report.sweep_figures import log_figures

        tracker = _tracker(config)
        reused = f"{REUSED_TAG}{self.parent_id}"
        latest = {
            c.data.tags.get(reused) or job_of(c): c
            for c in sorted(tracker.children(self.parent_id), key=lambda c: c.info.start_time)
        }
        children = list(latest.values())  # a job rerun after a failure counts once, as it ended
        failed = [c for c in children if c.info.status == "FAILED"]
        done = [c for c in children if c.info.status == "FINISHED"]
        tracker.client.set_tag(self.parent_id, "children_finished", str(len(done)))
        tracker.client.set_tag(self.parent_id, "children_failed", str(len(failed)))
        tracker.client.set_tag(
            self.parent_id,
            "failed_jobs",
            "; ".join(f"{c.info.run_name}: {c.data.tags.get('error', c.info.status)}" for c in failed)[:5000] or "none",
        )
        try:
            summary = log_summary(self.parent_id, tracker.uri)
        except ReportError as exc:  # no finished child: nothing to tabulate
            summary = []
            tracker.client.set_tag(self.parent_id, "report", str(exc)[:5000])
        try:
            summary += log_figures(self.parent_id, tracker.uri)
        except ReportError as exc:
            tracker.client.set_tag(self.parent_id, "figures", str(exc)[:5000])
        table = log_table(tracker, self.parent_id, done, self.varying)
        tracker.client.set_terminated(self.parent_id, status="FAILED" if failed else "FINISHED")
        BEATING.close()
        print(
            f"sweep {self.name}: {len(done)} finished, {len(failed)} failed; "
            f"mlflow parent run {self.parent_id} with {len(summary)} report artifacts"
        )
        if table:
            print(table)
        if failed:  # SystemExit, not an exception: Hydra turns callback exceptions into warnings
            raise SystemExit(
                f"kgx: error: {len(failed)} sweep jobs failed (tag failed_jobs of the parent run); "
                f"rerun the same command to run only them again"
            )
