"""One kgx run: build its parts, answer the questions in parallel, score, log.

Every finished question is one flushed line of ``predictions.jsonl`` in the run's output
directory, which is named by the config hash; a rerun of the same config therefore resumes
where the last one stopped, and Ctrl-C loses nothing that finished.
"""
from __future__ import annotations

import hashlib
import json
import random
import shutil
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from kgx import datasets, methods, metrics
from kgx.config import RunSpec
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.llm.cache import ResponseCache
from kgx.llm.client import LLMClient
from kgx.llm.usage import Meter
from kgx.trace import Trace
from kgx.types import Prediction, Question

# Settings that change where and how a run executes, not what it computes.
NON_RESULT_FIELDS = ("output_dir", "tracking_uri", "experiment", "force", "concurrency", "cache_dir", "progress",
                     "explain")


def config_hash(resolved: dict[str, Any]) -> str:
    """Identity of a run's results: the resolved config without execution settings."""
    identity = {**resolved, "run": {k: v for k, v in resolved["run"].items() if k not in NON_RESULT_FIELDS}}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]


def output_dir(spec: RunSpec, digest: str) -> Path:
    if spec.run.output_dir:
        return Path(spec.run.output_dir)
    return Path("outputs") / "runs" / f"{spec.method.name}-{spec.dataset.name}-{spec.llm.name}-{digest}"


class PredictionLog:
    """``predictions.jsonl``: append-only, one line per finished question, flushed at once."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    def finished(self) -> dict[str, dict[str, Any]]:
        """Records already on disk. A torn last line (the process was killed mid-write) is cut
        off, so that the next append starts on a line of its own."""
        done: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return done
        text = self.path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]
            self.path.write_text(text, encoding="utf-8")
        for line in text.splitlines():
            record = json.loads(line)
            done[record["id"]] = record
        return done

    def set_aside(self) -> Optional[Path]:
        """Move an earlier log out of the way (``run.force``) without deleting it."""
        if not self.path.exists():
            return None
        kept = self.path.with_name(f"predictions.{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
        self.path.rename(kept)
        return kept

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()


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


def skipped(run: Any, out_dir: Path) -> Outcome:
    """The outcome of an earlier FINISHED run of the same config."""
    summary = dict(run.data.metrics)
    return Outcome(summary, [], Path(run.data.tags.get("output_dir", out_dir)), run.info.run_id, 0, 0,
                   int(summary.get("n_questions", 0)), skipped=True)


def answer_one(question: Question, spec: RunSpec, client: LLMClient, kg: Any, out_dir: Path) -> dict[str, Any]:
    """Run the method on one question; any exception becomes a ``status=error`` record."""
    meter, trace = Meter(), Trace()
    metered_kg = MeteredKG(kg, trace)
    seed = int(hashlib.sha256(f"{spec.run.seed}:{question.id}".encode()).hexdigest()[:8], 16)
    ctx = methods.Context(llm=client.bind(meter, trace), params=spec.method, rng=random.Random(seed),
                          trace=trace, kg=metered_kg)
    start = time.perf_counter()
    try:
        prediction = methods.get(spec.method.name)(question, ctx)
    except Exception as exc:  # recorded, never fatal: the question stays in the denominator
        prediction = Prediction(answer="", status="error", reason=f"{type(exc).__name__}: {exc}")
        trace.error = traceback.format_exc()
    latency = time.perf_counter() - start
    trace_file = Path("traces") / f"{_safe(question.id)}.json"
    trace.write(out_dir / trace_file)
    usage = meter.total()
    return {
        "id": question.id,
        "question": question.text,
        "gold": question.answers,
        "prediction": prediction.to_dict(),
        "scores": metrics.score(question, prediction),
        "status": prediction.status,
        "calls": usage.calls,
        "tokens": usage.total_tokens,
        "latency_s": latency,
        "usage": usage.to_dict(),
        "stages": meter.to_dict(),
        "kg": metered_kg.usage.to_dict(),
        "trace": str(trace_file),
    }


def _safe(qid: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in qid)


class Progress:
    """done/total with running hits@1, tokens and cost (tqdm on stderr)."""

    def __init__(self, total: int, done: list[dict[str, Any]], enabled: bool):
        from tqdm import tqdm

        self.bar = tqdm(total=total, initial=len(done), disable=not enabled, unit="q", dynamic_ncols=True)
        self.records = list(done)
        self._show()

    def update(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        self.bar.update(1)
        self._show()

    def _show(self) -> None:
        if not self.records:
            return
        n = len(self.records)
        hits = 100 * sum(r["scores"]["hits1"] for r in self.records) / n
        tokens = sum(r["usage"]["input_tokens"] + r["usage"]["output_tokens"] for r in self.records)
        cost = sum(r["usage"]["cost_usd"] for r in self.records)
        unknown = any(r["usage"]["unpriced_calls"] for r in self.records)
        self.bar.set_postfix_str(f"hits@1={hits:.1f} tok={tokens} cost=${cost:.4f}{'+?' if unknown else ''}")

    def close(self) -> None:
        self.bar.close()


def answer_all(todo: list[Question], spec: RunSpec, client: LLMClient, kg: Any, log: PredictionLog,
               progress: Progress) -> tuple[dict[str, dict[str, Any]], bool]:
    """Answer ``todo`` in a pool of ``spec.workers`` threads, logging each as it finishes.

    On Ctrl-C, queued questions are cancelled and the ones in flight finish and are logged.
    """
    new: dict[str, dict[str, Any]] = {}
    interrupted = False
    pool = ThreadPoolExecutor(max_workers=spec.workers, thread_name_prefix="kgx-q")
    try:
        pending: set[Future] = {pool.submit(answer_one, q, spec, client, kg, log.path.parent) for q in todo}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                record = fut.result()
                log.append(record)
                new[record["id"]] = record
                progress.update(record)
    except KeyboardInterrupt:
        interrupted = True
        pool.shutdown(wait=False, cancel_futures=True)
    finally:
        pool.shutdown(wait=not interrupted)
        progress.close()
    return new, interrupted


def execute(spec: RunSpec, launch_dir: Path, run_name: Optional[str] = None,
            parent_id: Optional[str] = None) -> Outcome:
    """Run ``spec``; a config that already has a FINISHED MLflow run is not run again
    (``run.force`` overrides). ``parent_id`` makes the MLflow run a child of a sweep's run."""
    from kgx.tracking import PARENT_TAG, Tracker, flatten, git_commit

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
    finished = None if spec.run.force else tracker.finished_run(digest)
    if finished is not None:
        return skipped(finished, out_dir)

    out_dir.mkdir(parents=True, exist_ok=True)
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
    done = {qid: r for qid, r in log.finished().items() if qid in {q.id for q in questions}}
    todo = [q for q in questions if q.id not in done]

    tags = {
        "method": spec.method.name, "dataset": spec.dataset.name, "llm": spec.llm.model,
        "llm_config": spec.llm.name, "kg": spec.kg.name, "git_commit": git_commit(Path(__file__).parent),
        "config_hash": digest, "output_dir": str(out_dir),
    }
    if parent_id:
        tags[PARENT_TAG] = parent_id
    name = run_name or f"{spec.method.name}-{spec.dataset.name}-{spec.llm.name}"
    run_id = tracker.start(name, flatten(resolved), tags, resume_id)
    run_id_file.write_text(run_id)

    # wall_s adds up the invocations that built this run, so a resumed run reports its whole cost.
    wall_file = out_dir / "wall_s"
    earlier = float(wall_file.read_text()) if wall_file.exists() and done else 0.0
    if todo:
        client.prepare()
    progress = Progress(len(questions), list(done.values()), spec.run.progress)
    start = time.perf_counter()
    new, interrupted = answer_all(todo, spec, client, kg, log, progress)
    wall_s = earlier + time.perf_counter() - start
    wall_file.write_text(str(wall_s))

    records = [r for q in questions if (r := new.get(q.id) or done.get(q.id))]
    summary = metrics.summarize(records, wall_s)
    tracker.log_metrics(summary)
    _log_artifacts(tracker, out_dir, records)
    _log_explanations(tracker, out_dir, records, spec.run.explain)
    tracker.end("KILLED" if interrupted else "FINISHED")
    billed = sum(r["usage"]["billed_calls"] for r in new.values())
    return Outcome(summary, records, out_dir, run_id, len(new), billed, len(done), interrupted)


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
            explain.write(explain.Graph.from_dict(data), target / _safe(r["id"]))
            written += 1
    if written:
        tracker.log_artifact(target, "explanations")
