"""One kgx run: build its parts, answer the questions in parallel, score, log.

Every finished question is one flushed line of ``predictions.jsonl`` in the run's output
directory, which is named by the config hash; a rerun of the same config therefore resumes
where the last one stopped, and Ctrl-C loses nothing that finished. A question that ended in an
error is not finished: the run is FAILED, and the rerun computes that question again.
"""
from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
import traceback
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from kgx import datasets, locks, methods, metrics
from kgx.config import RunSpec
from kgx.failures import Breaker, Failure, classify
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.llm.cache import ResponseCache
from kgx.llm.client import LLMClient
from kgx.llm.usage import Meter
from kgx.loop import LoopResult, Progress, WallClock, answer_all
from kgx.predlog import PredictionLog
from kgx.trace import Trace
from kgx.types import Prediction, Question

# Settings that change where and how a run executes, not what it computes.
NON_RESULT_FIELDS = ("output_dir", "tracking_uri", "experiment", "force", "concurrency", "cache_dir", "progress",
                     "explain", "max_consecutive_errors")


def config_hash(resolved: dict[str, Any]) -> str:
    """Identity of a run's results: the resolved config without execution settings."""
    identity = {**resolved, "run": {k: v for k, v in resolved["run"].items() if k not in NON_RESULT_FIELDS}}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]


def output_dir(spec: RunSpec, digest: str) -> Path:
    if spec.run.output_dir:
        return Path(spec.run.output_dir)
    return Path("outputs") / "runs" / f"{spec.method.name}-{spec.dataset.name}-{spec.llm.name}-{digest}"


def file_name(qid: str) -> str:
    """A file name per question id, distinct for distinct ids (``x/y`` and ``x_y`` differ):
    percent-encoding, with a hash in place of the tail of very long ids."""
    name = urllib.parse.quote(qid, safe="")
    if len(name) > 120 or name.startswith("."):
        name = name[:100].lstrip(".") + "-" + hashlib.sha256(qid.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return name


@dataclass
class Outcome:
    summary: dict[str, float]
    records: list[dict[str, Any]]
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

    @property
    def status(self) -> str:
        """The MLflow status: FINISHED only when every question has an answer."""
        if self.skipped:
            return "FINISHED"
        if self.interrupted:
            return "KILLED"
        return "FAILED" if self.failures or self.tripped or self.not_started else "FINISHED"


def skipped(run: Any, out_dir: Path) -> Outcome:
    """The outcome of an earlier FINISHED run of the same config."""
    summary = dict(run.data.metrics)
    return Outcome(summary, [], Path(run.data.tags.get("output_dir", out_dir)), run.info.run_id, 0, 0,
                   int(summary.get("n_questions", 0)), skipped=True)


def answer_one(question: Question, spec: RunSpec, client: LLMClient, kg: Any, out_dir: Path) -> dict[str, Any]:
    """Run the method on one question; any exception becomes a ``status=error`` record whose
    ``error`` says whether the infrastructure or the method failed (kgx.failures)."""
    meter, trace = Meter(), Trace()
    metered_kg = MeteredKG(kg, trace)
    seed = int(hashlib.sha256(f"{spec.run.seed}:{question.id}".encode()).hexdigest()[:8], 16)
    ctx = methods.Context(llm=client.bind(meter, trace), params=spec.method, rng=random.Random(seed),
                          trace=trace, kg=metered_kg)
    failure: Optional[Failure] = None
    start = time.perf_counter()
    try:
        prediction = methods.get(spec.method.name)(question, ctx)
    except Exception as exc:  # recorded, never fatal: the question stays in the denominator
        failure = classify(exc)
        prediction = Prediction(answer="", status="error", reason=f"{type(exc).__name__}: {exc}")
        trace.error = traceback.format_exc()
    latency = time.perf_counter() - start
    trace_file = Path("traces") / f"{file_name(question.id)}.json"
    trace.write(out_dir / trace_file)
    usage = meter.total()
    return {
        "id": question.id,
        "question": question.text,
        "gold": question.answers,
        "prediction": prediction.to_dict(),
        "scores": metrics.score(question, prediction),
        "status": prediction.status,
        "error": failure.to_dict() if failure else None,
        "calls": usage.calls,
        "tokens": usage.total_tokens,
        "latency_s": latency,
        "usage": usage.to_dict(),
        "stages": meter.to_dict(),
        "kg": metered_kg.usage.to_dict(),
        "trace": str(trace_file),
    }


def failure_of(record: dict[str, Any]) -> Optional[Failure]:
    """The record's failure; records written before failures were classified count as method errors."""
    if record["status"] != "error":
        return None
    if record.get("error"):
        return Failure.from_dict(record["error"])
    return Failure("method", False, "unknown", record["prediction"].get("reason", ""))


def execute(spec: RunSpec, launch_dir: Path, run_name: Optional[str] = None,
            parent_id: Optional[str] = None) -> Outcome:
    """Run ``spec``; a config that already has a FINISHED MLflow run is not run again
    (``run.force`` overrides). ``parent_id`` makes the MLflow run a child of a sweep's run.
    One invocation per config at a time: a second one is refused (locks.Busy), naming the first."""
    from kgx.tracking import Tracker

    resolved = spec.resolved()
    digest = config_hash(resolved)
    out_dir = output_dir(spec, digest)
    cache_dir = Path(spec.run.cache_dir)

    # Everything that can fail on bad input fails here, before any question runs.
    methods.prepare(spec.method)
    wants_cache = any(b.cache for b in [spec.llm, *spec.stages.values()])
    cache = ResponseCache(cache_dir / "llm.sqlite") if wants_cache else None
    client = LLMClient(spec.llm, spec.stages, cache, seed=spec.run.seed)
    client.check_keys()
    questions = datasets.load(spec.dataset)
    kg = open_kg(spec.kg, cache_dir)
    tracker = Tracker(spec.run, launch_dir)
    with locks.exclusive(out_dir / ".lock", f"this config ({out_dir})"):
        finished = None if spec.run.force else tracker.finished_run(digest)
        if finished is not None:
            return skipped(finished, out_dir)
        return _execute(spec, resolved, digest, out_dir, questions, client, kg, tracker, run_name, parent_id)


def _execute(spec: RunSpec, resolved: dict[str, Any], digest: str, out_dir: Path, questions: list[Question],
             client: LLMClient, kg: Any, tracker: Any, run_name: Optional[str],
             parent_id: Optional[str]) -> Outcome:
    from kgx.tracking import PARENT_TAG, flatten, git_commit

    (out_dir / "config.json").write_text(json.dumps(resolved, indent=2))
    log = PredictionLog(out_dir / "predictions.jsonl")
    run_id_file = out_dir / "mlflow_run_id"
    resume_id = None
    if spec.run.force:
        log.set_aside()
        if (out_dir / "traces").exists():
            shutil.rmtree(out_dir / "traces")
    elif run_id_file.exists():
        resume_id = run_id_file.read_text().strip()
    contents = log.read()
    ids = {q.id for q in questions}
    earlier = {qid: r for qid, r in contents.latest.items() if qid in ids}
    done = {qid: r for qid, r in earlier.items() if r["status"] != "error"}
    todo = [q for q in questions if q.id not in done]
    invocations = out_dir / "invocations"
    client.invocation = (int(invocations.read_text()) if invocations.exists() and not spec.run.force else 0) + 1
    invocations.write_text(str(client.invocation))
    if todo:  # a broken backbone stops the run here, before the clock and before any question
        client.prepare()
        client.preflight()

    tags = {
        "method": spec.method.name, "dataset": spec.dataset.name, "llm": spec.llm.model,
        "llm_config": spec.llm.name, "kg": spec.kg.name, "git_commit": git_commit(Path(__file__).parent),
        "config_hash": digest, "output_dir": str(out_dir),
        # How each backbone was asked for structured output (what llm.structured_output=auto chose).
        "structured_output": ", ".join(f"{name}={mode}" for name, mode in client.structured_modes().items()),
    }
    if parent_id:
        tags[PARENT_TAG] = parent_id
    name = run_name or f"{spec.method.name}-{spec.dataset.name}-{spec.llm.name}"
    run_id = tracker.start(name, flatten(resolved), tags, resume_id)
    run_id_file.write_text(run_id)
    try:
        return _answer_and_log(spec, out_dir, questions, client, kg, tracker, log, contents.superseded,
                               earlier, done, todo, run_id)
    except BaseException as exc:  # the MLflow run must never stay RUNNING
        tracker.end("KILLED" if isinstance(exc, KeyboardInterrupt) else "FAILED")
        raise


def _answer_and_log(spec: RunSpec, out_dir: Path, questions: list[Question], client: LLMClient, kg: Any,
                    tracker: Any, log: PredictionLog, superseded: list[dict[str, Any]],
                    earlier: dict[str, dict[str, Any]], done: dict[str, dict[str, Any]],
                    todo: list[Question], run_id: str) -> Outcome:
    # wall_s adds up the invocations that built this run, so a resumed run reports its whole cost.
    wall_file = out_dir / "wall_s"
    clock = WallClock(wall_file, float(wall_file.read_text()) if wall_file.exists() and earlier else 0.0)
    progress = Progress(len(questions), list(done.values()), spec.run.progress)
    loop: LoopResult = answer_all(todo, lambda q: answer_one(q, spec, client, kg, out_dir), spec.workers, log,
                                  progress, Breaker(spec.run.max_consecutive_errors), clock)
    # A question the loop did not reach keeps its earlier error record: it is still unanswered.
    records = [r for q in questions if (r := loop.new.get(q.id) or done.get(q.id) or earlier.get(q.id))]
    replaced = [earlier[qid] for qid in loop.new if qid in earlier]
    summary = metrics.summarize(records, clock.elapsed(), spent=[*superseded, *replaced])
    failures = [f for r in records if (f := failure_of(r))]
    unreached = len(questions) - len(records)
    outcome = Outcome(summary, records, out_dir, run_id, len(loop.new),
                      sum(r["usage"]["billed_calls"] for r in loop.new.values()), len(done), loop.interrupted,
                      failures=failures, tripped=loop.tripped, not_started=unreached,
                      retried=sum(1 for qid in loop.new if qid in earlier))
    summary["unanswered"] = float(unreached)
    summary["invocations"] = float(client.invocation)
    tracker.log_metrics(summary)
    tracker.log_outcome(outcome.status, failures, loop.tripped, unreached)
    _log_artifacts(tracker, out_dir, records)
    _log_explanations(tracker, out_dir, records, spec.run.explain)
    tracker.end(outcome.status)
    return outcome


def _log_artifacts(tracker: Any, out_dir: Path, records: list[dict[str, Any]]) -> None:
    import polars as pl

    if records:
        flat = [{
            "id": r["id"], "question": r["question"], "gold": json.dumps(r["gold"]),
            "answer": r["prediction"]["answer"], "answers": r["prediction"]["answers"],
            "status": r["status"], **r["scores"], "calls": r["calls"], "tokens": r["tokens"],
            "input_tokens": r["usage"]["input_tokens"], "output_tokens": r["usage"]["output_tokens"],
            "latency_s": r["latency_s"], "trace": r["trace"],
        } for r in records]
        pl.DataFrame(flat).write_parquet(out_dir / "predictions.parquet")
    for name in ("config.json", "predictions.jsonl", "predictions.parquet"):
        tracker.log_artifact(out_dir / name)
    tracker.log_artifact(out_dir / "traces", "traces")


def _log_explanations(tracker: Any, out_dir: Path, records: list[dict[str, Any]], limit: int) -> None:
    """Text and pictures of the first ``limit`` explained questions, in dataset order."""
    from kgx import explain

    target = out_dir / "explanations"
    if target.exists():
        shutil.rmtree(target)
    written = 0
    for r in records:
        if written >= limit:
            break
        trace_path = out_dir / r["trace"]
        if not trace_path.exists():
            continue
        data = json.loads(trace_path.read_text()).get("explanation")
        if data:
            explain.write(explain.Graph.from_dict(data), target / file_name(r["id"]))
            written += 1
    if written:
        tracker.log_artifact(target, "explanations")
