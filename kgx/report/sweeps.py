"""Sweeps as a report finds them: which one ``--parent NAME`` means, and the jobs a sweep lost.

A sweep's parent run is named after it and tagged ``sweep`` (kgx.run.sweep). Running a table
twice with other overrides (another ``dataset.sample``, a ``llm=`` for every row) makes two
sweeps of one name; ``--parent NAME`` takes the latest of them that has finished runs and says
so, listing the others with their overrides, finished and failed counts and start times, so
that the reader can pass one run id instead. A name that matches no sweep lists the sweeps there.

A job that failed is a FAILED child run with the reason in its ``error`` tag (kgx.run.sweep
``job_failed``). With the run params it logged, a paper's table shows the cell it would have made
as ``failed``, with the reason; one that failed before any param was logged is counted with the
sweep's failed jobs (and the command that reruns them), in no cell.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from kgx.report.store import ReportError, search
from kgx.track.tracker import PARENT_TAG, REUSED_TAG, job_of

SWEEP_TAG = "sweep"  # kgx.run.sweep tags a sweep's parent run with the sweep's name
OVERRIDES_TAG = "sweep_overrides"  # ... and with the command's overrides, as given (credentials masked)
ERROR_TAG = "error"  # a failed job's reason (kgx.track.tracker.record_failure)
SHOWN_SWEEPS = 10  # sweeps listed when a name matches none


@dataclass(frozen=True)
class Sweep:
    """A sweep's parent run and what became of its jobs (the latest run of each job counts)."""

    run_id: str
    name: str  # the parent run's name, as the sweep printed it
    sweep: str  # its ``sweep`` tag: the table or sweep file it ran
    overrides: str  # the command's overrides, as given
    started: int  # ms since the epoch
    finished: int
    failed: int
    paper: str = ""  # the paper table it ran (+paper=), if any

    @property
    def command(self) -> str:
        """The command that made the sweep; run again, it runs only the jobs without a FINISHED run."""
        return f"python -m kgx -m {self.overrides}".rstrip()

    def describe(self) -> str:
        return (
            f"{self.run_id} ({self.name}: overrides '{self.overrides}', {self.finished} finished, "
            f"{self.failed} failed, started {when(self.started)})"
        )


@dataclass(frozen=True)
class Choice:
    """The sweep ``--parent`` means, and a sentence when the name was ambiguous ("" otherwise)."""

    sweep: Sweep
    note: str = ""


@dataclass(frozen=True)
class FailedJob:
    """A job of a sweep that ended FAILED, why, and the run params it would have had (None: unknown)."""

    run_id: str
    name: str
    error: str
    sweep: Sweep
    started: int
    params: Optional[dict[str, str]] = field(default=None, compare=False)

    @property
    def reason(self) -> str:
        return reason(self.error)


def when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def latest_children(mlflow: Any, experiment_id: str, parent_id: str) -> list[Any]:
    """The sweep's jobs as they ended: the latest run of each job (a job rerun after a failure
    counts once), as kgx.run.sweep counts them."""
    runs = [
        *search(mlflow, experiment_id, None, f"tags.`{PARENT_TAG}` = '{parent_id}'"),
        *search(mlflow, experiment_id, None, f"tags.`{REUSED_TAG}{parent_id}` != ''"),
    ]
    reused = f"{REUSED_TAG}{parent_id}"
    latest = {r.data.tags.get(reused) or job_of(r): r for r in sorted(runs, key=lambda r: r.info.start_time)}
    return list(latest.values())


def as_sweep(mlflow: Any, run: Any) -> Sweep:
    children = latest_children(mlflow, run.info.experiment_id, run.info.run_id)
    tags = run.data.tags
    return Sweep(
        run_id=run.info.run_id,
        name=run.info.run_name,
        sweep=tags.get(SWEEP_TAG, ""),
        overrides=tags.get(OVERRIDES_TAG, ""),
        started=run.info.start_time,
        finished=sum(c.info.status == "FINISHED" for c in children),
        failed=sum(c.info.status == "FAILED" for c in children),
        paper=tags.get("paper", ""),
    )


def sweep_runs(mlflow: Any, experiment_id: str, query: str = "") -> list[Any]:
    """The sweep parents of an experiment (``query`` narrows them), latest first."""
    wanted = f"tags.`{SWEEP_TAG}` != ''" + (f" and {query}" if query else "")
    return sorted(search(mlflow, experiment_id, None, wanted), key=lambda r: r.info.start_time, reverse=True)


def choose(mlflow: Any, experiment: str, parent: str) -> Choice:
    """The sweep ``parent`` names: a run id, or a sweep's name (its parent run's name or its
    ``sweep`` tag). Of several sweeps of that name the latest with finished runs is taken, and
    the choice says so; a name matching none is a ReportError listing the sweeps there."""
    from mlflow.exceptions import MlflowException

    if re.fullmatch(r"[0-9a-f]{32}", parent):
        try:
            return Choice(as_sweep(mlflow, mlflow.get_run(parent)))
        except MlflowException:
            pass
    found = mlflow.get_experiment_by_name(experiment)
    parents = sweep_runs(mlflow, found.experiment_id) if found else []
    named = [as_sweep(mlflow, r) for r in parents if parent in (r.info.run_name, r.data.tags.get(SWEEP_TAG))]
    if not named:
        listed = "; ".join(as_sweep(mlflow, r).describe() for r in parents[:SHOWN_SWEEPS]) or "none"
        raise ReportError(
            f"no run id or sweep named '{parent}' in experiment '{experiment}' of {mlflow.tracking_uri}; "
            f"sweeps there (latest first): {listed}"
        )
    chosen = next((s for s in named if s.finished), named[0])
    if len(named) == 1:
        return Choice(chosen)
    others = "; ".join(s.describe() for s in named if s is not chosen)
    which = "the latest with finished runs" if chosen.finished else "the latest (none has finished runs)"
    return Choice(
        chosen,
        f"{len(named)} sweeps are named '{parent}': shown is {which}, {chosen.describe()}; the others: {others} "
        "(pass a run id as --parent to choose one)",
    )


def failed_jobs(mlflow: Any, sweeps: Sequence[Sweep]) -> list[FailedJob]:
    """The jobs of ``sweeps`` that ended FAILED, each with the run params it logged (None for a job
    that failed before its run could log them: it is counted, but placed in no cell)."""
    jobs = []
    for sweep in sweeps:
        experiment_id = mlflow.get_run(sweep.run_id).info.experiment_id
        failed = [c for c in latest_children(mlflow, experiment_id, sweep.run_id) if c.info.status == "FAILED"]
        for child in failed:
            jobs.append(
                FailedJob(
                    run_id=child.info.run_id,
                    name=child.info.run_name,
                    error=child.data.tags.get(ERROR_TAG) or child.data.tags.get("stopped_early") or "FAILED",
                    sweep=sweep,
                    started=child.info.start_time,
                    params=dict(child.data.params) or None,
                )
            )
    return jobs


# The few reasons a job fails before it answers anything, in the words a reader acts on.
REASONS = (
    (re.compile(r"needs an API key: set the environment variable (\w+)"), "no API key ({0} is not set)"),
    (
        re.compile(r"pre-flight request failed.*?llm '([^']+)'[^:]*: (\w+)"),
        "LLM {0} failed its first request ({1}); no question ran",
    ),
    (re.compile(r"llm '([^']+)' \([^)]*\): (\w+(?:Error|Exception))"), "LLM {0} failed ({1})"),
    (re.compile(r"SPARQL endpoint (\S+) unreachable"), "KG endpoint {0} unreachable"),
    (re.compile(r"SPARQL endpoint (\S+) timed out"), "KG endpoint {0} timed out"),
    (re.compile(r"SPARQL endpoint (\S+) holds no triple"), "KG endpoint {0} holds no triple"),
    (re.compile(r"file not found: (\S+)"), "data file missing ({0})"),
)
REASON_CHARS = 160


def reason(error: str) -> str:
    """A failed job's error in one line: what is missing when it is a known cause, else the
    error's first line (without the exception's class), cut to REASON_CHARS."""
    for pattern, words in REASONS:
        found = pattern.search(error)
        if found:
            return words.format(*found.groups()).rstrip(":;,.")
    first = (error.strip().splitlines() or ["FAILED"])[0]
    first = re.sub(r"^[A-Za-z_.]*(Error|Exception|Unavailable|Busy|Full)\b: ", "", first)
    return first if len(first) <= REASON_CHARS else first[: REASON_CHARS - 1] + "…"
