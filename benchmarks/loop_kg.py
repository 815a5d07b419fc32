"""The question loop of KG methods against the LLM-bound limit, and their CPU per question.

Used by ``benchmarks/loop.py --method tog lmp ...``. Every figure is one run of
``method=M kg=metaqa dataset=metaqa_2hop llm=scripted llm.cache=false run.traces=off`` in a child
process of its own; ``--baseline REF`` runs the same rows with another git ref's code (a temporary
``git worktree`` of REF on the child's PYTHONPATH) side by side, in the same invocation. Each code
gets one cache directory (its built KG store and reachability cache) warmed by a first run, so
that the figures are the loop's, not the first build's.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

# What each method runs with: LMP at depth 2, the hops of MetaQA 2-hop.
METHOD_OVERRIDES = {"lmp": ["method.depth=2"]}
HERE = Path(__file__).resolve()


@dataclass(frozen=True)
class Row:
    method: str
    questions: int
    latency: float
    flight: int
    sets: tuple[str, ...] = ()


def child(row: Row, cache_dir: str) -> None:
    """One run in this process; prints its loop's wall and CPU time, each question's LLM calls
    and this process's peak memory as one JSON line."""
    try:  # the collector as python -m kgx sets it; a --baseline older than kgx.core.collector kept Python's
        from kgx.core.collector import tune

        tune()
    except ImportError:
        pass
    from hydra import compose, initialize_config_dir

    import kgx.run.execute as execute_module
    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.spec import to_run_spec

    loop_cpu: list[float] = []
    answer_all = execute_module.answer_all

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return answer_all(*args, **kwargs)
        finally:
            loop_cpu.append(time.process_time() - start)

    execute_module.answer_all = timed  # the loop's own CPU, without imports, KG build and MLflow
    work = Path(tempfile.mkdtemp(prefix="kgx-loop-kg-"))
    register_schemas()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(
            config_name="config",
            overrides=[
                f"method={row.method}",
                *METHOD_OVERRIDES.get(row.method, []),
                "kg=metaqa",
                "dataset=metaqa_2hop",
                f"dataset.limit={row.questions}",
                "llm=scripted",
                "llm.cache=false",
                f"llm.latency_s={row.latency}",
                "run.progress=false",
                "run.traces=off",
                "run.explain=0",
                f"run.concurrency={row.flight}",
                f"run.cache_dir={cache_dir}",
                *row.sets,
            ],
        )
    os.chdir(work)
    outcome = execute_module.execute(to_run_spec(cfg), work)
    calls = [record.calls for record in outcome.records]
    print(
        json.dumps(
            {
                "wall_s": outcome.summary["wall_s"],
                "cpu_s": loop_cpu[0] if loop_cpu else float("nan"),
                "calls": calls,
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def measure(row: Row, code: Optional[Path], cache_dir: Path) -> dict[str, Any]:
    """``row`` in a child process running ``code``'s kgx (None: this checkout's)."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(
        [sys.executable, str(HERE.parent / "loop.py"), "--kg-child", json.dumps(row.__dict__), str(cache_dir)],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode:
        raise SystemExit(f"{row} failed with {code or 'this checkout'}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """``ref``'s tree in a temporary git worktree, removed afterwards."""
    repo = HERE.parents[1]
    where = Path(tempfile.mkdtemp(prefix="kgx-baseline-")) / "tree"
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "--detach", str(where), ref], check=True, capture_output=True
    )
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(where)], check=False)


def schedule(calls: list[int], latency: float, flight: int) -> float:
    """The wall time of the questions in the loop's order with no CPU at all: each starts when one
    of ``flight`` places frees up and takes its calls x latency. Above max(ideal, floor) wherever
    long questions start late (LMP at 256 in flight on 300 questions: 4.0 s against 3.0 s)."""
    places = [0.0] * max(1, min(flight, len(calls)))
    for n in calls:
        heapq.heappush(places, heapq.heappop(places) + n * latency)
    return max(places)


def figures(got: dict[str, Any], row: Row) -> dict[str, float]:
    """Wall, the LLM-bound ideal (all calls x latency / in flight), the floor (the longest
    question's calls x latency), the wall's ratio to the larger of the two, to the no-CPU
    schedule, and questions per second."""
    calls = got["calls"]
    ideal = sum(calls) * row.latency / row.flight
    floor = max(calls, default=0) * row.latency
    bound = schedule(calls, row.latency, row.flight)
    wall = got["wall_s"]
    return dict(
        wall=wall,
        ideal=ideal,
        floor=floor,
        ratio=wall / max(ideal, floor, 1e-9),
        schedule=bound,
        over_schedule=wall / max(bound, 1e-9),
        qps=len(calls) / wall,
        n=len(calls),
    )


def run(args: Any) -> None:
    """The rows of ``args`` for each method, with this checkout's code and ``--baseline``'s."""
    with contextlib.ExitStack() as stack:
        codes: list[tuple[str, Optional[Path]]] = [("this", None)]
        if args.baseline:
            codes.insert(0, (args.baseline, stack.enter_context(checkout(args.baseline))))
        root = Path(args.cache_dir) if args.cache_dir else Path(tempfile.mkdtemp(prefix="kgx-loop-cache-"))
        caches = {label: root / label for label, _ in codes}
        sets = tuple(args.set)
        for method in args.method:
            for label, code in codes:  # builds the KG store and fills the reachability cache
                measure(Row(method, args.questions, 0.0, 16, sets), code, caches[label])
            cpu_runs: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in codes}
            for _ in range(args.repeats):  # the codes take turns: the VM's drift falls on both alike
                for label, code in codes:
                    row = Row(method, args.cpu_questions, 0.0, 1, sets)
                    cpu_runs[label].append(measure(row, code, caches[label]))
            for label, _ in codes:
                cpu = cpu_runs[label]
                per_q = sorted(1000 * got["cpu_s"] / len(got["calls"]) for got in cpu)
                print(
                    f"{method} [{label}] CPU per question at 1 in flight, 0 ms backbone, {args.cpu_questions} "
                    f"questions: {per_q[len(per_q) // 2]:.1f} ms (of {len(per_q)}: "
                    f"{', '.join(f'{x:.1f}' for x in per_q)}); {sum(cpu[0]['calls']) / len(cpu[0]['calls']):.1f} "
                    f"calls per question",
                    flush=True,
                )
            for latency in args.latency:
                for flight in args.kg_flight:
                    for label, code in codes:
                        # --this-set: settings the baseline's code may not know (run.processes).
                        extra = tuple(args.this_set) if code is None else ()
                        row = Row(method, args.questions, latency, flight, sets + extra)
                        f = figures(measure(row, code, caches[label]), row)
                        tag = " ".join((label, *extra))
                        print(
                            f"{method} [{tag}] {flight:>3} in flight, {1000 * latency:.0f} ms backbone, {f['n']} "
                            f"questions: wall {f['wall']:.1f} s, ideal {f['ideal']:.1f} s, floor {f['floor']:.1f} s, "
                            f"{f['ratio']:.2f}x max(ideal, floor), no-CPU schedule {f['schedule']:.1f} s "
                            f"({f['over_schedule']:.2f}x it), {f['qps']:.1f} questions/s",
                            flush=True,
                        )


def reply_checks(replies: int = 2000) -> None:
    """CPU per reply of checking it against its schema (``parse_json``), for a schema that is
    the same for every question (the answers) and for ones carrying a per-question enum: each
    reply gets a schema with choices no earlier one had, as in a run."""
    from kgx.llm.structured import parse_json
    from kgx.methods.answers import answers_schema
    from kgx.methods.cgpe.prompts import rough_schema
    from kgx.methods.kit import choice_schema
    from kgx.methods.tog.prompts import scored_schema

    kinds = {
        "answers (io, cot, every method's last call)": lambda i: (
            {"type": "object", "properties": {"answers": answers_schema()}, "required": ["answers"]},
            {"answers": [f"Answer {i}"]},
        ),
        "ToG scored relations": lambda i: (
            scored_schema("relations", "relation", [f"film.r{i}.{j}" for j in range(8)], 1, 3),
            {"relations": [{"relation": f"film.r{i}.1", "score": 0.6}, {"relation": f"film.r{i}.2", "score": 0.4}]},
        ),
        "kit choices (LMP, KnowPath, PoG, StructGPT)": lambda i: (
            choice_schema({"relations": [f"film.r{i}.{j}" for j in range(8)]}, 1, 3),
            {"relations": [f"film.r{i}.3"]},
        ),
        "CGPE scores": lambda i: (
            rough_schema([f"Entity {i}.{j}" for j in range(8)]),
            {"scores": [{"candidate": f"Entity {i}.2", "score": 7}]},
        ),
    }
    for kind, make in kinds.items():
        pairs = [(schema, json.dumps(reply)) for schema, reply in map(make, range(replies))]
        parse_json(pairs[0][1], pairs[0][0])
        start = time.process_time()
        for schema, text in pairs:
            parse_json(text, schema)
        print(f"reply check, {kind}: {1e6 * (time.process_time() - start) / replies:.1f} µs CPU per reply", flush=True)
