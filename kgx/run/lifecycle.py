"""The life of a run, in one place: its identity, its folder, what earlier invocations left, the
wall time, and the MLflow run.

A run's identity is the hash of its config without execution settings (``RunSpec.identity``);
its folder is named by that hash, so the same config always finds its own ``predictions.jsonl``.
A rerun reads that log back: answered questions are kept, questions whose last record is an
error are planned again, and what every invocation paid for stays counted. One invocation per
config runs at a time (a lock file in the folder), and the MLflow run is never left RUNNING.

A folder belongs to one config: its manifest (``manifest.json``) records the config hash, and a run
of another config given the same ``run.output_dir`` stops before any question, touching nothing
there (:meth:`RunFolder.check_owner`). Otherwise it would resume the other config's answers as its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from kgx.core import locks
from kgx.core.config import ConfigError
from kgx.core.faults import Failure
from kgx.core.types import Question
from kgx.core.usage import Usage
from kgx.results.billing import BillingLog, unsettled
from kgx.results.predlog import PredictionLog
from kgx.results.record import Record
from kgx.run.loop import WallClock
from kgx.run.spec import RunSpec
from kgx.track import claims, same_config
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


MANIFEST = "manifest.json"  # in a run's folder: the config hash that owns it, and what that config is
METRICS_FILE = "metrics.json"  # in a run's folder: its figures exact (MLflow shows them rounded)
LEGACY_MARKS = ("predictions.jsonl", "mlflow_run_id")  # results a folder from before manifests holds


def describe(resolved: dict[str, Any]) -> str:
    """A config in a few words: ``tog on metaqa_1hop with scripted``."""
    name = lambda section: (resolved.get(section) or {}).get("name", "?")  # noqa: E731
    return f"{name('method')} on {name('dataset')} with {name('llm')}"


def differences(mine: Any, theirs: Any, identity: Any, path: str = "") -> list[str]:
    """The fields of the run's identity in which two resolved configs differ: ``method.name (io, tog)``."""
    if isinstance(identity, dict):
        mine, theirs = mine if isinstance(mine, dict) else {}, theirs if isinstance(theirs, dict) else {}
        return [
            d
            for key, sub in identity.items()
            for d in differences(mine.get(key), theirs.get(key), sub, f"{path}.{key}" if path else key)
        ]
    return [] if mine == theirs else [f"{path} ({theirs} there, {mine} here)"]


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

    def check_owner(self) -> None:
        """Stop, before anything is written, when the folder holds another config's results: a
        ``run.output_dir`` shared by two configs would resume one's answers as the other's. A
        folder from before manifests is judged by its config.json."""
        manifest, config = self.path / MANIFEST, self.path / "config.json"
        recorded = json.loads(config.read_text()) if config.exists() else {}
        mine, identity = self.spec.resolved(), self.spec.identity()
        if manifest.exists():
            owner = json.loads(manifest.read_text())
            if owner.get("config_hash") == self.digest:
                return
            other = f"{owner.get('run', '?')} (config hash {owner.get('config_hash', '?')})"
        elif recorded and any((self.path / mark).exists() for mark in LEGACY_MARKS):
            if not differences(mine, recorded, identity):
                return
            other = describe(recorded)
        else:
            return
        changed = differences(mine, recorded, identity)
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        detail = f"; they differ in {', '.join(changed[:3])}{more}" if changed else ""
        raise ConfigError(
            f"run.output_dir={self.path} holds the results of another config: {other}; this run is "
            f"{describe(mine)} (config hash {self.digest}){detail}. Nothing there was touched: give this "
            f"run another run.output_dir, or leave run.output_dir unset (each config then gets its own "
            f"folder under outputs/runs/)"
        )

    def lock(self) -> contextlib.AbstractContextManager:
        """A second invocation of the same config is refused (locks.Busy), naming the first."""
        return locks.exclusive(self.path / ".lock", f"this config ({self.path})")

    def plan(self, questions: list[Question]) -> Plan:
        """Read what earlier invocations logged (``run.force``: set it aside and start over)."""
        force = self.spec.run.force
        self.path.mkdir(parents=True, exist_ok=True)
        resolved = self.spec.resolved()
        (self.path / "config.json").write_text(json.dumps(resolved, indent=2))
        manifest = {"config_hash": self.digest, "run": describe(resolved)}
        (self.path / MANIFEST).write_text(json.dumps(manifest, indent=2))
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

    def claim(
        self, tracker: Any, name: str, params: dict[str, str], tags: dict[str, str], job: str, parent_id: Optional[str]
    ) -> Optional[Outcome]:
        """Decide whether this invocation computes the config, before anything is billed: a FINISHED
        run of it anywhere in the store makes it a skip (returned); another live run of it ahead of
        this one is waited for, then the decision is taken again; else the MLflow run is started (or
        resumed) as the config's claim (kgx.track.claims) and None is returned."""
        force = self.spec.run.force
        while True:
            finished = None if force else same_config.finished_run(tracker, self.digest, job)
            if finished is not None:
                if parent_id:
                    tracker.reuse(finished, parent_id, job)
                return skipped(finished, self.path)
            owner = {claims.OWNER_TAG: claims.owner_tag(), claims.HEARTBEAT_TAG: f"{time.time():.0f}"}
            tracker.start(name, params, {**tags, **owner}, self.resume_id)
            claims.take_ticket(tracker, self.digest)
            first = claims.ahead(tracker, self.digest)
            if first is None:
                break
            tracker.withdraw()
            claims.wait_for(tracker, first)
        if not force:
            try:
                same_config.check_folder(tracker, self.digest, self.path)
            except BaseException:
                tracker.withdraw()
                raise
        return None

    @contextlib.contextmanager
    def mlflow_run(self, tracker: Any) -> Iterator[str]:
        """The claimed MLflow run while the questions are answered and logged, its heartbeat
        renewed; an exception ends it KILLED (Ctrl-C) or FAILED."""
        run_id = tracker.run_id
        (self.path / "mlflow_run_id").write_text(run_id)
        try:
            with claims.heartbeat(tracker.client, run_id):
                yield run_id
        except BaseException as exc:
            if not isinstance(exc, TrackingUnavailable):  # a server that is down cannot be told either
                # Best effort: on a full disk the store may fail too, and the cause must not be masked.
                with contextlib.suppress(Exception):
                    tracker.end("KILLED" if isinstance(exc, KeyboardInterrupt) else "FAILED")
            raise


def skipped(run: Any, out_dir: Path) -> Outcome:
    """The outcome of an earlier FINISHED run of the same config: its exact figures from its
    folder's ``metrics.json`` (MLflow's are rounded), else, for a folder gone, MLflow's."""
    folder = Path(run.data.tags.get("output_dir", out_dir))
    exact = folder / METRICS_FILE
    summary = json.loads(exact.read_text()) if exact.exists() else dict(run.data.metrics)
    return Outcome(
        summary,
        [],
        folder,
        run.info.run_id,
        0,
        0,
        int(summary.get("n_questions", 0)),
        skipped=True,
        reuses=f"{tags[REUSES_EXPERIMENT]}/{tags[REUSES_RUN]}" if REUSES_RUN in (tags := run.data.tags) else "",
    )
