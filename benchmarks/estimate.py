"""How close ``python -m kgx.estimate`` comes to the full run it predicts, over many pilot seeds:
per method and pilot setting, the worst and median relative error of the predicted calls and
tokens (input plus output), the share of seeds whose 95% interval holds the measured figure, the
mean pilot size and, with ``--precision``, the share of seeds that reached it.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/estimate.py        # tog and lmp, MetaQA 2-hop, 20 seeds
    KGX_DATA_DIR=... python benchmarks/estimate.py --seeds 100 --methods tog "lmp method.depth=2" \\
        --settings "--pilot 5 --strata none" "--pilot 5" "--pilot 5 --precision 0.1"
    KGX_DATA_DIR=... python benchmarks/estimate.py --methods cot --data dataset=demo --settings "--pilot 5"

Everything runs on the scripted backbone in a temporary directory: each method's full run once,
then each setting's estimate once per seed (``--seed 0..S-1``), all sharing one LLM response
cache and one throwaway pilot store. The scripted backbone answers a question the same way
whichever run asks it, so the full run is the truth every pilot estimates.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

if TYPE_CHECKING:
    from kgx.estimate.model import Figure

DATA = "dataset=metaqa_2hop kg=metaqa dataset.limit=100"
SETTINGS = ("--pilot 5 --strata none", "--pilot 5", "--pilot 5 --precision 0.1")


def full_run(overrides: list[str], work: Path) -> tuple[int, int, int]:
    """The measured calls and tokens of the whole run, and its question count."""
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
    records = execute(to_run_spec(cfg), work).records
    tokens = sum(r.usage.input_tokens + r.usage.output_tokens for r in records)
    return sum(r.calls for r in records), tokens, len(records)


def pilots(overrides: list[str], setting: str, seeds: int) -> list[tuple[Figure, Figure, int, bool]]:
    """Per seed: the predicted calls and tokens, the pilot's size and whether it reached its
    precision. The seeds share one throwaway store, as the jobs of one estimate do."""
    from kgx.estimate.pilot import compose_jobs, estimate, options, throwaway_store

    (job,), parallel = compose_jobs(overrides)
    found = []
    with throwaway_store() as launch_dir:
        for seed in range(seeds):
            result, failure = estimate(job, options([*shlex.split(setting), "--seed", str(seed)]), launch_dir, parallel)
            if failure:
                raise SystemExit(failure)
            found.append((result.calls, result.tokens, result.pilot, bool(result.reached)))
    return found


def summary(found: list[tuple[Figure, Figure, int, bool]], index: int, measured: int) -> str:
    """Worst and median relative error of figure ``index`` and the share of intervals holding it."""
    errors = sorted(abs(f[index].value - measured) / measured for f in found)
    held = sum(f[index].low <= measured <= f[index].high for f in found) / len(found)
    return f"worst {100 * errors[-1]:5.1f}% median {100 * statistics.median(errors):4.1f}% held {100 * held:3.0f}%"


def measure(method: str, args: argparse.Namespace, work: Path) -> None:
    """One method's full run, then its estimates under every setting, printed as they come."""
    overrides = ["llm=scripted", *shlex.split(f"method={method}"), *shlex.split(args.data)]
    calls, tokens, size = full_run(overrides, work)
    print(f"{method} ({args.data}): full run {size} questions, {calls:,} calls, {tokens:,} tokens", flush=True)
    for setting in args.settings:
        start = time.perf_counter()
        found = pilots(overrides, setting, args.seeds)
        reached = sum(f[3] for f in found) / len(found)
        print(
            f"  {setting:<40} calls {summary(found, 0, calls)}  tokens {summary(found, 1, tokens)}  "
            f"pilot {statistics.mean(f[2] for f in found):5.1f}"
            + (f" reached {100 * reached:3.0f}%" if "--precision" in setting else "")
            + f"  ({args.seeds} seeds, {time.perf_counter() - start:.0f} s)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--methods", nargs="+", default=["tog", "lmp method.depth=2"], help="a method and its overrides per argument"
    )
    parser.add_argument("--data", default=DATA, help=f"dataset overrides (default: {DATA})")
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), help="kgx.estimate.pilot options per argument")
    parser.add_argument("--seeds", type=int, default=20, help="pilot seeds per setting (default 20)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kgx-bench-estimate-") as tmp:
        os.chdir(tmp)
        for method in args.methods:
            measure(method, args, Path(tmp))


if __name__ == "__main__":
    main()
