"""How the question loop scales: ms per question and peak memory against the run's size, and the
wall time at many questions in flight against the ideal.

    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/loop.py                     # 1,000 and 10,000
    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/loop.py --sizes 1000 10000 100000
    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/loop.py --sizes --flight 16 64 256
    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/loop.py --sizes --litellm   # its CPU per call
    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/loop.py --sizes --replies   # checking a reply
    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/loop.py --sizes --method tog lmp --baseline main
    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/loop.py --sizes --method tog --latency 0.2 --set run.processes=4
    python benchmarks/loop.py --sizes --method tog --baseline REF --this-set run.processes=2

Each figure is one run of ``method=io kg=demo llm=scripted llm.cache=false run.traces=off`` on the
demo questions repeated under new ids, in a child process of its own (so its peak memory is its
own). Scaling rows use a 0-latency backbone at the default concurrency and give the loop's and the
whole process's wall time per question, and the files the run left (the question file, the run
folder, mlruns/: with run.traces=off none per question); flight rows a 200 ms
backbone with ``run.concurrency`` questions in flight, against the ideal N x 0.2 s / in-flight.
``--litellm`` times litellm's own work around a call to a network provider (``mock_response``:
its whole call path without the network), which kgx's in-process providers skip.
``--method`` adds KG methods on MetaQA 2-hop against their LLM-bound ideal, and their CPU per
question (``benchmarks/loop_kg.py``); ``--baseline REF`` runs those rows with REF's code too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import loop_kg  # noqa: E402  (beside this file; its children need the variable above too)


def child(questions: int, latency: float, flight: int) -> None:
    """One run in this process; prints its loop wall time and this process's peak memory."""
    from hydra import compose, initialize_config_dir
    from transcripts import dataset

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.execute import execute
    from kgx.run.spec import to_run_spec

    work = Path(tempfile.mkdtemp(prefix="kgx-loop-"))
    path = dataset(questions, work)
    register_schemas()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(
            config_name="config",
            overrides=[
                "method=io",
                "kg=demo",
                "llm=scripted",
                "llm.cache=false",
                f"llm.latency_s={latency}",
                "dataset=custom",
                f"dataset.path={path}",
                "dataset.name=synthetic",
                "run.progress=false",
                "run.traces=off",
                "run.explain=0",
                f"run.concurrency={flight}",
            ],
        )
    os.chdir(work)
    summary = execute(to_run_spec(cfg), work).summary
    files = sum(len(names) for _, _, names in os.walk(work))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall_s": summary["wall_s"], "peak_mb": peak_mb, "files": files}))
    shutil.rmtree(work)


def measure(questions: int, latency: float, flight: int) -> dict[str, float]:
    """The child's figures, with ``process_s``: its whole wall time, interpreter start to exit."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(questions), str(latency), str(flight)],
        capture_output=True,
        text=True,
        check=True,
    )
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_s": time.perf_counter() - start}


def litellm_cpu(calls: int = 300) -> float:
    """CPU milliseconds litellm spends per chat completion of a priced model, network excluded."""
    import time

    import litellm

    messages = [{"role": "user", "content": "Question: who directed the film?"}]
    litellm.completion(model="gpt-4o-mini", messages=messages, mock_response="{x}")
    start = time.process_time()
    for _ in range(calls):
        litellm.completion(model="gpt-4o-mini", messages=messages, mock_response="{x}")
    return 1000 * (time.process_time() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[1000, 10000])
    parser.add_argument("--flight", nargs="*", type=int, default=[])
    parser.add_argument("--flight-questions", type=int, default=2560)
    parser.add_argument("--repeats", type=int, default=3, help="runs per in-flight figure (their median)")
    parser.add_argument("--litellm", action="store_true", help="litellm's own CPU per call to a network provider")
    parser.add_argument("--method", nargs="*", default=[], help="KG methods to measure on MetaQA 2-hop (tog lmp ...)")
    parser.add_argument("--questions", type=int, default=300, help="MetaQA 2-hop questions per KG method run")
    parser.add_argument("--latency", nargs="*", type=float, default=[0.2, 1.0], help="backbone latencies, s")
    parser.add_argument("--kg-flight", nargs="*", type=int, default=[16, 64, 256], help="KG methods' in-flight rows")
    parser.add_argument("--cpu-questions", type=int, default=300, help="questions of a CPU-per-question run")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra override (repeatable)")
    parser.add_argument(
        "--this-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="--set for this checkout's in-flight rows only",
    )
    parser.add_argument("--cache-dir", help="KG stores and reachability caches, one folder per code (kept: reuse it)")
    parser.add_argument("--baseline", help="a git ref whose code runs the KG method rows too, side by side")
    parser.add_argument("--replies", action="store_true", help="CPU per reply of checking it against its schema")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--kg-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.child[0]), float(args.child[1]), int(args.child[2]))
        return
    if args.kg_child:
        loop_kg.child(loop_kg.Row(**json.loads(args.kg_child[0])), args.kg_child[1])
        return
    first = None
    for n in args.sizes:
        got = measure(n, 0.0, 4)
        per_q, process_q = 1000 * got["wall_s"] / n, 1000 * got["process_s"] / n
        first = first or (per_q, process_q)
        print(
            f"{n:>7} questions, 0 ms backbone: loop {per_q:.2f} ms/question ({per_q / first[0]:.2f}x the first), "
            f"process {process_q:.2f} ms/question ({process_q / first[1]:.2f}x), loop {got['wall_s']:.1f} s, "
            f"process {got['process_s']:.1f} s, peak {got['peak_mb']:.0f} MB, {got['files']} files left",
            flush=True,
        )
    for flight in args.flight:
        n = args.flight_questions
        walls = sorted(measure(n, 0.2, flight)["wall_s"] for _ in range(args.repeats))
        wall = statistics.median(walls)
        ideal = n * 0.2 / flight
        print(
            f"{flight:>4} in flight, 200 ms backbone, {n} questions: {wall:.1f} s against the ideal "
            f"{ideal:.1f} s ({wall / ideal:.2f}x; median of {len(walls)}, {walls[0]:.1f}-{walls[-1]:.1f} s)",
            flush=True,
        )
    if args.replies:
        loop_kg.reply_checks()
    if args.method:
        loop_kg.run(args)
    if args.litellm:
        ms = litellm_cpu()
        print(
            f"litellm per call to a network provider (mock_response, gpt-4o-mini): {ms:.1f} ms CPU, "
            f"at most ~{1000 / ms:.0f} calls/s per process",
            flush=True,
        )


if __name__ == "__main__":
    main()
