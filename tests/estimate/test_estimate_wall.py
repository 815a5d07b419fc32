"""The estimate's wall time (``kgx.estimate.wall``): the question loop as a queue of CPU and waiting.

Counting only the LLM's latency over the questions in flight predicts StructGPT's wall time at 14 s
against 39 s, leaving out the CPU one interpreter runs one question at a time and
reachability on a cold cache. The model is pinned on hand numbers: Mean Value Analysis and its two
bounds, a pilot's CPU and cold reachability carried to the full run, only the job's questions not
yet in the reachability cache paying for it, and an earlier pilot's cost when the pilot's own
checks were all cached. A run records what the model needs per question.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kgx import datasets
from kgx.core.reachability import Reach
from kgx.core.types import Prediction
from kgx.core.usage import Usage
from kgx.estimate.interval import Figure, total_of
from kgx.estimate.wall import Demand, core_share, loop_wall, throughput, uncached, wall_time
from kgx.results.record import Record


def test_mean_value_analysis_of_one_cpu_and_the_waiting():
    # One in flight: a question takes its CPU plus its waiting.
    assert throughput(Demand(0.1, 0.9), 1) == pytest.approx(1.0)
    # Two: the second finds the first at the CPU a tenth of the time (queue 0.1): R = 0.1 × 1.1.
    assert throughput(Demand(0.1, 0.9), 2) == pytest.approx(2 / (0.11 + 0.9))
    # Many: the CPU is the limit (1 / C); no CPU: w / Z, the LLM-bound ideal.
    assert throughput(Demand(0.05, 0.2), 256) == pytest.approx(20.0)
    assert throughput(Demand(0.0, 0.2), 64) == pytest.approx(320.0)


def test_the_interval_is_the_asymptotic_and_the_pessimistic_bound():
    demand = Demand(0.1, 0.9)
    wall = loop_wall(100, demand, demand, demand, 2)
    # MVA: 100 / 1.980; at least max(N·C, N·(C + Z)/w) = 50; at most N·(C + Z)/w + N·C·(w - 1)/w = 55.
    assert (wall.value, wall.low, wall.high) == pytest.approx((100 * 1.01 / 2, 50.0, 55.0))
    # CPU-bound at 64 in flight: the LLM-bound figure N·(C + Z)/w would say 0.4 s, the CPU takes 5 s.
    cpu_bound = loop_wall(100, Demand(0.05, 0.2), Demand(0.05, 0.2), Demand(0.05, 0.2), 64)
    assert cpu_bound.low == pytest.approx(5.0) and cpu_bound.value == pytest.approx(5.0, rel=0.01)
    assert cpu_bound.high == pytest.approx(100 * (0.25 / 64 + 0.05 * 63 / 64))
    # Fewer questions than in flight: the population is the job.
    assert loop_wall(3, demand, demand, demand, 64).low == pytest.approx(3 * max(0.1, 1.0 / 3))


def record(i: int, cpu: float, wait: float, reach: Reach | None = None, reach_s: float = 0.0) -> Record:
    """A pilot question of ``cpu`` seconds of CPU and ``wait`` seconds of provider calls."""
    return Record(
        id=f"q{i}",
        question="",
        gold=[],
        prediction=Prediction(answer=""),
        scores={},
        status="ok",
        usage=Usage(calls=2, billed_calls=2, latency_s=wait),
        latency_s=cpu + wait,
        cpu_s=cpu,
        reach=None if reach is None else replace(reach, seconds=reach_s),
        reach_cpu_s=reach_s,  # an embedded KG: reachability is all CPU
    )


@pytest.fixture
def tog_spec(compose_cfg, in_tmp):
    from kgx.run.spec import to_run_spec

    return to_run_spec(compose_cfg("method=tog", "llm=scripted", "run.concurrency=8"))


def test_cpu_and_cold_reachability_are_carried_to_the_full_run(tog_spec):
    cold = Reach(True, 3, distance=2, queries=6)
    # Four pilot questions of a job of 100: CPU 40-60 ms, 0.4 s of waiting each, 0.2-0.4 s of cold reachability.
    cpus, waits, reaches = [0.04, 0.05, 0.05, 0.06], [0.35, 0.4, 0.4, 0.45], [0.2, 0.3, 0.3, 0.4]
    pilot = [record(i, c, w, cold, r) for i, (c, w, r) in enumerate(zip(cpus, waits, reaches))]

    def total(samples: list[float]) -> Figure:
        return total_of(samples, [""] * len(samples), {"": 100})

    def no_limit(side: str) -> float:
        return 0.0

    # The pilot's 4 questions are in the reachability cache now; 96 others check cold.
    wall, notes = wall_time(tog_spec, pilot, 100, total, 0.2, 96, no_limit)
    cpu, cold_cpu = 100 * 0.05 + 96 * 0.3, Demand(0.05 + 0.96 * 0.3, 0.4)
    assert wall.value == pytest.approx(100 / throughput(cold_cpu, 8))
    assert wall.low < cpu < wall.value < wall.high < 2 * (cpu + 100 * 0.4 / 8)
    # The LLM alone (what the estimate printed before): 100 × 0.4 s / 8 = 5 s.
    assert 100 * 0.4 / 8 < wall.low
    assert notes == ["wall with reachability on a cold cache for 96 questions (0.30s each)"]
    # A warm cache (every question checked before): CPU and waiting only.
    warm, notes = wall_time(tog_spec, pilot, 100, total, 0.2, 0, no_limit)
    assert warm.value == pytest.approx(100 / throughput(Demand(0.05, 0.4), 8)) and notes == []
    # A pilot whose checks were all cached takes the cost an earlier pilot measured on this KG and horizon.
    cached = [record(i, c, w, Reach(True, 3, cached=True)) for i, (c, w) in enumerate(zip(cpus, waits))]
    again, notes = wall_time(tog_spec, cached, 100, total, 0.2, 96, no_limit)
    assert again.value == pytest.approx(wall.value)
    assert notes == ["wall with reachability on a cold cache for 96 questions (0.30s each, an earlier pilot's)"]
    # The rate limits and the slowest question stay floors.
    limited, _ = wall_time(tog_spec, pilot, 100, total, 0.2, 0, lambda side: 60.0)
    assert (limited.value, limited.low) == (60.0, 60.0)


def test_the_share_of_a_core_is_fitted_to_the_pilots_own_loop():
    # Ten questions of 0.2 s CPU one at a time: 2 s on a whole core. The loop took 4 s: half a core.
    busy = [record(i, 0.2, 0.0) for i in range(10)]
    assert core_share([(busy, 4.0)], 1) == pytest.approx(0.5, rel=1e-3)
    assert core_share([(busy, 1.5)], 1) == 1.0  # faster than the model: a whole core, never more
    # A round of little CPU says nothing of the machine (thread start-up dominates): a whole core.
    assert core_share([([record(i, 0.01, 0.5) for i in range(10)], 9.0)], 4) == 1.0
    # The value and the top take the share, the low side stays at a whole core (the load may lift).
    demand = Demand(0.1, 0.9)
    halved = loop_wall(100, demand, demand, demand, 2, share=0.5)
    assert (halved.low, halved.high) == pytest.approx((50.0, 100 * (1.1 / 2 + 0.2 / 2)))
    assert halved.value == pytest.approx(100 / throughput(Demand(0.2, 0.9), 2))


def test_a_run_records_cpu_and_reachability_per_question(compose_cfg, in_tmp):
    from kgx.run.execute import execute
    from kgx.run.spec import to_run_spec

    overrides = ("method=tog", "llm=scripted", "dataset.limit=3", "run.progress=false", "run.traces=off")
    spec = to_run_spec(compose_cfg(*overrides))
    demo = datasets.load(replace(spec.dataset, limit=None))
    assert uncached(spec, demo) == len(demo)  # a fresh cache: every question's check would be cold
    first = execute(spec, in_tmp).records
    assert all(r.cpu_s > 0 and r.reach is not None and not r.reach.cached for r in first)
    assert uncached(spec, demo) == len(demo) - 3  # the run's three are in the reachability cache now
    assert all(r.reach_s >= r.reach_cpu_s > 0 or r.reach_s > 0 for r in first)
    again = execute(to_run_spec(compose_cfg(*overrides, "run.force=true")), in_tmp).records
    # From the cache: no KG query (a time comparison with the cold checks would depend on the load)
    assert all(r.reach.cached and r.reach.queries == 0 for r in again) and all(x.reach.queries > 0 for x in first)
    assert Record.from_dict(first[0].to_dict()).reach_cpu_s == first[0].reach_cpu_s
