"""``python -m kgx.report drop``: a metric against ``kg.drop`` per method, GoG Table 2's layout.

    python -m kgx -m method=tog,gog,lmp kg.drop=0,0.2,0.4,0.6,0.8 dataset=metaqa_2hop kg=metaqa llm=oracle
    python -m kgx.report drop --parent SWEEP          # the table, drop.csv and hits1_vs_kg.drop.png

The runs' ``kg.drop`` (kgx.diagnose.crucial: the share of each question's gold-path triples removed)
is a column; one row per method (and per dataset where the runs hold several); each cell the mean
over seeds. A run logged before ``kg.drop`` existed read the whole KG: it counts as ``kg.drop=0.0``.
The text goes to stdout, the CSV (long form, kgx.report.render) and the figure (a curve per method,
a panel per dataset, kgx.report.plots) to ``--out-dir``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from kgx.report.commands import report_command
from kgx.report.plots import plot_param
from kgx.report.render import FORMATS, render
from kgx.report.runs import param_column
from kgx.report.tables import metric_table

KEY = "kg.drop"


def with_drop(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every run's ``kg.drop``: 0.0 for a run from before the key existed."""
    column = param_column(KEY)
    if column not in frame.columns:
        return frame.with_columns(pl.lit("0.0").alias(column))
    return frame.with_columns(pl.col(column).fill_null("0.0"))


def drop_report(frame: pl.DataFrame, metric: str, out_dir: Path, fmt: str) -> str:
    """The table in ``fmt``, then the paths of the CSV and the PNG written to ``out_dir``."""
    frame = with_drop(frame)
    rows = ["method", "dataset"] if frame[param_column("dataset")].n_unique() > 1 else ["method"]
    grid = metric_table(frame, rows, [KEY], metric)
    out_dir.mkdir(parents=True, exist_ok=True)
    table = out_dir / f"{metric}_vs_{KEY}.csv"
    table.write_text(render(grid, "csv"))
    figure = plot_param(frame, out_dir, KEY, metric, by=["method"])
    return f"{render(grid, fmt)}{table}\n{figure}\n"


def _arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--metric", default="hits1")
    sub.add_argument("--format", choices=sorted(FORMATS), default="term")
    sub.add_argument("--out-dir", type=Path, default=Path("outputs/report"), help="where the CSV and PNG go")


@report_command("drop", "a metric against kg.drop per method: table, CSV and a curve per method", _arguments)
def command(args: argparse.Namespace) -> str:
    from kgx.report.runs import load_runs

    return drop_report(
        load_runs(args.experiment, args.tracking_uri, args.parent), args.metric, args.out_dir, args.format
    )
