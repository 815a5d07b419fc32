"""A sweep's summary, the tables and figures of its runs, logged to the sweep's parent run;
and the HTML page of any set of runs, logged to a run or a sweep as ``report/index.html``.

A sweep knows its parent run but not how its runs should be laid out, so the layout is
derived: the keys the sweep varied become row keys (``method.depth`` beside ``method``),
and every numeric one gets a metric-against-parameter figure.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import polars as pl

from kgx.core.cli import count
from kgx.report.failure_table import failure_table, plot_failures
from kgx.report.failure_table import metrics as failure_metrics
from kgx.report.html import RunQuestions, page
from kgx.report.pages import from_folder, from_mlflow
from kgx.report.paper_report import PAPER_TAG, paper_section
from kgx.report.plots import plot_cost_accuracy, plot_param
from kgx.report.render import render
from kgx.report.runs import (
    ReportError,
    client,
    load_run,
    load_runs,
    numeric,
    param_column,
    resolve_parent,
    run_titles,
    separating_keys,
)
from kgx.report.tables import Grid, cost_table, metric_table
from kgx.results.record import Record

ARTIFACT_DIR = "report"
PAGE = "index.html"


def layout(
    frame: pl.DataFrame,
    metric: str = "hits1",
    rows: Sequence[str] = ("method",),
    cols: Sequence[str] = ("dataset",),
    strict: bool = True,
) -> dict[str, Union[Grid, str]]:
    """The ``metric`` table (rows x cols, the swept keys added to the rows), the cost table and,
    when the runs have one, the failure breakdown. Not ``strict``: a table the runs cannot fill
    is the reason, for a page to show."""
    swept = separating_keys(frame, [*rows, *cols])
    builders = {
        f"Main table: {metric}": lambda: metric_table(frame, [*rows, *swept], cols, metric),
        "Cost": lambda: cost_table(frame, [*rows, *swept, *cols]),
    }
    if failure_metrics(frame):
        builders["Why questions were missed"] = lambda: failure_table(frame, [*rows, *swept, *cols])
    grids: dict[str, Union[Grid, str]] = {}
    for name, build in builders.items():
        try:
            grids[name] = build()
        except ReportError as exc:
            if strict:
                raise
            grids[name] = str(exc)
    return grids


def figures(
    frame: pl.DataFrame,
    out_dir: Path,
    metric: str = "hits1",
    rows: Sequence[str] = ("method",),
    cols: Sequence[str] = ("dataset",),
    cost: str = "total_tokens_per_q",
) -> list[Path]:
    """The accuracy-cost figure, one figure per numeric swept key and the failure breakdown's
    bars, written to ``out_dir``."""
    swept = separating_keys(frame, [*rows, *cols])
    breakdown = [plot_failures(frame, out_dir, [*rows, *swept, *cols])] if failure_metrics(frame) else []
    return (
        [plot_cost_accuracy(frame, out_dir, metric, cost, by=rows)]
        + [
            plot_param(frame, out_dir, key, metric, by=rows)
            for key in swept
            if numeric(frame[param_column(key)].drop_nulls().to_list())
        ]
        + breakdown
    )


def write_summary(
    frame: pl.DataFrame,
    out_dir: Path,
    metric: str = "hits1",
    rows: Sequence[str] = ("method",),
    cols: Sequence[str] = ("dataset",),
    cost: str = "total_tokens_per_q",
    runs: Sequence[RunQuestions] = (),
    title: str = "runs",
    sections: Sequence[tuple[str, object]] = (),
) -> list[Path]:
    """``table.md``/``table.csv`` (``metric`` by rows x cols), ``cost.md``/``cost.csv``,
    ``failures.md``/``failures.csv`` (when the runs have a breakdown), the
    figures, and ``index.html`` (``sections`` first, then all of them, and the questions of
    ``runs``) in ``out_dir``."""
    grids = layout(frame, metric, rows, cols)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for name, grid in zip(("table", "cost", "failures"), grids.values()):
        for fmt in ("md", "csv"):
            files.append(out_dir / f"{name}.{fmt}")
            files[-1].write_text(render(grid, fmt))
    drawn = figures(frame, out_dir, metric, rows, cols, cost)
    tables = [*sections, *grids.items()]
    (out_dir / PAGE).write_text(page(title, count(frame.height, "run"), tables, drawn, runs, metric))
    return [*files, *drawn, out_dir / PAGE]


def log_summary(
    parent_run_id: str,
    tracking_uri: Optional[str] = None,
    metric: str = "hits1",
    rows: Sequence[str] = ("method",),
    cols: Sequence[str] = ("dataset",),
    cost: str = "total_tokens_per_q",
) -> list[str]:
    """Summarise the FINISHED children of ``parent_run_id`` into artifacts ``report/...`` of
    the parent run; returns the artifact paths. Raises ReportError when there is nothing to
    summarise (no finished child) or the metric is unknown."""
    frame = load_runs(uri=tracking_uri, parent=parent_run_id)
    mlflow = client(tracking_uri)
    parent = mlflow.get_run(parent_run_id).info
    runs = from_mlflow(mlflow, frame, f"{parent.artifact_uri}/{ARTIFACT_DIR}")
    with tempfile.TemporaryDirectory() as tmp:
        files = write_summary(
            frame,
            Path(tmp),
            metric,
            rows,
            cols,
            cost,
            runs,
            f"sweep {parent.run_name} ({parent_run_id})",
            paper_sections(mlflow, parent_run_id, frame),
        )
        mlflow.log_artifacts(parent_run_id, tmp, ARTIFACT_DIR)
    return [f"{ARTIFACT_DIR}/{f.name}" for f in files]


def html_report(
    experiment: str = "kgx",
    uri: Optional[str] = None,
    parent: Optional[str] = None,
    run: Optional[str] = None,
    metric: str = "hits1",
    rows: Sequence[str] = ("method",),
    cols: Sequence[str] = ("dataset",),
    cost: str = "total_tokens_per_q",
) -> str:
    """The page of one ``run``, of a sweep (``parent``: its id or name) or of ``experiment``,
    to be saved outside the store: it links the runs' artifacts by their own URIs."""
    frame = load_run(run, uri) if run else load_runs(experiment, uri, parent)
    mlflow = client(uri)
    runs = from_mlflow(mlflow, frame, None)
    sections = paper_sections(mlflow, resolve_parent(mlflow, experiment, parent), frame) if parent else []
    title = f"run {run}" if run else f"sweep {parent}" if parent else f"experiment {experiment}"
    with tempfile.TemporaryDirectory() as tmp:
        shown = figures(frame, Path(tmp), metric, rows, cols, cost) if frame.height > 1 else []
        return page(
            title,
            count(frame.height, "run"),
            [*sections, *layout(frame, metric, rows, cols, strict=False).items()],
            shown,
            runs,
            metric,
        )


def paper_sections(mlflow: Any, parent_id: str, frame: pl.DataFrame) -> list[tuple[str, object]]:
    """The paper's table from the sweep's runs, when the sweep was one (``+paper=``: its parent's tag)."""
    name = mlflow.get_run(parent_id).data.tags.get(PAPER_TAG)
    return [paper_section(mlflow, parent_id, frame, name)] if name else []


def log_run_report(run_id: str, uri: str, out_dir: Path, records: Sequence[Record], metric: str = "hits1") -> str:
    """``report/index.html`` of one run, from the records it holds and the pictures in its
    folder; logged while the run is open, after its metrics. A single run has no figure (one
    point says nothing), so the page costs no plotting: it is cheap for a long run."""
    frame = load_run(run_id, uri)
    (label,) = run_titles(frame)
    text = page(
        f"run {frame['run_name'][0]}",
        f"{label}, run id {run_id}, {count(len(records), 'question')}",
        list(layout(frame, metric, strict=False).items()),
        [],
        [from_folder(run_id, label, out_dir, records)],
        metric,
    )
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / PAGE).write_text(text)
        client(uri).log_artifact(run_id, str(Path(tmp) / PAGE), ARTIFACT_DIR)
    return f"{ARTIFACT_DIR}/{PAGE}"
