"""One ``python -m kgx.estimate`` command against the full runs it predicts: per job and figure
(calls, input, output and total tokens), the predicted value and 95% interval beside the measured
one, whether the interval holds it and the relative error; then how many of the figures it held.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/estimate_figure.py    # issue 32's example, seed 0
    KGX_DATA_DIR=... python benchmarks/estimate_figure.py --seed 1
    KGX_DATA_DIR=... python benchmarks/estimate_figure.py --data "dataset=metaqa_2hop kg=metaqa dataset.limit=100"
    KGX_DATA_DIR=... python benchmarks/estimate_figure.py --options "--pilot 5"   # the old default pilot

The estimate runs as a user runs it (its table is printed first), on the scripted backbone, in a
temporary directory; then every job's full run, through the same machinery, sharing the LLM
response cache. The scripted backbone answers a question the same way whichever run asks it, so
the full run is the truth the estimate predicts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
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


def predicted(overrides: list[str], options: list[str]) -> dict:
    """The estimate's table as the user sees it (printed), and as json (returned)."""
    from kgx.estimate.pilot import main

    for fmt in ("text", "json"):  # the second run takes every pilot call from the cache
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main([*overrides, *options, "--format", fmt])
        if fmt == "text":
            print(out.getvalue(), flush=True)
    return json.loads(out.getvalue())


def compare(overrides: list[str], options: list[str], work: Path) -> tuple[int, int]:
    """Print predicted against measured per job and figure; return (held, figures)."""
    from kgx.estimate.pilot import compose_jobs

    estimate = predicted(overrides, options)
    jobs, _ = compose_jobs(overrides)
    held = shown = 0
    print(f"{'job':<18}{'figure':<15}{'predicted [95% interval]':>34}{'actual':>10}  held  error")
    for job, row in zip(jobs, estimate["jobs"]):
        measured, _ = full_run(job.overrides, work)
        for name in MEASURED:
            figure, actual = row[name], measured[name]
            inside = figure["low"] <= actual <= figure["high"]
            held, shown = held + inside, shown + 1
            interval = f"{figure['value']:,.0f} [{figure['low']:,.0f}-{figure['high']:,.0f}]"
            error = (figure["value"] - actual) / actual
            print(
                f"{row['job']:<18}{name:<15}{interval:>34}{actual:>10,}  {'yes' if inside else 'NO ':<4}  {error:+.1%}"
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
    args = parser.parse_args()
    overrides = [args.methods, *shlex.split(args.data), "llm=scripted"]
    options = ["--seed", str(args.seed), *shlex.split(args.options)]
    print(f"python -m kgx.estimate {' '.join(overrides + options)}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kgx-bench-estimate-") as tmp:
        os.chdir(tmp)
        held, shown = compare(overrides, options, Path(tmp))
    sys.exit(0 if held == shown else 1)


if __name__ == "__main__":
    main()
