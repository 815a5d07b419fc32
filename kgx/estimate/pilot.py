"""``python -m kgx.estimate [--pilot N] [overrides]``: what a run or a sweep will cost, before it runs.

    python -m kgx.estimate method=cot dataset=metaqa_2hop kg=metaqa llm=gpt4o_mini
    python -m kgx.estimate +sweeps=baselines_smoke llm=scripted --pilot 10 --format md
    python -m kgx.estimate method=tog dataset=metaqa_2hop kg=metaqa llm=gpt4o_mini --precision 0.1

The overrides are those of ``python -m kgx`` (with or without ``-m``): comma lists and
``+sweeps=NAME`` expand into jobs as Hydra's basic sweeper expands them (``kgx.run.sweep``). Each job
runs a pilot: ``--pilot`` questions drawn at random (``--seed``) from the questions the job would
answer, spread over their kinds when the dataset says them (``--strata``); by default one of every
kind, two of each where that is at most half the job, at least 25 (``kgx.estimate.strata``),
through the same machinery as a run (``kgx.run.execute.execute``) and the same LLM response cache, so the
real run later gets the pilot's calls for free. KG methods' calls vary so much between questions
that a handful cannot say their total: with ``--precision P`` the pilot grows, round by round,
until the interval of both calls and tokens is within ± P × the estimate, or it reaches
``--max-pilot`` or the whole job; calls or tokens equal on every pilot question are never within
it (``kgx.estimate.model.no_spread``): the pilot grows until they vary or it covers every kind.
The pilot is not one of your runs: it logs to a throwaway MLflow store and output folders in a
temporary directory (deleted at the end) with transcripts off, so nothing of it appears in
``mlruns/`` or ``outputs/``.

Per job and in total it prints LLM calls, input, output and total tokens, cost and wall time of the
full run, each with an interval (``kgx.estimate.interval``), and a warning under the table when
the pilot is too small for the interval it prints. Cost prices every call, cached or not,
at the config's ``llm.*_cost_per_token`` or litellm's price map; a backbone without a price is
``unknown``, never 0. Wall time is the question loop's (the run's ``wall_s``) as a queue
(``kgx.estimate.wall``): per question the pilot's CPU, which one interpreter runs one question at
a time, and its waiting (provider calls, each cached call at the mean seconds per provider call,
remembered per backbone under ``run.cache_dir``; an endpoint KG's queries), ``run.concurrency``
(capped by ``llm.max_parallel``) in flight, reachability on a cold cache for the job's questions
not yet in its cache, the share of a core the pilot's loop got; never below the rate-limit time
(the calls over ``llm.rpm`` and the tokens the limiter counts over ``llm.tpm``, each shared among
the jobs the launcher runs at once, ``hydra.launcher.n_jobs``). A pilot question that ends in an
error stops the estimate with an error naming the job: an estimate is never made from a pilot
that failed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kgx.core.cli import count, plain
from kgx.core.config import ConfigError
from kgx.core.paths import CONF_DIR
from kgx.estimate.interval import spread
from kgx.estimate.model import JobEstimate, add_up, estimate_job
from kgx.estimate.strata import DEFAULT_PILOT, Strata
from kgx.estimate.table import FORMATS, render
from kgx.estimate.wall import uncached
from kgx.results.record import Record
from kgx.run.compose import register_schemas
from kgx.run.spec import RunSpec, to_run_spec

MAX_PILOT = 100  # --max-pilot's default: a growing pilot's questions per job


@dataclass
class Job:
    """One run of the sweep: its name (what varies, as a sweep names its child runs) and config."""

    name: str
    overrides: list[str]
    spec: RunSpec


def compose_jobs(overrides: list[str]) -> tuple[list[Job], int]:
    """Every job the overrides make, composed and range-checked, and how many the launcher runs at
    once. Raises ConfigError naming the override or the job."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from hydra.types import RunMode
    from omegaconf.errors import OmegaConfBaseException

    from kgx.run.sweep import job_name, job_overrides, swept_keys

    register_schemas()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            try:  # the multirun config: what -m would sweep (its sweeper params, its launcher)
                config = GlobalHydra.instance().hydra.compose_config(
                    config_name="config", overrides=overrides, run_mode=RunMode.MULTIRUN, with_log_configuration=False
                )
            except (HydraException, OmegaConfBaseException) as exc:
                raise ConfigError(str(exc).splitlines()[0]) from None
            expanded = job_overrides(config)
            varying = swept_keys(expanded)
            parallel = max(1, int(config.hydra.launcher.get("n_jobs") or 1))
            jobs = []
            for job in expanded:
                try:
                    spec = to_run_spec(compose(config_name="config", overrides=job), job)
                except (HydraException, OmegaConfBaseException, ConfigError) as exc:
                    raise ConfigError(f"job {' '.join(job)}: {str(exc).splitlines()[0]}") from None
                name = job_name(job, varying) or f"{spec.method.name}-{spec.dataset.name}-{spec.llm.name}"
                jobs.append(Job(name, job, spec))
    finally:
        GlobalHydra.instance().clear()
    return jobs, parallel


@contextlib.contextmanager
def throwaway_store() -> Iterator[Path]:
    """A temporary launch directory for the pilots: their MLflow store, artifacts and output
    folders live in it and go with it. ``MLFLOW_TRACKING_URI`` is set aside meanwhile, else the
    pilots would log to the researcher's server."""
    saved = os.environ.pop("MLFLOW_TRACKING_URI", None)
    try:
        with tempfile.TemporaryDirectory(prefix="kgx-estimate-") as tmp:
            yield Path(tmp)
    finally:
        if saved is not None:
            os.environ["MLFLOW_TRACKING_URI"] = saved


def pilot_spec(spec: RunSpec, ids: list[str], where: Path) -> RunSpec:
    """The job's config on the sampled questions only, logged under ``where``. Only execution
    settings and the question selection change: the method's calls, hence the cache keys, do not.
    ``force``: jobs that differ only in execution settings (``run.concurrency=1,4``) share an
    identity, and the second must not take the first's pilot for a finished run with nothing in it."""
    dataset = dataclasses.replace(spec.dataset, ids=ids, sample=None, limit=None)
    run = dataclasses.replace(
        spec.run,
        output_dir=str(where),
        tracking_uri=None,
        experiment="kgx-estimate",
        traces="off",
        transcripts=None,  # a job's run.transcripts would ask for trace files the pilot does not write
        explain=0,
        progress=False,
        force=True,
    )
    return dataclasses.replace(spec, run=run, dataset=dataset)


def grow(size: int, cap: int, step: int, population: int, short: float) -> int:
    """The next pilot size when the widest interval is ``short`` times the target: where a
    half-width that goes as √(1/n - 1/N) would meet it, but at least ``step`` more and at most
    twice as many questions, since a spread measured on few questions is itself rough."""
    need = 1 / (1 / population + (1 / size - 1 / population) / short**2)
    return min(cap, max(size + step, min(2 * size, math.ceil(need))))


def pilot_note(result: JobEstimate, strata: Strata, precision: float | None, cap: int) -> str:
    """What the pilot was: its kinds, and with ``--precision`` whether it got there."""
    parts = [f"stratified by {strata.key} ({len(strata.sizes)} kinds)"] if strata.key else []
    if precision:
        widths = ", ".join(f"{name} ±{100 * spread(getattr(result, name)):.1f}%" for name in ("calls", "tokens"))
        target = f"±{100 * precision:g}%"
        parts.append(
            f"pilot {count(result.pilot, 'question')}: {target} reached ({widths})"
            if result.reached
            else f"pilot stopped at --max-pilot {cap} short of {target} ({widths})"
        )
    return "; ".join(parts)


def estimate(job: Job, args: argparse.Namespace, launch_dir: Path, parallel: int) -> tuple[JobEstimate, str]:
    """Run the job's pilot, growing it round by round with ``--precision``, and predict the full
    run; the second value says why the pilot failed. A round answers only the questions new to
    it, in a fresh throwaway folder, and the estimate pools every round's records."""
    from kgx import datasets
    from kgx.core.faults import describe
    from kgx.run.execute import execute

    questions = datasets.load(job.spec.dataset)
    strata = Strata.of(questions, args.strata)
    order = strata.order(args.seed)
    size = min(len(order), args.pilot or strata.default_pilot())
    step, cap = size, min(len(order), max(args.max_pilot, size)) if args.precision else size
    records: list[Record] = []
    rounds: list[tuple[list[Record], float]] = []  # each round's records and its loop's wall time
    while True:
        where = launch_dir / f"pilot-{sum(1 for _ in launch_dir.glob('pilot-*'))}"
        outcome = execute(pilot_spec(job.spec, order[len(records) : size], where), launch_dir)
        problems = outcome.failures
        if problems or outcome.not_started:
            reason = describe(problems) + (f"; {outcome.not_started} not run" if outcome.not_started else "")
            failed = JobEstimate(job.name, len(order), size, len(problems) + outcome.not_started)
            first = problems[0].message if problems else "the pilot stopped early"
            return failed, (f"job {job.name}: {failed.errors} of {size} pilot questions failed ({reason}): {first}")
        records += outcome.records
        rounds.append((outcome.records, outcome.summary.get("wall_s", 0.0)))
        cold = uncached(job.spec, questions)
        result = estimate_job(job.name, job.spec, records, strata, parallel, cold, rounds)
        widest = max(spread(result.calls), spread(result.tokens))
        # A spread the pilot did not show is no evidence of precision: at least twice the questions.
        short = max(widest / args.precision, 2.0 if result.flat else 0.0) if args.precision else 0.0
        if short <= 1 or size >= cap:
            break
        seen = f"{' and '.join(result.flat)} equal on every question" if result.flat else f"±{100 * widest:.1f}%"
        grown = grow(size, cap, step, len(order), short)
        print(f"  {size} questions: {seen} > ±{100 * args.precision:g}%, growing to {grown}", file=sys.stderr)
        size = grown
    result.reached = short <= 1 if args.precision else None
    result.note = "; ".join(filter(None, [pilot_note(result, strata, args.precision, cap), result.note]))
    return result, ""


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="python -m kgx.estimate",
        description=plain(__doc__).splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:6]),
    )
    cli.add_argument(
        "overrides", nargs="*", help="the overrides of python -m kgx (comma lists and +sweeps=NAME make jobs)"
    )
    cli.add_argument(
        "--pilot",
        type=int,
        metavar="N",
        help=f"questions per job in the pilot (default: {DEFAULT_PILOT})",
    )
    cli.add_argument("--seed", type=int, default=0, help="seed of the pilot's question sample (default 0)")
    cli.add_argument(
        "--precision",
        type=float,
        metavar="P",
        help="grow each job's pilot until the 95%% interval "
        "of its calls and tokens is within ± P × the estimate (a fraction, e.g. 0.1; default: "
        "a fixed pilot)",
    )
    cli.add_argument(
        "--max-pilot",
        type=int,
        metavar="M",
        help=f"with --precision, the most questions a job's pilot grows to (default {MAX_PILOT}, at least the pilot)",
    )
    cli.add_argument(
        "--strata",
        default="auto",
        metavar="KEY",
        help="meta key of the questions' kind to spread "
        "the pilot over (default auto: the first of qtype, compositionality_type, level, hops the "
        "questions carry; none: plain random)",
    )
    cli.add_argument("--format", choices=FORMATS, default="text")
    cli.add_argument(
        "-m",
        "--multirun",
        action="store_true",
        help="accepted for symmetry with python -m kgx; comma lists expand either way",
    )
    return cli


def options(argv: list[str]) -> argparse.Namespace:
    """The command line, checked; a bad option is a ``kgx: error:`` naming it."""
    args = parser().parse_intermixed_args(argv)
    if args.pilot is not None and args.pilot < 1:
        raise SystemExit(f"kgx: error: --pilot={args.pilot}: must be at least 1")
    if args.precision is not None and not 0 < args.precision < 1:
        raise SystemExit(f"kgx: error: --precision={args.precision}: must be a fraction between 0 and 1, e.g. 0.1")
    if args.max_pilot is not None and args.pilot is not None and args.max_pilot < args.pilot:
        raise SystemExit(f"kgx: error: --max-pilot={args.max_pilot}: must be at least --pilot ({args.pilot})")
    args.max_pilot = args.max_pilot or max(MAX_PILOT, args.pilot or 0)
    return args


def main(argv: list[str]) -> int:
    from kgx.core.locks import Busy
    from kgx.core.sources import SourceError
    from kgx.datasets import DataError
    from kgx.kg import KGError
    from kgx.llm.errors import LLMError

    args = options(argv)
    try:
        jobs, parallel = compose_jobs(args.overrides)
    except ConfigError as exc:
        raise SystemExit(f"kgx: error: {exc}") from None
    results, failures = [], []
    with throwaway_store() as launch_dir:
        for i, job in enumerate(jobs, 1):
            print(f"pilot {i}/{len(jobs)}: {job.name}", file=sys.stderr)
            try:
                result, failure = estimate(job, args, launch_dir, parallel)
            except (ConfigError, DataError, KGError, LLMError, Busy, FileNotFoundError, SourceError) as exc:
                raise SystemExit(f"kgx: error: job {job.name}: {exc}") from None
            results.append(result)
            failures += [failure] if failure else []
    settings = {"pilot": args.pilot, "precision": args.precision, "max_pilot": args.max_pilot, "seed": args.seed}
    sys.stdout.write(render(results, add_up(results, parallel), args.format, settings))
    if failures:
        raise SystemExit(
            "kgx: error: " + "\nkgx: error: ".join(failures) + "\nno estimate for these jobs: "
            "fix the cause and estimate again (their answered questions are cached)"
        )
    return 0
