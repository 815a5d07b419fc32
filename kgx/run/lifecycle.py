"""The life of a run, in one place: its identity, its folder, what earlier invocations left, the
wall time, and the MLflow run.

A run's identity is the hash of its config without execution settings (``RunSpec.identity``);
its folder is named by that hash, so the same config always finds its own ``predictions.jsonl``.
A rerun reads that log back: answered questions are kept, questions whose last record is an
error are planned again, and what every invocation paid for stays counted. One invocation per
config runs at a time (a lock file in the folder), and the MLflow run is never left RUNNING.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from kgx.core import locks
from kgx.core.faults import Failure
from kgx.core.types import Question
from kgx.llm.usage import Usage
from kgx.results.billing import BillingLog, unsettled
from kgx.results.predlog import PredictionLog
from kgx.results.record import Record
from kgx.run.loop import WallClock
from kgx.run.spec import RunSpec
from kgx.track.remote import TrackingUnavailable
from kgx.track.same_config import REUSES_EXPERIMENT, REUSES_RUN


def config_hash(spec: RunSpec) -> str:
    """Identity of a run's results: the config without execution settings."""
    return hashlib.sha256(json.dumps(spec.identity(), sort_keys=True).encode()).hexdigest()[:12]


@dataclass
class Plan:
    """What this invocation has to do, from what earlier invocations logged."""

    earlier: dict[str, Record]  # the last record of each question of this run
    done: dict[str, Record]  # of them, the answered ones
    todo: list[Question]  # questions without an answer: never run, or ended in an error
    superseded: list[Record]  # earlier lines a later one replaced: paid for, no longer counted
    invocation: int  # 1 for the first invocation of this config, then 2, 3 ...
    unsettled: Usage = field(default_factory=Usage)  # paid for by questions in flight at a kill


@dataclass
class Outcome:
    summary: dict[str, float]
    records: list[Record]
    out_dir: Path
    run_id: str
    computed: int  # questions answered by this invocation
    billed_calls: int  # provider calls made by this invocation
    resumed: int  # questions taken from an earlier invocation's log
    interrupted: bool = False
    skipped: bool = False  # the config had a FINISHED run: nothing was run
    failures: list[Failure] = field(default_factory=list)  # questions that ended in an error
    tripped: Optional[Failure] = None  # the repeated failure that stopped the run early
    not_started: int = 0  # questions left for a rerun when the run stopped early
    retried: int = 0  # questions whose earlier record was an error, computed again
    failed: int = 0  # questions this invocation computed that ended in an error (not in ``computed``)
    reuses: str = ""  # skipped: the run of another experiment that computed the config ("experiment/run id")

    @property
    def status(self) -> str:
        """The MLflow status: FINISHED only when every question has an answer."""
        if self.skipped:
            return "FINISHED"
        if self.interrupted:
            return "KILLED"
        return "FAILED" if self.failures or self.tripped or self.not_started else "FINISHED"


class RunFolder:
    """``outputs/runs/<method>-<dataset>-<llm>-<hash>/``: config.json, predictions.jsonl, traces/,
    the MLflow run id, the invocation count and the wall time of every invocation so far."""

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.digest = config_hash(spec)
        self.path = (
            Path(spec.run.output_dir)
            if spec.run.output_dir
            else Path("outputs") / "runs" / f"{spec.method.name}-{spec.dataset.name}-{spec.llm.name}-{self.digest}"
        )
        self.log = PredictionLog(self.path / "predictions.jsonl")
        self.billing = BillingLog(self.path / "billing.jsonl")

    def lock(self) -> contextlib.AbstractContextManager:
        """A second invocation of the same config is refused (locks.Busy), naming the first."""
        return locks.exclusive(self.path / ".lock", f"this config ({self.path})")

    def plan(self, questions: list[Question]) -> Plan:
        """Read what earlier invocations logged (``run.force``: set it aside and start over)."""
        force = self.spec.run.force
        self.path.mkdir(parents=True, exist_ok=True)
        (self.path / "config.json").write_text(json.dumps(self.spec.resolved(), indent=2))
        if force:
            self.log.set_aside()
            self.billing.set_aside()
            if (self.path / "traces").exists():
                shutil.rmtree(self.path / "traces")
        contents = self.log.read()
        ids = {q.id for q in questions}
        earlier = {qid: r for qid, r in contents.latest.items() if qid in ids}
        done = {qid: r for qid, r in earlier.items() if not r.failed}
        counter = self.path / "invocations"
        invocation = (int(counter.read_text()) if counter.exists() and not force else 0) + 1
        counter.write_text(str(invocation))
        left = unsettled(self.billing.read(), [*contents.latest.values(), *contents.superseded])
        return Plan(earlier, done, [q for q in questions if q.id not in done], contents.superseded, invocation, left)

    def clock(self, plan: Plan) -> WallClock:
        """``wall_s`` adds up the invocations that built this run, so a resumed run reports its whole cost."""
        wall = self.path / "wall_s"
        return WallClock(wall, float(wall.read_text()) if wall.exists() and plan.earlier else 0.0)

    @property
    def resume_id(self) -> Optional[str]:
        """The MLflow run an earlier invocation of this config logged to."""
        saved = self.path / "mlflow_run_id"
        return saved.read_text().strip() if saved.exists() and not self.spec.run.force else None

    @contextlib.contextmanager
    def mlflow_run(self, tracker: Any, name: str, params: dict[str, str], tags: dict[str, str]) -> Iterator[str]:
        """Start (or resume) the MLflow run; an exception ends it KILLED (Ctrl-C) or FAILED."""
        run_id = tracker.start(name, params, tags, self.resume_id)
        (self.path / "mlflow_run_id").write_text(run_id)
        try:
            yield run_id
        except BaseException as exc:
            if not isinstance(exc, TrackingUnavailable):  # a server that is down cannot be told either
                # Best effort: on a full disk the store may fail too, and the cause must not be masked.
                with contextlib.suppress(Exception):
                    tracker.end("KILLED" if isinstance(exc, KeyboardInterrupt) else "FAILED")
            raise


def skipped(run: Any, out_dir: Path) -> Outcome:
    """The outcome of an earlier FINISHED run of the same config."""
    summary = dict(run.data.metrics)
    return Outcome(
        summary,
        [],
        Path(run.data.tags.get("output_dir", out_dir)),
        run.info.run_id,
        0,
        0,
        int(summary.get("n_questions", 0)),
        skipped=True,
        reuses=f"{tags[REUSES_EXPERIMENT]}/{tags[REUSES_RUN]}" if REUSES_RUN in (tags := run.data.tags) else "",
    )
