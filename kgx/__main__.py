"""``python -m kgx [overrides]``: one run, or a sweep with ``-m``; ``--help`` says what to choose from."""

from __future__ import annotations

import faulthandler
import math
import os
import sys
import textwrap
from pathlib import Path
from typing import Optional, TextIO

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from kgx.core.cli import count
from kgx.core.collector import tune
from kgx.core.config import ConfigError
from kgx.core.masking import masked_text
from kgx.core.paths import CONF_DIR, SWEEPS_DIR
from kgx.diagnose.hops import hops_warning
from kgx.run import hydra_record, sweep
from kgx.run.compose import register_schemas
from kgx.run.spec import RunSpec, to_run_spec
from kgx.run.sweep_preflight import SKIP_ENV, kg_fix

tune()  # before litellm and MLflow are imported: see kgx.core.collector
register_schemas()
# A crash in native code (llama.cpp, a driver) prints the Python stack that led into it, on the
# process's own stderr (sys.stderr may be a stream without a file descriptor, e.g. in a notebook).
if sys.__stderr__ is not None:
    faulthandler.enable(sys.__stderr__)


def main() -> Optional[float]:
    """``python -m kgx``: kgx's own flags are taken off the command line (``--no-preflight``: a
    sweep launches without its pre-flight, kgx.run.sweep_preflight), the rest is Hydra's."""
    flags = {SKIP_ENV: "--no-preflight" in sys.argv[1:], "HYDRA_FULL_ERROR": True}
    sys.argv = [arg for arg in sys.argv if arg != "--no-preflight"]
    # Hydra's own error report is replaced by kgx's (kgx.run.typos): it lets its exceptions through.
    saved = {name: os.environ.get(name) for name in flags}
    os.environ.update({name: "1" for name, on in flags.items() if on})
    try:
        return task()
    except Exception as exc:
        from kgx.run.typos import message

        shown = message(exc)
        if shown is None:
            raise
        raise SystemExit(error_line(shown)) from None
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@hydra.main(version_base=None, config_path=str(CONF_DIR), config_name="config")
def task(cfg: DictConfig) -> Optional[float]:
    from kgx.core.faults import DiskFull, disk_full, disk_full_message
    from kgx.core.locks import Busy
    from kgx.core.sources import SourceError
    from kgx.datasets import DataError
    from kgx.kg import KGError
    from kgx.llm.errors import LLMError
    from kgx.track.remote import TrackingUnavailable

    hydra_record.scrub(cfg)  # before anything else: a credential on the command line is in Hydra's files
    job = sweep.current_job()
    spec: Optional[RunSpec] = None
    try:
        refuse_schemas()
        spec = to_run_spec(cfg, list(HydraConfig.get().overrides.task))
        warn_demo_path(spec)
        from kgx.run.execute import (
            execute,  # litellm and MLflow: only once the config is known good
        )

        outcome = execute(spec, Path.cwd(), run_name=job.name, parent_id=job.parent_id)
    except (ConfigError, DataError, KGError, LLMError, Busy, FileNotFoundError, SourceError) as exc:
        if isinstance(exc, KGError) and spec is not None:  # the KG did not open: name the ways to one that does
            exc = KGError(f"{exc}. Ways out: {kg_fix(spec)}")
        if job.parent_id:
            return sweep.job_failed(cfg, job, exc)
        raise SystemExit(error_line(exc)) from None
    except TrackingUnavailable as exc:  # a sweep's parent cannot be told either: stop the job here
        raise SystemExit(error_line(exc)) from None
    except (DiskFull, OSError) as exc:
        if not isinstance(exc, DiskFull) and not disk_full(exc):
            raise
        message = str(exc) if isinstance(exc, DiskFull) else disk_full_message(exc, "answered questions are kept")
        raise SystemExit(error_line(message)) from None
    except Exception as exc:  # a crashed job must not stop the other jobs of a sweep
        if job.parent_id:
            return sweep.job_failed(cfg, job, exc)
        raise
    s = outcome.summary
    if outcome.skipped:
        experiment, _, original = outcome.reuses.rpartition("/")
        computed = f", computed by run {original} of experiment '{experiment}'" if original else ""
        print(
            f"already finished: mlflow run {outcome.run_id}{computed} (hits@1={s.get('hits1', float('nan')):.1f}); "
            f"run.force=true recomputes"
        )
        return s.get("hits1", float("nan"))
    cost = "unknown" if math.isnan(s["cost_usd"]) else f"${s['cost_usd']:.4f}"
    failed = f"{outcome.failed} failed, " if outcome.failed else ""  # questions that ended in an error
    print(
        f"{spec.method.name} on {spec.dataset.name} with {spec.llm.name}: "
        f"hits@1={s['hits1']:.1f} hits1_tog={s['hits1_tog']:.1f} hit_any={s['hit_any']:.1f} "
        f"f1={s['f1']:.1f} over {count(int(s['n_questions']), 'question')} ({int(s['errors'])} errors)\n"
        f"  evidence: answer_recall={s['answer_recall']:.1f} partial_match={s['partial_match']:.1f} "
        f"complete_match={s['complete_match']:.1f}; fallback {s['fallback_rate']:.1f}%, "
        f"{s['parse_failures']:.0f} parse failures\n"
        f"{why_missed(s)}"
        f"  per question: {s['llm_calls_per_q']:.2f} LLM calls, {s['total_tokens_per_q']:,.0f} tokens, "
        f"{s['latency_s_per_q']:.2f} s; cost {cost}; wall {s['wall_s']:.1f} s\n"
        f"  this invocation: {outcome.computed} answered, {failed}{outcome.resumed} resumed, "
        f"{outcome.billed_calls} billed LLM calls\n"
        f"  outputs {outcome.out_dir}  mlflow run {outcome.run_id} ({outcome.status})"
    )
    if warning := hops_warning(outcome.records):
        print(f"kgx: {warning}", file=sys.stderr)
    if outcome.interrupted:
        print("interrupted: finished questions are kept; run the same command to resume", file=sys.stderr)
        raise SystemExit(130)
    if outcome.status == "FAILED":
        problem = failure_report(outcome)
        if job.parent_id:  # the sweep goes on; its parent counts this job as failed
            print(f"kgx: job {job.name}: {problem}", file=sys.stderr)
            return s["hits1"]
        raise SystemExit(f"kgx: error: {problem}")
    return s["hits1"]


def error_line(error: object) -> str:
    """``kgx: error: ...`` without a credential of the run: a URL's user-info or key parameter
    (``llm.api_base=http://user:pw@host``), or any secret the run knows (kgx.core.boundary)."""
    from kgx.core.boundary import SECRETS

    return SECRETS.redact(masked_text(f"kgx: error: {error}"))[0]


class MaskedOutput:
    """Standard output with every credential masked (kgx.core.masking.masked_text): Hydra's
    ``--cfg job`` and ``--info`` print the composed config, credentials in URLs and under
    credential names included, before kgx runs any code of its own."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(masked_text(text))

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def why_missed(s: dict[str, float]) -> str:
    """The failure breakdown's line: reachability and the share of every category (kgx.diagnose.breakdown)."""
    shares = ", ".join(f"{k.split('.', 1)[1]} {v:.0f}%" for k, v in s.items() if k.startswith("failure.") and v)
    if not shares:
        return ""
    reach = f"reachable {s['reachable']:.1f}%, " if not math.isnan(s.get("reachable", math.nan)) else ""
    return f"  why: {reach}{shares}\n"


def failure_report(outcome) -> str:
    """Why a run is FAILED, and that a rerun picks up exactly what is missing."""
    from kgx.core.faults import describe

    parts = []
    if outcome.tripped:
        parts.append(f"stopped early: {outcome.tripped.signature} on consecutive questions ({outcome.tripped.message})")
    if outcome.failures:
        parts.append(
            f"{len(outcome.failures)} of {len(outcome.records)} questions ended in errors "
            f"({describe(outcome.failures)}); their figures are partial"
        )
    if outcome.not_started:
        parts.append(f"{count(outcome.not_started, 'question')} not run")
    return (
        "; ".join(parts) + ". The MLflow run is FAILED. Finished questions are kept: run the same "
        "command to compute the rest."
    )


def refuse_schemas() -> None:
    """``method=base_<name>`` would run a method's bare schema, without the settings of its
    ``conf/method/<name>.yaml``: the ``base_`` entries exist only for those files to extend. And
    ``+paper=<table>`` without ``-m`` would run one default job, not the table."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    choices = HydraConfig.get().runtime.choices
    choice = choices.get("method") or ""
    if choice.startswith("base_"):
        raise ConfigError(
            f"method={choice}: {choice} is the schema that conf/method/{choice[5:]}.yaml extends, "
            f"not a method; use method={choice[5:]}"
        )
    table = choices.get(sweep.PAPER_GROUP)
    if table and HydraConfig.get().mode != RunMode.MULTIRUN:  # without -m Hydra ignores the table's grid
        raise ConfigError(
            f"+paper={table} is the grid of a paper's table: run it with -m (python -m kgx -m +paper={table}); "
            f"python -m kgx.report paper {table} shows the table"
        )


def warn_demo_path(spec: RunSpec) -> None:
    """``dataset.path`` on the default dataset keeps everything else of the demo's config."""
    if spec.dataset.name == "demo" and spec.dataset.path:
        print(
            f"kgx: warning: dataset.path={spec.dataset.path} runs your file as the demo dataset: named 'demo', "
            f"with the demo's dataset.limit={spec.dataset.limit} and KG; for your own questions use "
            f"dataset=custom dataset.path={spec.dataset.path}",
            file=sys.stderr,
        )


def options(group: str) -> list[str]:
    """A config group's options, the default first; for ``method`` and ``kg``, every registered
    method and KG backend too."""
    from kgx.kg import KG_BACKENDS
    from kgx.methods import METHODS

    registered = {"method": set(METHODS), "kg": set(KG_BACKENDS)}.get(group, set())
    found = {p.stem for p in (CONF_DIR / group).glob("*.yaml")} | registered
    defaults = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "config.yaml").defaults)
    default = next((d[group] for d in defaults if isinstance(d, dict) and group in d), None)
    if "${" in str(default):  # kg: of/${dataset}, chosen by the dataset (conf/kg/of/)
        return ["the dataset's own", *sorted(found)]
    return sorted(found, key=lambda name: (name != default, name))


def usage() -> str:
    """kgx's own ``--help``: what a run is made of, the commands beside it, and where results go."""
    sweep_names = sorted({p.stem for folder in (Path.cwd() / "sweeps", SWEEPS_DIR) for p in folder.glob("*.yaml")})
    groups = [
        ("method", "how questions are answered"),
        ("dataset", "which questions"),
        ("llm", "the backbone model"),
        ("kg", "the knowledge graph"),
    ]

    def row(name: str, what: str, values: list[str]) -> str:
        return (
            textwrap.fill(", ".join(values), width=100, initial_indent=f"  {name:<12}", subsequent_indent=" " * 14)
            + f"\n{'':14}({what})"
        )

    lines = [
        "usage: python -m kgx [GROUP=OPTION ...] [KEY=VALUE ...]      one run",
        "       python -m kgx -m +sweeps=NAME [GROUP=A,B ...]         a sweep (Hydra multirun)",
        "       python -m kgx --cfg job [...]                        print the composed run, run nothing",
        "       python -m kgx -m ... --no-preflight                  launch a sweep without its pre-flight",
        "",
        "Config groups (conf/<group>/, the default first):",
    ]
    lines += [
        row(group, what, [f"{o} (default)" if i == 0 else o for i, o in enumerate(options(group))])
        for group, what in groups
    ]
    lines += [
        "",
        "Added with +:",
        row("+experiment", "the papers' runs by name; every run gets its paper settings", options("experiment")),
        row("+sweeps", "studies, with -m: kgx's own, and your own in ./sweeps/NAME.yaml", sweep_names),
        row("+paper", "a paper's table, with -m; python -m kgx.report paper TABLE lays it out", options("paper")),
        "",
        "Settings: run.*, method.*, dataset.*, llm.*, kg.* (python -m kgx --cfg job lists them all).",
        "Your own data: dataset=custom dataset.path=FILE, kg=custom kg.sources=[FILE.tsv]",
        "  (docs/guides/data-and-kgs.md).",
        "",
        "Commands:",
        "  python -m kgx.report   tables, cost tables, plots, comparisons, and the papers' tables beside kgx's",
        "  python -m kgx.ui       the MLflow UI over ./mlruns",
        "  python -m kgx.score    score a predictions file with the rules runs use",
        "  python -m kgx.datasets which dataset configs this machine can run",
        "  python -m kgx.kg       build (load), serve, bench or check a KG",
        "",
        "Results:",
        "  outputs/runs/<method>-<dataset>-<llm>-<hash>/   predictions.jsonl, traces/, config.json",
        "  mlruns/                                         the MLflow store (run.tracking_uri)",
        "  .kgx_cache/                                     LLM response cache and KG stores (run.cache_dir)",
        "",
        "Hydra's own options: python -m kgx --hydra-help",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    if {"--help", "-h"} & set(sys.argv[1:]):
        print(usage())
        sys.exit(0)
    if {"--cfg", "-c", "--info", "-i"} & set(sys.argv[1:]):
        sys.stdout = MaskedOutput(sys.stdout)  # type: ignore[assignment]
    main()
