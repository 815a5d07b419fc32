"""One kgx run: build its parts, answer the questions in parallel, score, log.

``execute`` is the flow of the design notes: check everything that can fail on bad input, claim
the run's folder (kgx.run.lifecycle), plan from what earlier invocations logged, pre-flight the
backbones, answer in the question loop (kgx.run.loop) with every finished question one flushed line
of ``predictions.jsonl``, then sum the records into the run's figures and log them to MLflow,
with every question's transcript as an MLflow trace (kgx.track.transcripts) built after the loop. A
question that ended in an error is not finished: the run is FAILED, and a rerun computes that
question again.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any, Optional

from kgx import datasets, methods
from kgx.core.faults import Breaker, DiskFull, disk_full_message
from kgx.core.paths import file_name
from kgx.core.trace_store import TraceReader
from kgx.core.types import Question
from kgx.diagnose import crucial
from kgx.kg import open_kg
from kgx.llm.errors import check_keys
from kgx.results.figures import summarize
from kgx.results.record import Record
from kgx.run import preflight
from kgx.run.answering import llm_client, make_reacher, pool, traced_ids
from kgx.run.lifecycle import METRICS_FILE, Outcome, Plan, RunFolder
from kgx.run.loop import LoopResult, Progress, answer_all
from kgx.run.processes import warm
from kgx.run.spec import RunSpec
from kgx.track import transcripts


def execute(
    spec: RunSpec, launch_dir: Path, run_name: Optional[str] = None, parent_id: Optional[str] = None
) -> Outcome:
    """Run ``spec``; a config that already has a FINISHED MLflow run is not run again
    (``run.force`` overrides). ``parent_id`` makes the MLflow run a child of a sweep's run.
    One invocation per config at a time: a second one is refused (locks.Busy), naming the first."""
    from kgx.track import claims
    from kgx.track.tracker import JOB_TAG, PARENT_TAG, Tracker, git_commit, run_params, run_title

    # Everything that can fail on bad input fails here, before any question runs, and before
    # litellm is imported (seconds of it): bad input is told at once.
    methods.prepare(spec.method)
    check_keys([spec.llm, *spec.stages.values()])
    questions = datasets.load(spec.dataset)
    if spec.processes(len(questions)) > 1:
        warm()  # the worker processes' interpreter imports kgx and litellm on another core meanwhile
    kg = open_kg(spec.kg, Path(spec.run.cache_dir), reads=spec.method.horizon() is not None)
    questions = preflight.check(spec, questions, kg)  # topic names -> ids; stops on entities the KG lacks
    crucial.check(spec.kg, spec.dataset.name, questions)  # kg.drop needs each question's gold path
    tracker = Tracker(spec.run, launch_dir)
    folder = RunFolder(spec)
    folder.check_owner()  # a folder of another config's results stops the run before anything is written
    kept = (
        f"the questions answered are kept in {folder.path}: run the same command once the server answers "
        f"(or with run.tracking_uri=... another store), and none is asked again"
    )
    with folder.lock(), tracker.reaching("logging the run", kept):
        folder.check_owner()  # again under the lock: another config may have claimed the folder meanwhile
        claims.reap(tracker)  # runs a killed process left RUNNING are marked KILLED
        tags = {
            "method": spec.method.name,
            "dataset": spec.dataset.name,
            "llm": spec.llm.model,
            "llm_config": spec.llm.name,
            "kg": spec.kg.name,
            "settings": spec.settings.describe(spec.method.name, spec.dataset.name),
            "git_commit": git_commit(Path(__file__).parent),
            "config_hash": folder.digest,
            "output_dir": str(folder.path.resolve()),  # where its answers are, from any directory
            **({PARENT_TAG: parent_id, JOB_TAG: run_name or "job"} if parent_id else {}),
        }
        name = run_title([spec.method.name, spec.dataset.name, spec.llm.name, spec.kg.name], run_name or "")
        done = folder.claim(tracker, name, run_params(spec.resolved()), tags, run_name or "", parent_id)
        if done is not None:
            return done
        try:
            # After the skip: a finished run is reported even while a shared cache server is down.
            client = llm_client(spec)  # a shared cache server is pinged here
            plan = folder.plan(questions)
            client.invocation = plan.invocation
            if plan.todo:  # a broken backbone stops the run here, before the clock and before any question
                client.prepare()
                client.preflight()
        except BaseException:
            tracker.withdraw()  # nothing was asked: the config is free for another invocation
            raise
        # How each backbone was asked for structured output (what llm.structured_output=auto chose).
        modes = ", ".join(f"{backbone}={mode}" for backbone, mode in client.structured_modes().items())
        tracker.client.set_tag(tracker.run_id, "structured_output", modes)
        with folder.mlflow_run(tracker) as run_id:
            reacher = make_reacher(spec, kg)
            traced = traced_ids(questions, spec.run.traces)
            with contextlib.ExitStack() as stack:
                loop = answer_all(
                    plan.todo,
                    pool(stack, spec, plan, client, kg, folder, reacher, traced),
                    folder.log,
                    Progress(len(questions), list(plan.done.values()), spec.run.progress),
                    Breaker(spec.run.max_consecutive_errors),
                    folder.clock(plan),
                )
            if reacher is not None:
                reacher.close()
            outcome = conclude(questions, plan, loop, folder.path, run_id, client.invocation)
            if loop.disk_full is not None:
                stop_on_full_disk(tracker, outcome, loop.disk_full)
            # Exact, beside the answers: MLflow gets them rounded for display (Tracker.log_metrics).
            (folder.path / METRICS_FILE).write_text(json.dumps(outcome.summary, indent=2))
            tracker.log_metrics(outcome.summary)
            tracker.log_outcome(outcome.status, outcome.failures, loop.tripped, outcome.not_started)
            _log_artifacts(tracker, folder.path, outcome.records)
            _log_explanations(tracker, folder.path, outcome.records, spec.run.explain)
            transcripts.log(
                tracker, questions, outcome.records, folder.path, transcripts.setting(spec.run), spec.run.progress
            )
            from kgx.report import (
                log_run_report,  # polars and matplotlib: only once the questions are done
            )

            log_run_report(run_id, tracker.uri, folder.path, outcome.records)
            tracker.end(outcome.status)
    return outcome


def stop_on_full_disk(tracker: Any, outcome: Outcome, exc: OSError) -> None:
    """Log what finished (as far as the disk lets MLflow), end the run FAILED, and raise DiskFull."""
    for log in (
        lambda: tracker.log_metrics(outcome.summary),
        lambda: tracker.log_outcome("FAILED", outcome.failures, outcome.tripped, outcome.not_started),
    ):
        with contextlib.suppress(Exception):  # the tracking store may sit on the same full disk
            log()
    answered = len(outcome.records) - len(outcome.failures)
    raise DiskFull(disk_full_message(exc, f"{answered} questions answered are kept in {outcome.out_dir}"))


def conclude(
    questions: list[Question], plan: Plan, loop: LoopResult, out_dir: Path, run_id: str, invocation: int
) -> Outcome:
    """The run's records in dataset order and its figures. A question the loop did not reach keeps
    its earlier error record: it is still unanswered."""
    records = [r for q in questions if (r := loop.new.get(q.id) or plan.done.get(q.id) or plan.earlier.get(q.id))]
    replaced = [plan.earlier[qid] for qid in loop.new if qid in plan.earlier]
    summary = summarize(records, loop.wall_s, spent=[*plan.superseded, *replaced], unsettled=plan.unsettled)
    unreached = len(questions) - len(records)
    summary["unanswered"] = float(unreached)
    summary["invocations"] = float(invocation)
    billed = sum(r.usage.billed_calls for r in loop.new.values())
    failed = sum(1 for r in loop.new.values() if r.failed)
    return Outcome(
        summary,
        records,
        out_dir,
        run_id,
        len(loop.new) - failed,
        billed,
        len(plan.done),
        loop.interrupted,
        failures=[f for r in records if (f := r.failure)],
        tripped=loop.tripped,
        not_started=unreached,
        retried=sum(1 for qid in loop.new if qid in plan.earlier),
        failed=failed,
    )


def _log_artifacts(tracker: Any, out_dir: Path, records: list[Record]) -> None:
    import polars as pl

    if records:
        flat = [
            {
                "id": r.id,
                "question": r.question,
                "gold": json.dumps(r.gold),
                "answer": r.prediction.answer,
                "answers": r.prediction.answers,
                "status": r.status,
                **r.scores,
                "calls": r.calls,
                "tokens": r.tokens,
                "input_tokens": r.usage.input_tokens,
                "output_tokens": r.usage.output_tokens,
                "latency_s": r.latency_s,
                "trace": r.trace,
                "breakdown": r.breakdown,
                "reachable": None if r.reach is None else r.reach.reachable,
                "left_at": None if r.left_at is None else r.left_at["depth"],
                "entities_shown": r.kg.entities,
                "unnamed_shown": r.kg.unnamed,
            }
            for r in records
        ]
        # Every row decides the columns' types: a column empty in the first 100 rows (left_at, when the
        # first question the method loses comes later) would be typed Null and fail at the first value.
        pl.DataFrame(flat, infer_schema_length=None).write_parquet(out_dir / "predictions.parquet")
    for name in ("config.json", METRICS_FILE, "predictions.jsonl", "predictions.parquet"):
        tracker.log_artifact(out_dir / name)
    if (out_dir / "traces").is_dir() and any(r.trace for r in records):  # run.traces=off: none written
        tracker.log_artifact(out_dir / "traces", "traces")


def _log_explanations(tracker: Any, out_dir: Path, records: list[Record], limit: int) -> None:
    """Text and pictures of the first ``limit`` explained questions, in dataset order; from their
    traces, so none under ``run.traces=off`` (nor matplotlib's import, seconds of it)."""
    target = out_dir / "explanations"
    if target.exists():
        shutil.rmtree(target)
    if not limit or not any(r.trace for r in records):
        return
    graphs = TraceReader(out_dir).explanations(((r.id, r.trace) for r in records), limit)
    if not graphs:
        return
    from kgx.core.graph import Graph
    from kgx.explain.draw import write

    for qid, data in graphs.items():
        write(Graph.from_dict(data), target / file_name(qid))
    tracker.log_artifact(target, "explanations")
