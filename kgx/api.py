"""kgx from Python: run an experiment or a sweep from the overrides the command line takes, and load
finished runs as a polars frame for a notebook.

```python
import kgx

result = kgx.run_experiment("method=lmp", "llm=scripted", "dataset.limit=2")
result.summary["hits1"], result.status, result.records[0].prediction.answer

swept = kgx.run_sweep("method=io,cot", "run.seed=0,1", "llm=scripted", "dataset.limit=2")
swept.runs.select("params.method.name", "metrics.hits1")

frame = kgx.load_runs(parent="method×seed")  # any finished runs of the store, one row per run
```

A run is exactly what ``python -m kgx OVERRIDES`` computes: the same composition (paper settings
included), checks, resume and MLflow run; the same config is skipped once FINISHED. A sweep is
``python -m kgx -m OVERRIDES`` as a child process, so that Hydra's launcher and its workers keep to
themselves; its runs are read back from the store.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import polars as pl

from kgx.core.config import ConfigError
from kgx.results.record import Record

__all__ = ["Result", "SweepResult", "load_runs", "run_experiment", "run_sweep"]


@dataclass
class Result:
    """One run's outcome: its figures (``summary``: hits1, f1, llm_calls_per_q, ... as logged to
    MLflow), its per-question records (empty when the config was already FINISHED: ``skipped``),
    its MLflow run and its folder."""

    summary: dict[str, float]
    records: list[Record]
    run_id: str
    out_dir: Path
    status: str  # FINISHED, FAILED (questions ended in errors: run it again to compute them) or KILLED
    skipped: bool = False


@dataclass
class SweepResult:
    """A sweep's outcome: the parent run, how the command ended, and its runs (one row each)."""

    parent_id: str
    returncode: int  # 0, or 1 when jobs failed (their runs are FAILED; run the sweep again)
    runs: pl.DataFrame = field(default_factory=pl.DataFrame)
    output: str = ""  # what the sweep printed: its table, and which jobs failed


def run_experiment(*overrides: str, cwd: Optional[os.PathLike[str]] = None) -> Result:
    """Run one experiment, ``python -m kgx OVERRIDES`` in ``cwd`` (default: the working directory,
    where ``outputs/`` and ``mlruns/`` go). Bad input raises the error the command line prints."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.execute import execute
    from kgx.run.hydra_record import know_secrets
    from kgx.run.spec import to_run_spec

    if GlobalHydra.instance().is_initialized():
        raise ConfigError("kgx.run_experiment: Hydra is initialized already (inside a Hydra app): call it outside one")
    register_schemas()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(config_name="config", overrides=list(overrides))
    know_secrets(cfg, list(overrides))
    spec = to_run_spec(cfg, list(overrides))
    outcome = execute(spec, Path(cwd or os.getcwd()))
    return Result(outcome.summary, outcome.records, outcome.run_id, outcome.out_dir, outcome.status, outcome.skipped)


def run_sweep(
    *overrides: str, cwd: Optional[os.PathLike[str]] = None, timeout_s: Optional[float] = None
) -> SweepResult:
    """Run a sweep, ``python -m kgx -m OVERRIDES`` in ``cwd``, and load its runs. A sweep that
    could not start (bad input, its pre-flight) raises ConfigError with the command's own message."""
    where = Path(cwd or os.getcwd())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_source_root(), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "kgx", "-m", *overrides],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    found = re.search(r"mlflow parent run (\w+)", done.stdout)
    if found is None:
        raise ConfigError(done.stderr.strip().removeprefix("kgx: error: ") or "the sweep did not start")
    uri = _store_of(overrides, where)
    return SweepResult(found.group(1), done.returncode, load_runs(uri=uri, parent=found.group(1)), done.stdout)


def load_runs(experiment: str = "kgx", uri: Optional[str] = None, parent: Optional[str] = None) -> pl.DataFrame:
    """Finished runs of a store as a polars frame, one row per run: ``params.<key>``,
    ``metrics.<name>`` and ``tags.<name>`` columns. ``uri`` defaults to ``$MLFLOW_TRACKING_URI``,
    else ``./mlruns/mlflow.db``; ``parent`` (a sweep's name or parent run id) keeps its runs."""
    from kgx.report.runs import load_runs as load

    return load(experiment, uri, parent)


def _source_root() -> str:
    """The directory kgx is imported from, so the child process imports the same kgx."""
    return str(Path(__file__).resolve().parent.parent)


def _store_of(overrides: tuple[str, ...], where: Path) -> str:
    """The tracking store the sweep logged to: ``run.tracking_uri=`` if given, else as the command's."""
    from kgx.core.config import RunConfig
    from kgx.track.tracker import tracking_uri

    given = [o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0] == "run.tracking_uri"]
    return given[-1] if given else tracking_uri(RunConfig(), where)
