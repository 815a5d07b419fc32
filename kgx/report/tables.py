"""Tables of runs: mean, std and count over replicate runs (seeds), laid out by config keys.

A cell aggregates the runs that share its row and column keys. Those runs must differ in
nothing but the ``run.`` group (the seed and execution settings); otherwise the mean would
mix configurations, and the table says which key to add to the rows instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import polars as pl

from kgx.report.runs import (
    ReportError,
    metric_column,
    param_column,
    require_keys,
    require_metric,
    separating_keys,
    sort_values,
    varying_keys,
)

Label = tuple[Optional[str], ...]

# The cost table of KnowPath (Tables 3-6) and LMP (Table 4): per-question means, and the
# price of the whole run (kgx.core.metrics defines cost_usd as the run's total).
COST_METRICS = {
    "llm_calls_per_q": "LLM calls/q",
    "total_tokens_per_q": "total tokens/q",
    "input_tokens_per_q": "input tokens/q",
    "latency_s_per_q": "s/q",
    "cost_usd": "USD/run",
}


@dataclass(frozen=True)
class Cell:
    """Mean and sample std (None for a single run) over the ``n`` runs that have the metric."""

    mean: Optional[float]
    std: Optional[float]
    n: int


MISSING = Cell(None, None, 0)


@dataclass
class Grid:
    """A laid-out table: what every output format renders."""

    title: str
    row_keys: list[str]
    col_keys: list[str]
    rows: list[Label]
    cols: list[Label]
    headers: list[str]  # display text of each column
    cells: dict[tuple[Label, Label], Cell] = field(default_factory=dict)
    metric: Optional[str] = None  # the one metric of every cell, if there is one

    def cell(self, row: Label, col: Label) -> Cell:
        return self.cells.get((row, col), MISSING)


def aggregate(frame: pl.DataFrame, keys: Sequence[str], metrics: Sequence[str]) -> pl.DataFrame:
    """One line per distinct value of ``keys``: ``<metric>:mean``, ``:std`` and ``:n`` for each
    metric. Runs without the metric are left out of its figures, so ``n`` can differ by metric."""
    frame = frame.with_columns(
        pl.lit(None, dtype=pl.Float64).alias(metric_column(m)) for m in metrics if metric_column(m) not in frame.columns
    )
    figures = []
    for m in metrics:
        column = pl.col(metric_column(m))
        figures += [column.mean().alias(f"{m}:mean"), column.std().alias(f"{m}:std"), column.count().alias(f"{m}:n")]
    return frame.group_by([param_column(k) for k in keys]).agg(figures)


def check_replicates(frame: pl.DataFrame, rows: Sequence[str], cols: Sequence[str] = ()) -> None:
    mixed = varying_keys(frame, [*rows, *cols])
    if mixed:
        split = ",".join([*rows, *separating_keys(frame, [*rows, *cols])])
        raise ReportError(
            f"runs in one cell differ in {mixed}, so a mean over them would mix configurations; "
            "lay them out by more keys (e.g. {rows}) or report one sweep with {parent}",
            rows=(f"--rows {split}", f"rows={split.split(',')}"),
            parent=("--parent", "parent="),
        )


def metric_table(frame: pl.DataFrame, rows: Sequence[str], cols: Sequence[str], metric: str) -> Grid:
    """``metric`` by ``rows`` x ``cols``; combinations without a run are missing cells."""
    require_keys(frame, [*rows, *cols])
    require_metric(frame, metric)
    check_replicates(frame, rows, cols)
    title = f"{metric} by {' x '.join(rows)} / {' x '.join(cols)}: mean +- std over seeds (n = runs)"
    columns = labels(frame, cols)
    grid = Grid(
        title=title,
        row_keys=list(rows),
        col_keys=list(cols),
        rows=labels(frame, rows),
        cols=columns,
        headers=[" / ".join(str(v) for v in col) for col in columns],
        metric=metric,
    )
    for line in aggregate(frame, [*rows, *cols], [metric]).iter_rows(named=True):
        key = tuple(line[param_column(k)] for k in [*rows, *cols])
        grid.cells[key[: len(rows)], key[len(rows) :]] = summary_cell(line, metric)
    return grid


def cost_table(frame: pl.DataFrame, rows: Sequence[str] = ("method", "dataset")) -> Grid:
    """The papers' cost table: one line per ``rows`` value, the cost figures as columns.
    ``cost_usd`` is a column only when some run knows its price."""
    metrics = [m for m in COST_METRICS if m != "cost_usd"]
    require_keys(frame, rows)
    for m in metrics:
        require_metric(frame, m)
    if metric_column("cost_usd") in frame.columns and frame[metric_column("cost_usd")].null_count() < frame.height:
        metrics.append("cost_usd")
    check_replicates(frame, rows)
    grid = Grid(
        title="cost: mean +- std over seeds (n = runs)",
        row_keys=list(rows),
        col_keys=["metric"],
        rows=labels(frame, rows),
        cols=[(m,) for m in metrics],
        headers=[COST_METRICS[m] for m in metrics],
    )
    for line in aggregate(frame, rows, metrics).iter_rows(named=True):
        row = tuple(line[param_column(k)] for k in rows)
        for m in metrics:
            grid.cells[row, (m,)] = summary_cell(line, m)
    return grid


def summary_cell(line: dict, metric: str) -> Cell:
    n = line[f"{metric}:n"]
    return Cell(line[f"{metric}:mean"], line[f"{metric}:std"] if n > 1 else None, n) if n else MISSING


def labels(frame: pl.DataFrame, keys: Sequence[str]) -> list[Label]:
    """The distinct values of ``keys`` among the runs, each key in its natural order."""
    columns = [param_column(k) for k in keys]
    distinct = [tuple(r) for r in frame.select(columns).unique().iter_rows()]
    ranks = [{v: i for i, v in enumerate(sort_values(frame[c].unique().to_list()))} for c in columns]
    return sorted(distinct, key=lambda label: tuple(rank[v] for rank, v in zip(ranks, label)))
