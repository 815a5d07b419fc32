"""When several worker processes pay (``run.processes``): the same run with 1, 2 ...
processes, side by side, on a KG method at many questions in flight.

    KGX_DATA_DIR=... python benchmarks/processes.py                      # ToG, 300 MetaQA 2-hop, 256 in flight
    KGX_DATA_DIR=... python benchmarks/processes.py --flight 16 64 256 --processes 1 2
    KGX_DATA_DIR=... python benchmarks/processes.py --method io --latency 0.2 --flight 256

Each figure is one run of ``method=<m> dataset=metaqa_2hop llm=scripted llm.cache=false run.traces=off``
in a child process of its own, all sharing one ``run.cache_dir`` (the KG store and the reachability
cache, built by an unmeasured first run), in the order given, ``--repeats`` times round-robin so that
a noisy machine treats every setting alike. ``loop`` is the run's wall_s (its question loop, the worker
processes already started), ``process`` the child's whole wall time (start-up, MLflow, starting the
workers included); questions/s is over the loop.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def child(overrides: list[str]) -> None:
    """One run in this process; prints its figures."""
    from hydra import compose, initialize_config_dir

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.execute import execute
    from kgx.run.spec import to_run_spec

    register_schemas()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(config_name="config", overrides=overrides)
    outcome = execute(to_run_spec(cfg), Path.cwd())
    summary = outcome.summary
    print(json.dumps({"wall_s": summary["wall_s"], "calls": summary["billed_calls"], "errors": summary["errors"]}))


def measure(overrides: list[str], cache: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="kgx-processes-") as work:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--child", *overrides, f"run.cache_dir={cache}"],
            capture_output=True,
            text=True,
            cwd=work,
        )
        if done.returncode:
            raise SystemExit(f"run failed ({' '.join(overrides)}):\n{done.stderr[-3000:]}")
        got = json.loads(done.stdout.strip().splitlines()[-1])
        got["process_s"] = time.perf_counter() - start
        return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="tog")
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--flight", nargs="+", type=int, default=[256])
    parser.add_argument("--processes", nargs="+", default=["1", "2"])
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (their median)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="kept between invocations (default: a temp dir)")
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    if not os.environ.get("KGX_DATA_DIR"):
        raise SystemExit("set KGX_DATA_DIR to the folder holding metaqa/ (MetaQA 2-hop and its KB)")
    cache = args.cache_dir or Path(tempfile.mkdtemp(prefix="kgx-processes-cache-"))
    base = [
        f"method={args.method}",
        "dataset=metaqa_2hop",
        f"dataset.limit={args.questions}",
        "llm=scripted",
        "llm.cache=false",
        f"llm.latency_s={args.latency}",
        "run.progress=false",
        "run.traces=off",
        "run.explain=0",
    ]
    print(f"building the KG store and the reachability cache in {cache} (not measured) ...", flush=True)
    measure([*base, "run.concurrency=64"], cache)
    settings = [(flight, processes) for flight in args.flight for processes in args.processes]
    runs: dict[tuple[int, str], list[dict[str, float]]] = {s: [] for s in settings}
    for _ in range(args.repeats):
        for flight, processes in settings:
            got = measure([*base, f"run.concurrency={flight}", f"run.processes={processes}"], cache)
            runs[(flight, processes)].append(got)
            print(f"  ({flight} in flight, processes={processes}: loop {got['wall_s']:.1f} s)", flush=True)
    print(
        f"{args.method}, {args.questions} MetaQA 2-hop questions, scripted backbone at {args.latency:g} s, "
        f"{os.cpu_count()} cores, median of {args.repeats}:"
    )
    for flight, processes in settings:
        got = runs[(flight, processes)]
        loop = statistics.median(g["wall_s"] for g in got)
        whole = statistics.median(g["process_s"] for g in got)
        walls = sorted(g["wall_s"] for g in got)
        print(
            f"  {flight:>4} in flight, processes={processes:<4}: loop {loop:6.1f} s ({walls[0]:.1f}-{walls[-1]:.1f}), "
            f"{args.questions / loop:6.1f} questions/s; process {whole:6.1f} s; "
            f"{got[0]['calls']:.0f} calls, {got[0]['errors']:.0f} errors",
            flush=True,
        )


if __name__ == "__main__":
    main()
