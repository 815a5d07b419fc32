"""A sweep's summary, the tables and figures of its runs, logged to the sweep's parent run.

A sweep knows its parent run but not how its runs should be laid out, so the layout is
derived: the keys the sweep varied become row keys (``method.depth`` beside ``method``),
and every numeric one gets a metric-against-parameter figure.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional, Sequence

import polars as pl

from kgx.report.plots import plot_cost_accuracy, plot_param
from kgx.report.render import render
from kgx.report.runs import client, load_runs, numeric, param_column, separating_keys
from kgx.report.tables import cost_table, metric_table

ARTIFACT_DIR = "report"


def write_summary(frame: pl.DataFrame, out_dir: Path, metric: str = "hits1", rows: Sequence[str] = ("method",),
                  cols: Sequence[str] = ("dataset",), cost: str = "total_tokens_per_q") -> list[Path]:
    """``table.md``/``table.csv`` (``metric`` by rows x cols), ``cost.md``/``cost.csv``, the
    accuracy-cost figure and one figure per numeric swept key, written to ``out_dir``."""
    swept = separating_keys(frame, [*rows, *cols])
    out_dir.mkdir(parents=True, exist_ok=True)
    grids = {"table": metric_table(frame, [*rows, *swept], cols, metric),
             "cost": cost_table(frame, [*rows, *swept, *cols])}
    files = []
    for name, grid in grids.items():
        for fmt in ("md", "csv"):
            files.append(out_dir / f"{name}.{fmt}")
            files[-1].write_text(render(grid, fmt))
    files.append(plot_cost_accuracy(frame, out_dir, metric, cost, by=rows))
    files += [plot_param(frame, out_dir, key, metric, by=rows) for key in swept
              if numeric(frame[param_column(key)].drop_nulls().to_list())]
    return files


def log_summary(parent_run_id: str, tracking_uri: Optional[str] = None, metric: str = "hits1",
                rows: Sequence[str] = ("method",), cols: Sequence[str] = ("dataset",),
                cost: str = "total_tokens_per_q") -> list[str]:
    """Summarise the FINISHED children of ``parent_run_id`` into artifacts ``report/...`` of
    the parent run; returns the artifact paths. Raises ReportError when there is nothing to
    summarise (no finished child) or the metric is unknown."""
    frame = load_runs(uri=tracking_uri, parent=parent_run_id)
    with tempfile.TemporaryDirectory() as tmp:
        files = write_summary(frame, Path(tmp), metric, rows, cols, cost)
        client(tracking_uri).log_artifacts(parent_run_id, tmp, ARTIFACT_DIR)
    return [f"{ARTIFACT_DIR}/{f.name}" for f in files]
