"""The figures a sweep logs to its parent run (``figures/``), the comparisons a reader looks at
first: accuracy against cost per question with the Pareto front, accuracy by question kind, kgx
against a paper's published figures, and accuracy against a swept number.

Each figure is a PNG (10 inches wide at 100 dpi) and an HTML page with the same picture as inline
SVG, every point's figures on hover and in a table below it. A figure with nothing to show for a
sweep (its datasets' questions are of one kind, it is no paper table, it sweeps no number) is not
drawn. What each shows is computed in kgx.report.figure_points, apart from its drawing
(kgx.report.figure_draw), so that it can be checked value by value.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Optional

import polars as pl

from kgx.report import figure_draw as draw
from kgx.report.figure_points import (
    COSTS,
    cost_points,
    kind_grids,
    paper_points,
    param_points,
    swept_numbers,
)
from kgx.report.paper_report import PAPER_TAG, sweep_cells
from kgx.report.questions import QuestionFields
from kgx.report.runs import client, load_runs, resolve_parent

FIGURE_DIR = "figures"  # the parent run's artifact folder


def write_figures(
    frame: pl.DataFrame, out_dir: Path, mlflow: Any, parent_id: Optional[str] = None, metric: str = "hits1"
) -> list[Path]:
    """Every figure the runs have something to show in, written to ``out_dir`` (PNG, and HTML
    where drawn here); ``parent_id``: the sweep, whose paper table (tag ``paper``) is drawn too."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    for cost, words in COSTS.items():
        if f"metrics.{cost}" in frame.columns and (points := cost_points(frame, metric, cost)):
            files += draw.cost_figure(points, out_dir / f"{metric}_vs_{cost}", metric, words)
    grids = kind_grids(frame, QuestionFields(mlflow, peers=frame.to_dicts()), metric)
    if grids:
        files += draw.kind_figure(grids, out_dir / f"{metric}_by_kind", metric)
    paper = mlflow.get_run(parent_id).data.tags.get(PAPER_TAG) if parent_id else None
    if paper and (cells := paper_points(sweep_cells(mlflow, frame, paper)[0])):
        files += draw.paper_figure(cells, out_dir / f"{paper}_vs_published", paper)
    for param in swept_numbers(frame):
        files += draw.param_figure(param_points(frame, param, metric), out_dir / f"{metric}_vs_{param}", metric, param)
    return files


def log_figures(parent_id: str, uri: Optional[str] = None, metric: str = "hits1") -> list[str]:
    """Draw the figures of sweep ``parent_id``'s FINISHED runs and log them to the parent run
    under ``figures/``; the artifact paths."""
    mlflow = client(uri)
    frame = load_runs(uri=uri, parent=parent_id)
    with tempfile.TemporaryDirectory() as tmp:
        files = write_figures(frame, Path(tmp), mlflow, parent_id, metric)
        if files:
            mlflow.log_artifacts(parent_id, tmp, FIGURE_DIR)
    return [f"{FIGURE_DIR}/{f.name}" for f in files]


def figures_of(experiment: str, uri: Optional[str], parent: str, out_dir: Path, log: bool, metric: str) -> list[Path]:
    """``python -m kgx.report figures``: the figures of sweep ``parent`` in ``out_dir``, and with
    ``log`` on its parent run too (a sweep made before kgx drew them gets them)."""
    mlflow = client(uri)
    parent_id = resolve_parent(mlflow, experiment, parent)
    files = write_figures(load_runs(experiment, uri, parent_id), out_dir, mlflow, parent_id, metric)
    for file in files if log else ():
        mlflow.log_artifact(parent_id, str(file), FIGURE_DIR)
    return files
