"""One ``python -m kgx.estimate`` command against the full runs it predicts: per job and figure
(calls, input, output and total tokens), the predicted value and 95% interval beside the measured
one, whether the interval holds it and the relative error; then how many of the figures it held.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/estimate_figure.py    # the estimate guide's example, seed 0
    KGX_DATA_DIR=... python benchmarks/estimate_figure.py --seed 1
    KGX_DATA_DIR=... python benchmarks/estimate_figure.py --data "dataset=metaqa_2hop kg=metaqa dataset.limit=100"
    KGX_DATA_DIR=... python benchmarks/estimate_figure.py --options "--pilot 5"   # a 5-question pilot
    KGX_DATA_DIR=... python benchmarks/estimate_figure.py --case cgpe_pql3h     # the hard cases, wall time too
    KGX_DATA_DIR=... python benchmarks/estimate_figure.py --case structgpt_wall

The estimate runs as a user runs it (its table is printed first), on the scripted backbone, in a
temporary directory; then every job's full run, through the same machinery, sharing the LLM
response cache. The scripted backbone answers a question the same way whichever run asks it, so
the full run is the truth the estimate predicts. With ``--wall`` (and in the cases) the wall time
too: the full run's question loop (its ``wall_s``) against the prediction, on the reachability
and LLM caches the estimate left, as a user's run after an estimate finds them.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

from estimate import MEASURED, full_run

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

METHODS = "method=lmp,tog,knowpath"
DATA = "dataset=metaqa_2hop kg=metaqa dataset.limit=30"
CASES = {  # the estimate's hard cases: (methods, data, seed, options)
    # Five equal pilot calls are no evidence of precision: the pilot must grow (1,522 calls in the full run).
    "cgpe_pql3h": ("method=cgpe", "dataset=pql_3h kg=pathquestion dataset.limit=200", 2, "--pilot 5 --precision 0.1"),
    # A KG method's wall time, mostly CPU and reachability: counting latency alone gives 14 s against 39 s.
    "structgpt_wall": (
        "method=structgpt",
        "dataset=metaqa_2hop kg=metaqa dataset.limit=300 llm.latency_s=0.2 run.concurrency=64",
        0,
        "",
    ),
}


def predicted(overrides: list[str], options: list[str]) -> dict:
    """The estimate's table as the user sees it (printed), and as json (returned): one estimate,
    as ``python -m kgx.estimate`` makes it, rendered both ways."""
    from kgx.estimate.model import add_up
    from kgx.estimate.pilot import compose_jobs, estimate, throwaway_store
    from kgx.estimate.pilot import options as parse
    from kgx.estimate.table import render

    args = parse([*overrides, *options])
    jobs, parallel = compose_jobs(args.overrides)
    with throwaway_store() as launch_dir:
        results = []
        for job in jobs:
            result, failure = estimate(job, args, launch_dir, parallel)
            if failure:
                raise SystemExit(failure)
            results.append(result)
    total = add_up(results, parallel)
    settings = {"pilot": args.pilot, "precision": args.precision, "max_pilot": args.max_pilot, "seed": args.seed}
    print(render(results, total, "text", settings), flush=True)
    return json.loads(render(results, total, "json", settings))


def compare(overrides: list[str], options: list[str], work: Path, wall: bool) -> tuple[int, int]:
    """Print predicted against measured per job and figure; return (held, figures)."""
    from kgx.estimate.pilot import compose_jobs

    estimate = predicted(overrides, options)
    jobs, _ = compose_jobs(overrides)
    held = shown = 0
    print(f"{'job':<18}{'figure':<15}{'predicted [95% interval]':>34}{'actual':>10}  held  error")
    for job, row in zip(jobs, estimate["jobs"]):
        measured, _ = full_run(job.overrides, work)
        for name in (*MEASURED, "wall_s") if wall else MEASURED:
            figure, actual = row[name], measured[name]
            inside = figure["low"] <= actual <= figure["high"]
            held, shown = held + inside, shown + 1
            unit, digits = ("s", 1) if name == "wall_s" else ("", 0)
            low, value, high = (f"{figure[side]:,.{digits}f}{unit}" for side in ("low", "value", "high"))
            error = (figure["value"] - actual) / actual
            print(
                f"{row['job']:<18}{name:<15}{f'{value} [{low}-{high}]':>34}{f'{actual:,.{digits}f}{unit}':>10}  "
                f"{'yes' if inside else 'NO ':<4}  {error:+.1%}"
            )
    for row in estimate["jobs"]:
        for warning in row["warnings"]:
            print(f"{row['job']}: warning: {warning}")
    print(f"held {held} of {shown} figures", flush=True)
    return held, shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default=METHODS, help=f"the jobs' method override (default {METHODS})")
    parser.add_argument("--data", default=DATA, help=f"dataset overrides (default: {DATA})")
    parser.add_argument("--seed", type=int, default=0, help="the pilot's seed (default 0)")
    parser.add_argument("--options", default="", help="more kgx.estimate options, e.g. '--pilot 5'")
    parser.add_argument("--wall", action="store_true", help="compare the wall time too")
    parser.add_argument("--case", choices=sorted(CASES), help="one of the hard cases (sets the above, --wall)")
    args = parser.parse_args()
    if args.case:
        args.methods, args.data, args.seed, args.options = CASES[args.case]
        args.wall = True
    overrides = [args.methods, *shlex.split(args.data), "llm=scripted"]
    options = ["--seed", str(args.seed), *shlex.split(args.options)]
    print(f"python -m kgx.estimate {' '.join(overrides + options)}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kgx-bench-estimate-") as tmp:
        os.chdir(tmp)
        held, shown = compare(overrides, options, Path(tmp), args.wall)
    sys.exit(0 if held == shown else 1)


if __name__ == "__main__":
    main()
