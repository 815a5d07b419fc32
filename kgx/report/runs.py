"""Runs out of MLflow as one polars frame, and the config keys that name table rows and columns.

A frame has one row per FINISHED run: ``run_id``, ``start_time``, ``params.<key>`` (the flattened
resolved config, as strings), ``metrics.<name>`` (floats) and ``tags.<name>``. Reports read this
frame only, so a notebook can filter it with polars before handing it to a table or a plot.
"""
from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any, Optional, Sequence

import polars as pl

from kgx.config import RunConfig
from kgx.tracking import PARENT_TAG, tracking_uri

# Short names for the keys a table is usually laid out by; any full param key works as well.
SHORT_KEYS = {"method": "method.name", "dataset": "dataset.name", "llm": "llm.name", "seed": "run.seed"}

# The `run.` group holds the seed and execution settings (threads, paths, experiment): runs that
# differ only there are replicates of one configuration.
REPLICATE_GROUP = "run."


# Every kgx run carries its config hash (kgx.lifecycle); sweep parents and foreign runs do not.
IDENTITY_TAG = "config_hash"


class ReportError(Exception):
    """Nothing to report, or a request the runs cannot answer; the message says which."""


def full_key(key: str) -> str:
    return SHORT_KEYS.get(key, key)


def param_column(key: str) -> str:
    return f"params.{full_key(key)}"


def metric_column(name: str) -> str:
    return f"metrics.{name}"


def default_uri() -> str:
    """Where ``python -m kgx`` launched from this directory logs (kgx.tracking's rule)."""
    return tracking_uri(RunConfig(), Path.cwd())


def client(uri: Optional[str] = None) -> Any:
    """An MlflowClient on an existing store. A missing sqlite file is an error here rather
    than an empty store MLflow would silently create."""
    from mlflow.tracking import MlflowClient

    uri = uri or default_uri()
    if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///"):]).exists():
        raise ReportError(f"no MLflow store at {uri[len('sqlite:///'):]} (tracking URI {uri}); "
                          "run an experiment first or pass --tracking-uri")
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return MlflowClient(tracking_uri=uri)


def load_runs(experiment: str = "kgx", uri: Optional[str] = None, parent: Optional[str] = None) -> pl.DataFrame:
    """Every FINISHED kgx run of ``experiment``, or of the sweep whose parent run is ``parent``.

    Runs without a config hash (sweep parents, which hold a summary, or runs logged by other
    tools) are left out. A config rerun with ``run.force`` is a second MLflow run of one config
    hash; only the latest counts, so that a recomputation is not mistaken for another seed.
    """
    mlflow = client(uri)
    experiment_id, where = _scope(mlflow, experiment, parent)
    runs = [r for r in _search(mlflow, experiment_id, parent) if IDENTITY_TAG in r.data.tags]
    if not runs:
        raise ReportError(f"{where} has no FINISHED runs")
    frame = pl.from_dicts([_row(r) for r in runs], infer_schema_length=None)
    return latest_per_config(frame)


def _scope(mlflow: Any, experiment: str, parent: Optional[str]) -> tuple[str, str]:
    """The experiment to search and how to name it in messages."""
    from mlflow.exceptions import MlflowException

    if parent:
        try:
            return mlflow.get_run(parent).info.experiment_id, f"sweep parent run {parent}"
        except MlflowException:
            raise ReportError(f"no run {parent} in {mlflow.tracking_uri}") from None
    found = mlflow.get_experiment_by_name(experiment)
    if found is None:
        names = sorted(e.name for e in mlflow.search_experiments())
        raise ReportError(f"no experiment '{experiment}' in {mlflow.tracking_uri}; experiments there: {names}")
    return found.experiment_id, f"experiment '{experiment}' in {mlflow.tracking_uri}"


def _search(mlflow: Any, experiment_id: str, parent: Optional[str]) -> list[Any]:
    query = "attributes.status = 'FINISHED'"
    if parent:
        query += f" and tags.`{PARENT_TAG}` = '{parent}'"
    runs, token = [], None
    while True:
        page = mlflow.search_runs([experiment_id], filter_string=query, max_results=1000, page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _row(run: Any) -> dict[str, Any]:
    """One run as a flat record. MLflow keeps an unknown figure (an unpriced cost) as NaN;
    it becomes null here so that it is absent from means rather than poisoning them."""
    row: dict[str, Any] = {"run_id": run.info.run_id, "start_time": run.info.start_time}
    row.update({f"params.{k}": v for k, v in run.data.params.items()})
    row.update({metric_column(k): None if math.isnan(v) else v for k, v in run.data.metrics.items()})
    row.update({f"tags.{k}": v for k, v in run.data.tags.items() if not k.startswith("mlflow.")})
    return row


def latest_per_config(frame: pl.DataFrame) -> pl.DataFrame:
    return (frame.sort("start_time", descending=True)
            .unique(subset=f"tags.{IDENTITY_TAG}", keep="first", maintain_order=True))


def require_keys(frame: pl.DataFrame, keys: Sequence[str]) -> None:
    for key in keys:
        if param_column(key) not in frame.columns:
            raise ReportError(f"unknown key '{key}': no run has param '{full_key(key)}'; short keys: "
                              f"{sorted(SHORT_KEYS)}; keys that differ between runs: {varying_keys(frame, [])}")


def require_metric(frame: pl.DataFrame, name: str) -> None:
    column = metric_column(name)
    if column not in frame.columns or frame[column].null_count() == frame.height:
        known = sorted(c[len("metrics."):] for c in frame.columns if c.startswith("metrics."))
        raise ReportError(f"no run has a value for metric '{name}'; metrics: {known}")


def varying_keys(frame: pl.DataFrame, fixed: Sequence[str]) -> list[str]:
    """Config keys (outside the replicate group) that take more than one value among runs that
    share the ``fixed`` keys. Averaging over such a key would mix different configurations, so
    a table refuses to and a sweep summary lays the key out as a row key instead."""
    fixed_columns = [param_column(k) for k in fixed]
    candidates = [c for c in frame.columns if c.startswith("params.") and c not in fixed_columns
                  and not c.startswith(f"params.{REPLICATE_GROUP}")]
    if not candidates:
        return []
    if fixed_columns:
        counts = frame.group_by(fixed_columns).agg(pl.col(c).n_unique() for c in candidates)
    else:
        counts = frame.select(pl.col(c).n_unique() for c in candidates)
    return [c[len("params."):] for c in candidates if counts[c].max() > 1]


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
    return (sorted(present, key=float) if numeric(present) else sorted(present)) + absent


def numeric(values: Sequence[Optional[str]]) -> bool:
    """Whether every value is a number (absent values are not)."""
    try:
        [float(v) for v in values]
    except (TypeError, ValueError):
        return False
    return True
