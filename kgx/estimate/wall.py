"""A full run's wall time from its pilot (``kgx.estimate.model``): the question loop as a queue.

A run's loop keeps w questions in flight (``run.concurrency``, capped by ``llm.max_parallel``) in
the threads of one interpreter. A question's time is of two kinds (``Record``): CPU, which the
interpreter runs one thread at a time (the GIL: the method, scoring, the trace, an embedded KG's
queries and reachability on it), and waiting, which the w questions do side by side (provider
calls, an endpoint KG's queries). Counting only the provider's latency (N × latency / w) misses
most of a KG method's time: StructGPT on 300 MetaQA questions at 0.2 s per call, 14 s predicted
that way against 39 s measured.

So the loop is a closed queueing network of w customers (Lazowska et al., *Quantitative System
Performance*, 1984, ch. 5 and 6): one queueing centre of demand C (CPU seconds a question) and a
delay centre of demand Z (waiting seconds a question). Its throughput X(w) comes from exact Mean
Value Analysis, the wall time of N questions is N / X(w). Whatever the scheduling, it lies between
the asymptotic bound ``max(N·C, N·(C + Z)/w)`` and the pessimistic one, where every question
finds the w - 1 others queued at the CPU: ``N·(C + Z)/w + N·C·(w - 1)/w``. Those two bounds, taken
at the low and high side of C and Z's own intervals, are the interval: narrow where one resource
dominates, up to twice where both weigh alike. The wall is also never below the slowest pilot
question nor below what the rate limits impose. Z is the least of two upper bounds (``waiting``):
the provider calls' time (which holds their own CPU) and the question's latency less its CPU
(which holds the time it queued for the CPU, which the model queues itself).

Reachability runs before each question's method on a cold cache, and costs nothing once cached
(``kgx.diagnose.reach_cache``, per KG, shared by every run): the pilot measures the cold cost of
the questions it checked, the full run pays it only for the job's questions not yet in the cache
(the pilot's own are in it now), counted by looking each one up. The cost is remembered per KG
and horizon under ``run.cache_dir`` (``estimate_latency.json``, beside the seconds per provider
call) for a pilot whose checks were all cached.

Thread CPU seconds do not stretch when other processes hold the machine's cores; the loop's wall
does. The share of a core the pilot's own loop got (``core_share``) runs the value and the top of
the interval; the bottom stays at a whole core, since the load may lift.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from kgx.estimate.interval import Figure, total_of

if TYPE_CHECKING:
    from kgx.core.types import Question
    from kgx.results.record import Record
    from kgx.run.spec import RunSpec

LATENCY_FILE = "estimate_latency.json"  # under run.cache_dir: seconds per provider call, reachability's cost
Total = Callable[[list[float]], Figure]  # a pilot's per-question samples -> the job's total
NOTHING = Figure(0.0, 0.0, 0.0)
MIN_SHARE = 0.01  # the least share of a core core_share fits
FIT_CPU = 1.0  # CPU seconds a pilot round needs for core_share to fit the share on it (thread start-up aside)


@dataclass(frozen=True)
class Demand:
    """Seconds a question spends on the CPU (one at a time) and waiting (side by side)."""

    cpu: float
    wait: float


def throughput(demand: Demand, inflight: int) -> float:
    """Questions per second with ``inflight`` in the loop: exact Mean Value Analysis of one
    queueing centre (CPU) and one delay centre (waiting), population 1 to ``inflight``."""
    queued, rate = 0.0, 0.0
    for k in range(1, inflight + 1):
        residence = demand.cpu * (1 + queued)
        rate = k / (residence + demand.wait) if residence + demand.wait else float("inf")
        queued = rate * residence
    return rate


def loop_wall(questions: int, low: Demand, value: Demand, high: Demand, inflight: int, share: float = 1.0) -> Figure:
    """The loop's wall time for ``questions`` (module docstring): Mean Value Analysis at the
    demands' value, the asymptotic bound at their low side on a whole core, the pessimistic one at
    their high side; the value and the top with the CPU at ``share`` of a core."""
    w = max(1, min(inflight, questions))
    rate = throughput(Demand(value.cpu / share, value.wait), w)
    return Figure(
        questions / rate if rate else 0.0,
        questions * max(low.cpu, (low.cpu + low.wait) / w),
        questions * ((high.cpu / share + high.wait) / w + high.cpu / share * (w - 1) / w),
    )


def remembered(spec: RunSpec, key: str, value: Any = None) -> Any:
    """``value`` kept under ``key`` in ``<run.cache_dir>/estimate_latency.json``, or when None the
    value an earlier pilot kept there (None if none did)."""
    path = Path(spec.run.cache_dir) / LATENCY_FILE
    known = json.loads(path.read_text()) if path.exists() else {}
    if value is None:
        return known.get(key)
    known[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(known, indent=1, sort_keys=True))
    return value


def reach_key(spec: RunSpec) -> str:
    """The remembered cold reachability cost's key: the KG's content and the method's horizon."""
    from kgx.run.answering import kg_key

    horizon = spec.method.horizon()
    digest = hashlib.sha256(kg_key(spec).encode()).hexdigest()[:16]
    depth = f"depth {horizon.depth}{' cvt-free' if horizon.cvt_free else ''}" if horizon else "no horizon"
    return f"reach {spec.kg.name} {digest} {depth}"


def uncached(spec: RunSpec, questions: list[Question]) -> int:
    """How many of ``questions`` the reachability cache does not hold for this method's horizon:
    the ones the full run checks cold. Questions whose topics the run still has to resolve to KG
    ids, or whose KG is their own subgraph (``kg.scope=question`` views), count as cold."""
    from kgx.run.answering import make_reacher

    horizon = spec.method.horizon()
    if horizon is None:
        return 0
    reacher = make_reacher(spec, None)  # the run's own checker without a KG: lookups only, never a search
    try:  # on the questions before topic resolution
        return sum(not reacher.cached(q, horizon) for q in questions)
    finally:
        reacher.close()


def cold_cost(spec: RunSpec, records: list[Record]) -> tuple[list[Record], Optional[Demand]]:
    """The pilot questions whose reachability was searched (not cached), and the mean cold cost
    per question: theirs, else an earlier pilot's (None when no pilot measured one)."""
    cold = [r for r in records if r.reach is not None and not r.reach.cached]
    key = reach_key(spec)
    if cold:
        cpu = sum(r.reach_cpu_s for r in cold) / len(cold)
        wait = sum(reach_wait(r, spec.kg.backend == "endpoint") for r in cold) / len(cold)
        remembered(spec, key, [cpu, wait])
        return cold, Demand(cpu, wait)
    found = remembered(spec, key)
    return cold, None if found is None else Demand(*found)


def scaled(samples: list[float], left: int) -> Figure:
    """The total over ``left`` more questions like ``samples``, with its 95% interval."""
    if not any(samples):  # no KG waiting (an embedded KG's checks are all CPU): nothing, not an open interval
        return NOTHING
    population = len(samples) + left
    figure = total_of(samples, [""] * len(samples), {"": population})
    return Figure(*(x * left / population for x in (figure.value, figure.low, figure.high)))


def reach_totals(spec: RunSpec, records: list[Record], cold_left: int) -> tuple[Figure, Figure, list[str]]:
    """CPU and waiting seconds of the full run's cold reachability checks (``cold_left`` of its
    questions), and what the note says of them."""
    cold, per_cold = cold_cost(spec, records)
    if not cold_left:
        return NOTHING, NOTHING, []
    if per_cold is None:
        return NOTHING, NOTHING, ["wall without reachability: no pilot measured it on a cold cache"]
    if cold:
        cpu = scaled([r.reach_cpu_s for r in cold], cold_left)
        wait = scaled([reach_wait(r, spec.kg.backend == "endpoint") for r in cold], cold_left)
    else:
        cpu, wait = (Figure(*(x * cold_left,) * 3) for x in (per_cold.cpu, per_cold.wait))
    earlier = "" if cold else ", an earlier pilot's"
    each = per_cold.cpu + per_cold.wait
    return cpu, wait, [f"wall with reachability on a cold cache for {cold_left} questions ({each:.2f}s each{earlier})"]


def waiting(record: Record, remote: bool, per_call: float = 0.0) -> float:
    """Seconds the question waited off the CPU: its provider calls' time and, on a ``remote``
    (endpoint) KG, its queries' (an embedded KG's queries are CPU), but never more than its
    latency less its CPU; each cached call counted at ``per_call`` (the full run pays for it).
    Both are upper bounds of the waiting and the least is taken: the calls' time holds their own
    CPU (all of it when the provider has no latency, like the scripted backbone at 0 s), the
    latency less the CPU holds the time it queued for the CPU, which the model queues itself."""
    kg = record.kg.latency_s if remote else 0.0
    off_cpu = max(0.0, record.latency_s - record.cpu_s)
    return min(record.usage.latency_s + kg, off_cpu) + record.usage.cached_calls * per_call


def reach_wait(record: Record, remote: bool) -> float:
    """Seconds its reachability check waited on a remote KG (an embedded KG's check is CPU)."""
    return max(0.0, record.reach_s - record.reach_cpu_s) if remote else 0.0


def pilot_demand(records: list[Record], share: float, remote: bool) -> Demand:
    """A pilot round's mean demand per question as it ran: its CPU (method and reachability) at
    ``share`` of a core, and its waiting."""
    cpu = sum(r.cpu_s + r.reach_cpu_s for r in records) / share
    wait = sum(waiting(r, remote) + reach_wait(r, remote) for r in records)
    return Demand(cpu / len(records), wait / len(records))


def core_share(rounds: list[tuple[list[Record], float]], inflight: int, remote: bool = False) -> float:
    """The share of a core the pilot's loop got (module docstring): the s in (0, 1] at which the
    model, the rounds' CPU divided by s, takes as long as their loops took (``wall_s``, which
    thread CPU times do not stretch when other processes hold the machine's cores); 1 when the
    rounds took no longer than the model says at a whole core."""

    def modelled(share: float) -> float:
        return sum(
            loop_wall(len(records), *(pilot_demand(records, share, remote),) * 3, inflight).value
            for records, _ in rounds
        )

    rounds = [(records, wall) for records, wall in rounds if sum(r.cpu_s + r.reach_cpu_s for r in records) >= FIT_CPU]
    observed = sum(wall for _, wall in rounds)
    if not rounds or modelled(1.0) >= observed:
        return 1.0
    low, high = MIN_SHARE, 1.0
    for _ in range(30):  # bisection: the model's wall falls as the share grows
        low, high = ((low + high) / 2, high) if modelled((low + high) / 2) > observed else (low, (low + high) / 2)
    return low


def wall_time(
    spec: RunSpec,
    records: list[Record],
    questions: int,
    total: Total,
    per_call: float,
    cold_left: int,
    limits: Callable[[str], float],
    rounds: Optional[list[tuple[list[Record], float]]] = None,
) -> tuple[Figure, list[str]]:
    """The loop wall time of the full run of ``questions`` (module docstring: what the run logs as
    ``wall_s``) and what the note says of it. ``total`` turns per-question samples into the job's
    total with its interval; a cached pilot call counts at ``per_call`` seconds (the full run pays
    for it); ``cold_left`` job questions are not in the reachability cache; ``limits(side)`` is the
    rate limits' bound; ``rounds``, the pilot's rounds and their loops' wall times, give the share
    of a core the CPU runs at (``core_share``)."""
    remote = spec.kg.backend == "endpoint"
    share = core_share(rounds or [], spec.workers, remote)
    cpu = total([r.cpu_s for r in records])
    wait = total([waiting(r, remote, per_call) for r in records])
    reach_cpu, reach_wait, notes = reach_totals(spec, records, cold_left)
    if share < 1:
        notes.append(f"wall at {share:.2f} of a core as the pilot's loop got (its low side at a whole core)")
    low, value, high = (
        Demand(
            (getattr(cpu, side) + getattr(reach_cpu, side)) / questions,
            (getattr(wait, side) + getattr(reach_wait, side)) / questions,
        )
        for side in ("low", "value", "high")
    )
    loop = loop_wall(questions, low, value, high, spec.workers, share)
    slowest = max(r.latency_s + r.usage.cached_calls * per_call for r in records)
    value_s, low_s, high_s = (max(getattr(loop, side), slowest, limits(side)) for side in ("value", "low", "high"))
    return Figure(value_s, min(low_s, value_s), max(high_s, value_s)), notes
