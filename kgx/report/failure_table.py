"""The failure breakdown of runs (kgx.diagnose.breakdown): a table of shares and a stacked bar chart.

Each run logs ``failure.<category>`` as a share of its questions. The table is one line per
``rows`` value (method, dataset by default) with the mean +- std over seeds of every share; a
method that reads no KG (io, cot, sc) has no ``unreachable``, ``not_retrieved`` or ``lost``,
and those cells are blank ('-'), with the title saying why, rather than 0.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional, Sequence

import polars as pl
from matplotlib.figure import Figure

from kgx.core.cli import count
from kgx.diagnose.breakdown import CATEGORIES, describe
from kgx.report.pages import run_records
from kgx.report.runs import (
    ReportError,
    client,
    metric_column,
    natural_key,
    param_column,
    require_keys,
    run_labels,
)
from kgx.report.tables import Grid, aggregate, check_replicates, labels, summary_cell
from kgx.track.transcripts import command

NOT_APPLICABLE = "reads no KG, so only correct and not_answered apply"
# From good to bad, the stacking order of the chart; errors and fallbacks last, apart.
COLORS = {
    "correct": "#2e7d32",
    "not_answered": "#f9a825",
    "lost": "#ef6c00",
    "not_retrieved": "#c62828",
    "unreachable": "#6a1b9a",
    "fallback": "#90a4ae",
    "error": "#37474f",
}


def metrics(frame: pl.DataFrame) -> list[str]:
    """The ``failure.*`` metrics some run of ``frame`` logged, in the categories' order."""
    present = [f"failure.{c}" for c in CATEGORIES]
    return [
        m for m in present if metric_column(m) in frame.columns and frame[metric_column(m)].null_count() < frame.height
    ]


def failure_table(frame: pl.DataFrame, rows: Sequence[str] = ("method", "dataset")) -> Grid:
    """Shares of every category by ``rows``: mean +- std over seeds (n = runs)."""
    shown = metrics(frame)
    if not shown:
        raise ReportError(
            "no run has a failure breakdown (failure.* metrics): runs logged before kgx computed it, or none finished"
        )
    require_keys(frame, rows)
    check_replicates(frame, rows)
    kg_free = ", ".join(sorted({str(v) for v in _without_kg(frame)}))
    note = f"; '-' for {kg_free}: {NOT_APPLICABLE}" if kg_free else ""
    grid = Grid(
        title=f"failure breakdown, % of questions: mean +- std over seeds (n = runs){note}",
        row_keys=list(rows),
        col_keys=["category"],
        rows=labels(frame, rows),
        cols=[(m,) for m in shown],
        headers=[m.split(".", 1)[1] for m in shown],
    )
    for line in aggregate(frame, rows, shown).iter_rows(named=True):
        row = tuple(line[param_column(k)] for k in rows)
        for m in shown:
            grid.cells[row, (m,)] = summary_cell(line, m)
    return grid


def _without_kg(frame: pl.DataFrame) -> list[str]:
    """Methods whose runs have shares but no ``failure.not_retrieved``: they read no KG."""
    column = metric_column("failure.not_retrieved")
    has = pl.col(metric_column("failure.correct")).is_not_null()
    lacks = pl.col(column).is_null() if column in frame.columns else pl.lit(True)
    return frame.filter(has & lacks)[param_column("method")].unique().to_list()


def plot_failures(frame: pl.DataFrame, out_dir: Path, rows: Sequence[str] = ("method", "dataset")) -> Path:
    """One stacked horizontal bar per ``rows`` value: the mean share of every category, adding up
    to 100. Bars are stacked down the page, so that forty configurations make a taller figure of
    readable names rather than a strip too wide for any page."""
    grid = failure_table(frame, rows)
    names = [" / ".join(str(v) for v in row) for row in grid.rows]
    fig = Figure(figsize=(8.5, 1.4 + 0.32 * len(names)), layout="constrained")
    ax = fig.add_subplot()
    lefts = [0.0] * len(names)
    for (metric,), header in zip(grid.cols, grid.headers):
        widths = [grid.cell(row, (metric,)).mean or 0.0 for row in grid.rows]
        ax.barh(names, widths, left=lefts, label=header, color=COLORS.get(header))
        lefts = [left + w for left, w in zip(lefts, widths)]
    ax.set_xlabel("% of questions")
    ax.set_xlim(0, 100)
    ax.invert_yaxis()  # the table's order, top to bottom
    ax.set_title("Why questions were missed")
    fig.legend(loc="outside right upper", fontsize="small")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "failures.png"
    fig.savefig(path, dpi=110)
    return path


def listing(frame: pl.DataFrame, category: str, uri: Optional[str] = None) -> str:
    """Every question of ``category`` in the runs of ``frame``, one line each: run, id, question,
    and why (reachability, and where exploration left the gold path) - the per-question list an
    oracle run's ``not_retrieved`` questions are read from - then, per run, the command that
    shows a question's transcript (kgx.report.transcript)."""
    if category not in CATEGORIES:
        raise ReportError(f"unknown category '{category}'; categories: {', '.join(CATEGORIES)}")
    mlflow = client(uri)
    lines, runs = [], []
    for label, run_id in sorted(zip(run_labels(frame), frame["run_id"])):
        with tempfile.TemporaryDirectory() as tmp:
            records = [r for r in run_records(mlflow, run_id, tmp) if r.breakdown == category]
        for r in sorted(records, key=lambda r: natural_key(r.id)):
            why = [describe(r.reach)] if r.reach is not None else []
            if r.left_at:
                why.append(f"{r.left_at['why']} (gold path: {r.left_at['path']})")
            elif r.prediction.reason:
                why.append(r.prediction.reason)
            lines.append(f"{label}\t{r.id}\t{r.question}\t{'; '.join(why)}")
        if any(r.trace for r in records):
            runs.append(f"  {label}: {command(run_id, uri)} QUESTION_ID")
    head = f"{count(len(lines), 'question')} {category}"
    shown = ["a question's transcript in MLflow's trace view:", *runs] if runs else []
    return "\n".join([head, *lines, *shown]) + "\n"
