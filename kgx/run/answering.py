"""Answering one question, and the pool that answers a run's questions: threads in the run's
process, or ``run.processes`` worker processes (kgx.run.processes) that build their own parts once
and answer exactly as the run's own process does. Split from kgx.run.execute, which owns the run's
flow around the question loop."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import multiprocessing.util
import random
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from kgx import methods
from kgx.core import metrics
from kgx.core.config import share_size
from kgx.core.faults import Failure, classify
from kgx.core.trace import Trace
from kgx.core.trace_store import TraceWriter
from kgx.core.types import Prediction, Question
from kgx.diagnose import breakdown, crucial, gold_path
from kgx.diagnose.gold_path import gold_hint
from kgx.diagnose.reach import Reacher
from kgx.kg import open_kg, unnamed_possible
from kgx.kg.metered import MeteredKG
from kgx.llm.cache import open_cache
from kgx.llm.meter import Meter
from kgx.results.billing import BillingLog
from kgx.results.record import Record
from kgx.run.lifecycle import Plan, RunFolder
from kgx.run.loop import Start, in_threads
from kgx.run.processes import ProcessPool
from kgx.run.spec import RunSpec

if TYPE_CHECKING:
    from kgx.llm.client import LLMClient


def answer_one(
    question: Question,
    spec: RunSpec,
    client: "LLMClient",
    kg: Any,
    traces: Optional[TraceWriter],
    reacher: Optional[Reacher] = None,
    billing: Optional[BillingLog] = None,
    traced: Optional[set[str]] = None,
) -> Record:
    """Run the method on one question; any exception becomes a ``status=error`` record whose
    ``error`` says whether the infrastructure or the method failed (kgx.core.faults). Reachability
    comes first (the oracle backbone is driven by its gold paths), on the KG itself, not metered
    as the method's; the facts of the failure breakdown (kgx.diagnose.breakdown) come after.
    The trace is written to ``traces`` when ``traced`` (ids; None = every question) holds the question."""
    cpu = time.thread_time()  # what the estimate's wall model needs (kgx.estimate.wall): CPU and reachability
    meter, trace = Meter(billed=billing.writer(question.id) if billing else None), Trace()
    kg = kg.for_question(question.id)  # its own subgraph under kg.scope=question (kgx.kg.subgraph)
    horizon = spec.method.horizon()
    reach = reacher.check(question, horizon) if reacher is not None and horizon is not None else None
    gold = gold_hint(question, reach, spec.kg.data_format, kg) if client.wants_gold() else None
    # kg.drop: the method reads the KG without the question's dropped gold-path triples; the oracle's
    # gold (above) is the whole KG's, the reach behind the failure labels the KG the method reads.
    cut = crucial.cut(question, kg, spec.kg, spec.run.seed) if horizon is not None else crucial.Cut(kg)
    if cut.removed and reach is not None:
        reach = reacher.check(question, horizon, cut.kg)
    reach_cpu = time.thread_time() - cpu
    metered_kg = MeteredKG(cut.kg, trace, spec.kg.max_candidates)
    crucial.record(cut, metered_kg.usage, trace)
    seed = int(hashlib.sha256(f"{spec.run.seed}:{question.id}".encode()).hexdigest()[:8], 16)
    from kgx.llm.question import QuestionLLM  # with litellm: imported once input is known good

    ctx = methods.Context(
        llm=QuestionLLM(client, meter, trace, gold=gold),
        params=spec.method,
        rng=random.Random(seed),
        trace=trace,
        kg=metered_kg,
    )
    failure: Optional[Failure] = None
    start = time.perf_counter()
    try:
        prediction = methods.get(spec.method.name)(question, ctx)
    except Exception as exc:  # recorded, never fatal: the question stays in the denominator
        failure = classify(exc)
        prediction = Prediction(answer="", status="error", reason=f"{type(exc).__name__}: {exc}")
        trace.error = traceback.format_exc()
    latency = time.perf_counter() - start
    record = Record(
        id=question.id,
        question=question.text,
        gold=question.answers,
        prediction=prediction,
        scores=metrics.score(question, prediction),
        status=prediction.status,
        usage=meter.total(),
        stages=dict(meter.stages),
        kg=metered_kg.usage,
        latency_s=latency,
        reach_cpu_s=reach_cpu,
        error=failure,
        reach=reach,
        shown=None if failure else breakdown.shown(trace, question.answers),
    )
    if reach is not None:
        trace.note("reach", breakdown.describe(reach), **reach.to_dict())
        if record.breakdown == "not_retrieved":
            record.left_at = breakdown.left_at(reach, trace)
            if record.left_at:
                record.left_at.update(gold_path.limit(question, reach, cut.kg, spec.kg.data_format))
                record.left_at["why"] += f"; {record.left_at['limit_why']}"
                trace.note("failure", record.left_at["why"], **record.left_at)
    if traces is not None and (traced is None or question.id in traced):
        record.trace = traces.add(question.id, question.topic_entities, trace)
    record.cpu_s = time.thread_time() - cpu - reach_cpu
    return record


def traced_ids(questions: list[Question], setting: str) -> Optional[set[str]]:
    """The questions whose trace ``run.traces`` asks for (None: all of them)."""
    return None if setting == "all" else {q.id for q in questions[: int(share_size(setting, len(questions)))]}


def make_reacher(spec: RunSpec, kg: Any) -> Optional[Reacher]:
    """The run's reachability checker, for a method that reads a KG; whether the KG may hold
    CVTs is asked (of its sources) only for a horizon that reads them for free."""
    horizon = spec.method.horizon()
    if horizon is None:
        return None
    unnamed = unnamed_possible(spec.kg) if horizon.cvt_free else True
    return Reacher(kg, kg_key(spec), Path(spec.run.cache_dir), unnamed=unnamed)


def pool(
    stack: contextlib.ExitStack,
    spec: RunSpec,
    plan: Plan,
    client: "LLMClient",
    kg: Any,
    folder: RunFolder,
    reacher: Any,
    traced: Optional[set[str]],
) -> Start:
    """Threads in this process, or ``run.processes`` worker processes sharing the same questions in
    flight (kgx.run.processes; started here, before the clock, and ended with ``stack``)."""
    processes = spec.processes(len(plan.todo))
    if processes < 2:
        traces = stack.enter_context(TraceWriter(folder.path, plan.invocation)) if traced != set() else None
        answer = lambda q: answer_one(q, spec, client, kg, traces, reacher, folder.billing, traced)  # noqa: E731
        return in_threads(answer, spec.workers, len(plan.todo))
    build = functools.partial(
        answerer, spec, folder.path, plan.invocation, client.modes.probed(), folder.billing.path, traced
    )
    return stack.enter_context(ProcessPool.open(processes, min(spec.workers, len(plan.todo)), build)).start


def llm_client(spec: RunSpec) -> "LLMClient":
    """The run's LLM client over its response cache (none when no backbone caches)."""
    wants_cache = any(b.cache for b in [spec.llm, *spec.stages.values()])
    cache = open_cache(spec.run) if wants_cache else None
    from kgx.llm.client import LLMClient

    return LLMClient(spec.llm, spec.stages, cache, seed=spec.run.seed)


def answerer(
    spec: RunSpec,
    out_dir: Path,
    invocation: int,
    forms: dict[str, str],
    billing_path: Path,
    traced: Optional[set[str]],
) -> Callable[[Question], Record]:
    """A worker process's parts, built once there (kgx.run.processes): its own KG handle, response
    cache connection, LLM client (with the forms pre-flight chose: no server is probed again),
    reachability checker, billing log (appended line by line, as the run's own process does) and
    trace shards (ended as the process ends); it answers a question as the run's own process does."""
    kg = open_kg(spec.kg, Path(spec.run.cache_dir), reads=spec.method.horizon() is not None)
    client = llm_client(spec)
    client.invocation = invocation
    client.modes.adopt(forms)
    client.prepare()
    reacher, billing = make_reacher(spec, kg), BillingLog(billing_path)
    traces = TraceWriter(out_dir, invocation) if traced != set() else None
    if traces is not None:
        multiprocessing.util.Finalize(None, traces.close, exitpriority=0)  # run as a worker process ends
    return lambda q: answer_one(q, spec, client, kg, traces, reacher, billing, traced)


def kg_key(spec: RunSpec) -> str:
    """What identifies the KG's content for the reachability cache: its whole config, but for
    ``kg.drop`` (a question's dropped view is a view of its own, ``SparqlKG.without``)."""
    content = {k: v for k, v in asdict(spec.kg).items() if k not in ("drop", "drop_seed")}
    return json.dumps(content, sort_keys=True, default=str)
