"""What Python's garbage collector costs a kgx process, with kgx's thresholds and with Python's
defaults (kgx.core.collector): ``python -m kgx`` on the demo, run after run, each in a new folder
with a new MLflow store.

    python benchmarks/startup.py                       # io on 2 demo questions, 3 repeats
    python benchmarks/startup.py --repeats 5 method=tog dataset.limit=16

Each row gives the median over the repeats of the seconds spent collecting (gc.callbacks), the
young / middle / full collections, and the process's CPU (user + system) and wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# The child: count the collector's work, keep Python's thresholds if asked, then run kgx as
# ``python -m kgx`` does.
CHILD = """
import gc, json, os, runpy, sys, time
spent, counts, started = [0.0], [0, 0, 0], [0.0]
def watch(phase, info):
    if phase == "start":
        started[0] = time.perf_counter()
    else:
        spent[0] += time.perf_counter() - started[0]
        counts[info["generation"]] += 1
gc.callbacks.append(watch)
if sys.argv[1] == "python":
    import kgx.core.collector
    kgx.core.collector.tune = lambda: None
def report():
    print("STARTUP " + json.dumps({"gc_s": spent[0], "counts": counts}), file=sys.__stderr__)
import atexit
atexit.register(report)
sys.argv = ["kgx", *sys.argv[2:]]
runpy.run_module("kgx", run_name="__main__", alter_sys=True)
"""


def once(thresholds: str, overrides: list[str]) -> dict:
    """One ``python -m kgx`` with ``thresholds`` ("kgx" or "python") in a new folder."""
    work = tempfile.mkdtemp(prefix="kgx-startup-")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, thresholds, "llm=scripted", "run.progress=false", *overrides],
        cwd=work,
        capture_output=True,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"python -m kgx failed:\n{done.stderr[-2000:]}")
    [line] = [x for x in done.stderr.splitlines() if x.startswith("STARTUP ")]
    got = json.loads(line.removeprefix("STARTUP "))
    got["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    got["wall_s"] = wall
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("overrides", nargs="*", default=["method=io", "dataset.limit=2"])
    args = parser.parse_args()
    print(f"python -m kgx llm=scripted {' '.join(args.overrides)}, median of {args.repeats}:")
    rows: dict[str, list[dict]] = {"python": [], "kgx": []}
    for _ in range(args.repeats):  # alternated, so that a busy spell of the machine hits both
        for thresholds in rows:
            rows[thresholds].append(once(thresholds, args.overrides))
    for thresholds, got in rows.items():
        median = {k: statistics.median(g[k] for g in got) for k in ("gc_s", "cpu_s", "wall_s")}
        counts = [int(statistics.median(g["counts"][i] for g in got)) for i in range(3)]
        print(
            f"  {thresholds:6s} thresholds: {median['gc_s']:.2f} s collecting "
            f"({counts[0]} young, {counts[1]} middle, {counts[2]} full collections); "
            f"CPU {median['cpu_s']:.1f} s, wall {median['wall_s']:.1f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
