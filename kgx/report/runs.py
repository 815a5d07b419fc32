"""Runs out of MLflow as one polars frame, and the config keys that name table rows and columns.

A frame has one row per FINISHED run: ``run_id``, ``start_time``, ``params.<key>`` (the flattened
resolved config, as strings), ``metrics.<name>`` (floats) and ``tags.<name>``. Reports read this
frame only, so a notebook can filter it with polars before handing it to a table or a plot.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any, Optional, Sequence

import polars as pl

from kgx.report.store import ReportError, client, search
from kgx.report.sweeps import choose

# Short names for the keys a table is usually laid out by; any full param key works as well.
SHORT_KEYS = {"method": "method.name", "dataset": "dataset.name", "llm": "llm.name", "seed": "run.seed"}

# The `run.` group holds the seed and execution settings (threads, paths, experiment): runs that
# differ only there are replicates of one configuration.
REPLICATE_GROUP = "run."


# Every kgx run carries its config hash (kgx.run.lifecycle); sweep parents and foreign runs do not.
IDENTITY_TAG = "config_hash"


def full_key(key: str) -> str:
    return SHORT_KEYS.get(key, key)


def param_column(key: str) -> str:
    return f"params.{full_key(key)}"


def metric_column(name: str) -> str:
    return f"metrics.{name}"


def download(mlflow: Any, run_id: str, path: str, where: str) -> Path:
    """One artifact of a run into the folder ``where``; a missing one is a ReportError."""
    from mlflow.exceptions import MlflowException

    # Small files: MLflow's progress bars would only clutter the report on stderr.
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    try:
        return Path(mlflow.download_artifacts(run_id, path, where))
    except (MlflowException, OSError) as exc:
        raise ReportError(f"run {run_id}: no {path} artifact ({exc})") from None


def load_runs(experiment: str = "kgx", uri: Optional[str] = None, parent: Optional[str] = None) -> pl.DataFrame:
    """Every FINISHED kgx run of ``experiment``, or of the sweep whose parent run is ``parent``
    (its run id, or its name among the sweeps of ``experiment``).

    Runs without a config hash (sweep parents, which hold a summary, or runs logged by other
    tools) are left out. A config rerun with ``run.force`` is a second MLflow run of one config
    hash; only the latest counts, so that a recomputation is not mistaken for another seed.
    """
    mlflow = client(uri)
    parent = parent and resolve_parent(mlflow, experiment, parent)
    experiment_id, where = _scope(mlflow, experiment, parent)
    runs = [r for r in search(mlflow, experiment_id, parent) if IDENTITY_TAG in r.data.tags]
    if not runs:
        raise ReportError(f"{where} has no FINISHED runs")
    frame = pl.from_dicts([_row(r) for r in runs], infer_schema_length=None)
    return latest_per_config(frame)


def _scope(mlflow: Any, experiment: str, parent: Optional[str]) -> tuple[str, str]:
    """The experiment to search and how to name it in messages."""
    if parent:
        run = mlflow.get_run(parent)
        return run.info.experiment_id, f"sweep parent run {parent} ({run.info.run_name})"
    found = mlflow.get_experiment_by_name(experiment)
    if found is None:
        names = sorted(e.name for e in mlflow.search_experiments())
        raise ReportError(f"no experiment '{experiment}' in {mlflow.tracking_uri}; experiments there: {names}")
    return found.experiment_id, f"experiment '{experiment}' in {mlflow.tracking_uri}"


def resolve_parent(mlflow: Any, experiment: str, parent: str) -> str:
    """The run id of sweep ``parent``, given as a run id or as a sweep's name
    (kgx.report.sweeps.choose: of several sweeps of one name, the latest with finished runs)."""
    return choose(mlflow, experiment, parent).sweep.run_id


def load_run(run_id: str, uri: Optional[str] = None) -> pl.DataFrame:
    """One run as a one-row frame, whatever its status: a run's own report is written while
    it is still RUNNING, and a FAILED run's figures still describe the questions it answered."""
    from mlflow.exceptions import MlflowException

    mlflow = client(uri)
    try:
        return pl.from_dicts([_row(mlflow.get_run(run_id))], infer_schema_length=None)
    except MlflowException:
        raise ReportError(f"no run {run_id} in {mlflow.tracking_uri}") from None


def _row(run: Any) -> dict[str, Any]:
    """One run as a flat record. MLflow keeps an unknown figure (an unpriced cost) as NaN;
    it becomes null here so that it is absent from means rather than poisoning them."""
    row: dict[str, Any] = {"run_id": run.info.run_id, "run_name": run.info.run_name, "start_time": run.info.start_time}
    row.update({f"params.{k}": v for k, v in run.data.params.items()})
    row.update({metric_column(k): None if math.isnan(v) else v for k, v in run.data.metrics.items()})
    row.update({f"tags.{k}": v for k, v in run.data.tags.items() if not k.startswith("mlflow.")})
    return row


def latest_per_config(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort("start_time", descending=True).unique(
        subset=f"tags.{IDENTITY_TAG}", keep="first", maintain_order=True
    )


def require_keys(frame: pl.DataFrame, keys: Sequence[str]) -> None:
    for key in keys:
        if param_column(key) not in frame.columns:
            raise ReportError(
                f"unknown key '{key}': no run has param '{full_key(key)}'; short keys: "
                f"{sorted(SHORT_KEYS)}; keys that differ between runs: {varying_keys(frame, [])}"
            )


def require_metric(frame: pl.DataFrame, name: str) -> None:
    column = metric_column(name)
    if column not in frame.columns or frame[column].null_count() == frame.height:
        known = sorted(c[len("metrics.") :] for c in frame.columns if c.startswith("metrics."))
        raise ReportError(f"no run has a value for metric '{name}'; metrics: {known}")


def varying_keys(frame: pl.DataFrame, fixed: Sequence[str]) -> list[str]:
    """Config keys (outside the replicate group) that take more than one value among runs that
    share the ``fixed`` keys. Averaging over such a key would mix different configurations, so
    a table refuses to and a sweep summary lays the key out as a row key instead."""
    fixed_columns = [param_column(k) for k in fixed]
    candidates = [
        c
        for c in frame.columns
        if c.startswith("params.") and c not in fixed_columns and not c.startswith(f"params.{REPLICATE_GROUP}")
    ]
    if not candidates:
        return []
    if fixed_columns:
        counts = frame.group_by(fixed_columns).agg(pl.col(c).n_unique() for c in candidates)
    else:
        counts = frame.select(pl.col(c).n_unique() for c in candidates)
    return [c[len("params.") :] for c in candidates if counts[c].max() > 1]


def separating_keys(frame: pl.DataFrame, fixed: Sequence[str]) -> list[str]:
    """Keys to add to ``fixed`` until no cell mixes configurations, added one at a time so
    that a key that implies others comes alone: sweeping ``llm`` varies ``llm.name``,
    ``llm.model`` and more, and ``llm.name`` separates them all. Group names go first."""
    added: list[str] = []
    while mixed := varying_keys(frame, [*fixed, *added]):
        added.append(min(mixed, key=lambda k: (not k.endswith(".name"), k)))
    return added


def sort_values(values: Sequence[Optional[str]]) -> list[Optional[str]]:
    """Numbers in numeric order (depth 2 before 10), other text alphabetically, absent last."""
    present = [v for v in values if v is not None]
    absent = [None] * (len(values) - len(present))
    return (sorted(present, key=float) if numeric(present) else sorted(present, key=natural_key)) + absent


def numeric(values: Sequence[Optional[str]]) -> bool:
    """Whether every value is a number (absent values are not)."""
    try:
        [float(v) for v in values]
    except (TypeError, ValueError):
        return False
    return True


def run_labels(frame: pl.DataFrame, most: int = 3) -> list[str]:
    """A name per run (row) of ``frame`` that tells them apart: the method, then the keys whose
    values differ among the runs, e.g. ``lmp (method.depth=2)``. Runs that differ in nothing
    shown get their run id's first 8 characters."""
    method = param_column("method")
    names = [
        f"{row.get(method) or 'run'}" + _knobs(row, [k for k in _differing(frame) if k != full_key("method")], most)
        for row in frame.iter_rows(named=True)
    ]
    return _apart(names, frame)


# What a run is, in the words of its question labels: its method, backbone and KG.
TITLE_KEYS = ("method.name", "llm.name", "kg.name")
PROVENANCE_GROUP = "settings."  # where a run's settings came from, not what it computes


def run_titles(frame: pl.DataFrame, most: int = 3) -> list[str]:
    """A run's method, backbone and KG, then what else tells it apart from the other runs in
    short keys, e.g. ``lmp · gpt4 · freebase (depth=4, width=5)`` (an HTML page's question labels)."""
    differing = [k for k in _differing(frame) if k not in TITLE_KEYS and not k.startswith(PROVENANCE_GROUP)]
    names = [
        " · ".join(str(row.get(f"params.{k}") or "-") for k in TITLE_KEYS) + _knobs(row, differing, most, short=True)
        for row in frame.iter_rows(named=True)
    ]
    return _apart(names, frame)


def _differing(frame: pl.DataFrame) -> list[str]:
    """The config keys whose values differ among the runs. A method's own knob counts only where
    it differs between runs of that method (io has no depth to compare with tog's); of a group
    that differs as a whole (``llm.*``) only its ``.name`` counts; execution settings other than
    the seed are left out."""
    method = param_column("method")
    if method not in frame.columns:
        frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(method))
    keys = [c for c in frame.columns if c.startswith("params.") and c != method and _shown(c[len("params.") :])]
    spread = frame.group_by(method).agg(pl.col(c).drop_nulls().n_unique() for c in keys)
    method_group = method.rsplit(".", 1)[0] + "."
    differing = [
        c[len("params.") :]
        for c in keys
        if (spread[c].max() if c.startswith(method_group) else frame[c].n_unique()) > 1
    ]
    named = {k.rsplit(".", 1)[0] for k in differing if k.endswith(".name")}
    return [k for k in differing if k.endswith(".name") or k.rsplit(".", 1)[0] not in named]


def _knobs(row: dict, keys: Sequence[str], most: int, short: bool = False) -> str:
    """`` (method.depth=2, +1 more)``: the run's values of ``keys``, at most ``most`` of them;
    ``short``: keys as a reader says them (``depth``, ``dataset``, ``seed``)."""
    parts = [f"{_short(k) if short else k}={row[f'params.{k}']}" for k in keys if row[f"params.{k}"] is not None]
    parts = parts[:most] + ([f"+{len(parts) - most} more"] if len(parts) > most else [])
    return f" ({', '.join(parts)})" if parts else ""


def _short(key: str) -> str:
    named = {full: short for short, full in SHORT_KEYS.items()}
    if key in named:
        return named[key]
    group, _, rest = key.partition(".")
    return rest if group == "method" else key


def _apart(names: list[str], frame: pl.DataFrame) -> list[str]:
    """Names that are still alike get their run id's first 8 characters."""
    if len(set(names)) < len(names):
        return [f"{n} [{run_id[:8]}]" for n, run_id in zip(names, frame["run_id"])]
    return names


def _shown(key: str) -> bool:
    return not key.startswith(REPLICATE_GROUP) or key == full_key("seed")


def natural_key(text: str) -> tuple:
    """Text with its numbers in numeric order (``q10`` after ``q9``, ``n=16`` after ``n=2``):
    question ids in their dataset order, series names as a reader scans them."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text) if p)
