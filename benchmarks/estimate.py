"""How close ``python -m kgx.estimate`` comes to the full run it predicts, over many pilot seeds:
per method and pilot setting, the worst and median relative error of the predicted calls and
tokens (input plus output), the share of seeds whose 95% interval holds the measured figure (also
for input and output tokens), the mean pilot size, with ``--precision`` the share of seeds that
reached it, and the share of seeds whose estimate warned that its pilot was too small.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/estimate.py --replay   # tog, lmp, knowpath, 20 seeds
    KGX_DATA_DIR=... python benchmarks/estimate.py --replay --seeds 200 --methods tog "lmp method.depth=1" \\
        --settings "--pilot 5 --strata none" "--pilot 5" "" "--precision 0.1"
    KGX_DATA_DIR=... python benchmarks/estimate.py --methods cot --data dataset=demo --settings "--pilot 5"

Everything runs on the scripted backbone in a temporary directory: each method's full run once,
then each setting's estimate once per seed (``--seed 0..S-1``; "" is the default pilot), all
sharing one LLM response cache and one throwaway pilot store. The scripted backbone answers a
question the same way whichever run asks it, so the full run is the truth every pilot estimates;
with ``--replay`` the pilots take their records from it instead of running their questions again.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

if TYPE_CHECKING:
    from kgx.estimate.model import JobEstimate
    from kgx.results.record import Record
    from kgx.run.spec import RunSpec

DATA = "dataset=metaqa_2hop kg=metaqa dataset.limit=100"
SETTINGS = ("--pilot 5 --strata none", "--pilot 5", "", "--precision 0.1")
MEASURED = ("calls", "input_tokens", "output_tokens", "tokens")  # what the full run measures, per figure


def full_run(overrides: list[str], work: Path) -> tuple[dict[str, float], list[Record]]:
    """The measured figures (MEASURED and the loop's wall time) of the whole run, and its records."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.execute import execute
    from kgx.run.spec import to_run_spec

    register_schemas()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(
            config_name="config", overrides=[*overrides, "run.progress=false", "run.traces=off", "run.explain=0"]
        )
    GlobalHydra.instance().clear()
    outcome = execute(to_run_spec(cfg), work)
    records = outcome.records
    measured = {
        "wall_s": outcome.summary["wall_s"],  # the question loop's, which the estimate predicts
        "calls": sum(r.calls for r in records),
        "input_tokens": sum(r.usage.input_tokens for r in records),
        "output_tokens": sum(r.usage.output_tokens for r in records),
    }
    return {**measured, "tokens": measured["input_tokens"] + measured["output_tokens"]}, records


@contextlib.contextmanager
def replayed(records: list[Record]) -> Iterator[None]:
    """Pilots answered from the full run's records instead of running them again: exact on the
    scripted backbone (it answers a question the same way whichever run asks it) and free of KG
    time, so that many seeds of a growing pilot take seconds, not hours."""
    from kgx.run import execute as run
    from kgx.run.lifecycle import Outcome

    by_id, real = {r.id: r for r in records}, run.execute

    def answer(spec: RunSpec, launch_dir: Path, *args: object, **kwargs: object) -> Outcome:
        found = [by_id[qid] for qid in spec.dataset.ids]
        return Outcome({}, found, launch_dir, "", computed=len(found), billed_calls=0, resumed=0)

    run.execute = answer
    try:
        yield
    finally:
        run.execute = real


def pilots(overrides: list[str], setting: str, seeds: int) -> list[JobEstimate]:
    """Per seed, the job's estimate. The seeds share one throwaway store, as the jobs of one
    estimate do."""
    from kgx.estimate.pilot import compose_jobs, estimate, options, throwaway_store

    (job,), parallel = compose_jobs(overrides)
    found = []
    with throwaway_store() as launch_dir:
        for seed in range(seeds):
            result, failure = estimate(job, options([*shlex.split(setting), "--seed", str(seed)]), launch_dir, parallel)
            if failure:
                raise SystemExit(failure)
            found.append(result)
    return found


def summary(found: list[JobEstimate], name: str, measured: int) -> str:
    """Worst and median relative error of figure ``name`` and the share of intervals holding it."""
    errors = sorted(abs(getattr(f, name).value - measured) / measured for f in found)
    middle = statistics.median(errors)
    return f"worst {100 * errors[-1]:5.1f}% median {100 * middle:4.1f}% held {held(found, name, measured)}"


def held(found: list[JobEstimate], name: str, measured: int) -> str:
    """The share of the seeds' intervals of figure ``name`` that hold the measured figure."""
    share = sum(getattr(f, name).low <= measured <= getattr(f, name).high for f in found) / len(found)
    return f"{100 * share:3.0f}%"


def measure(method: str, args: argparse.Namespace, work: Path) -> None:
    """One method's full run, then its estimates under every setting, printed as they come."""
    overrides = ["llm=scripted", *shlex.split(f"method={method}"), *shlex.split(args.data)]
    measured, records = full_run(overrides, work)
    calls, tokens = measured["calls"], measured["tokens"]
    print(f"{method} ({args.data}): full run {len(records)} questions, {calls:,} calls, {tokens:,} tokens", flush=True)
    for setting in args.settings:
        start = time.perf_counter()
        with replayed(records) if args.replay else contextlib.nullcontext():
            found = pilots(overrides, setting, args.seeds)
        reached = sum(bool(f.reached) for f in found) / len(found)
        print(
            f"  {setting or '(default pilot)':<32} calls {summary(found, 'calls', calls)}  "
            f"tokens {summary(found, 'tokens', tokens)}  "
            f"held input {held(found, 'input_tokens', measured['input_tokens'])} "
            f"output {held(found, 'output_tokens', measured['output_tokens'])}  "
            f"pilot {statistics.mean(f.pilot for f in found):5.1f}"
            + (f" reached {100 * reached:3.0f}%" if "--precision" in setting else "")
            + f"  warned {100 * sum(bool(f.warnings) for f in found) / len(found):3.0f}%"
            + f"  ({args.seeds} seeds, {time.perf_counter() - start:.0f} s)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--methods", nargs="+", default=["tog", "lmp", "knowpath"], help="a method and its overrides per argument"
    )
    parser.add_argument("--data", default=DATA, help=f"dataset overrides (default: {DATA})")
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), help="kgx.estimate.pilot options per argument")
    parser.add_argument("--seeds", type=int, default=20, help="pilot seeds per setting (default 20)")
    parser.add_argument(
        "--replay", action="store_true", help="answer the pilots from the full run's records (exact on scripted, fast)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kgx-bench-estimate-") as tmp:
        os.chdir(tmp)
        for method in args.methods:
            measure(method, args, Path(tmp))


if __name__ == "__main__":
    main()
