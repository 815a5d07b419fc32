"""PNG figures of runs: accuracy against cost, and a metric against a swept parameter.

One panel per dataset (different datasets have different scales). Each point is the mean over
replicate runs (seeds) with std error bars. Figures are drawn on matplotlib's ``Figure``
directly, not pyplot, so no display backend or global figure state is involved.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from kgx.report.runs import (ReportError, full_key, numeric, param_column, require_keys, require_metric,
                             separating_keys, sort_values)
from kgx.report.tables import aggregate, labels

PANEL = "dataset"


def plot_cost_accuracy(frame: pl.DataFrame, out_dir: Path, metric: str = "hits1", cost: str = "total_tokens_per_q",
                       by: Sequence[str] = ("method",)) -> Path:
    """``metric`` (y) against ``cost`` (x), one labelled point per ``by`` value (the papers'
    cost-effectiveness figure, e.g. KnowPath Fig. 4). Keys that vary within a ``by`` value
    (``method.n``) split it into several points, so that no point mixes configurations."""
    require_keys(frame, [*by, PANEL])
    require_metric(frame, metric)
    require_metric(frame, cost)
    series = [*by, *separating_keys(frame, [*by, PANEL])]
    means = aggregate(frame, [*series, PANEL], [metric, cost]).drop_nulls([f"{metric}:mean", f"{cost}:mean"])
    if means.is_empty():
        raise ReportError(f"no run has both {metric} and {cost}")
    fig, axes = _panels(frame)
    for ax, (panel,) in zip(axes, labels(frame, [PANEL])):
        for point in means.filter(pl.col(param_column(PANEL)) == panel).iter_rows(named=True):
            ax.errorbar(point[f"{cost}:mean"], point[f"{metric}:mean"], xerr=point[f"{cost}:std"],
                        yerr=point[f"{metric}:std"], fmt="o", capsize=3)
            ax.annotate(_name(point, by, series), (point[f"{cost}:mean"], point[f"{metric}:mean"]),
                        textcoords="offset points", xytext=(5, 5), fontsize=8)
        _axes(ax, panel, cost, metric)
    return _save(fig, out_dir / f"{metric}_vs_{cost}.png")


def plot_param(frame: pl.DataFrame, out_dir: Path, param: str, metric: str = "hits1",
               by: Sequence[str] = ("method",)) -> Path:
    """``metric`` against a swept ``param``, one line per ``by`` value (KnowPath Fig. 5, LMP
    Fig. 3). Runs without the param (a method that lacks the knob) are left out; numeric
    values are placed to scale, anything else evenly."""
    require_keys(frame, [*by, param, PANEL])
    frame = frame.filter(pl.col(param_column(param)).is_not_null())
    require_metric(frame, metric)
    series = [*by, *separating_keys(frame, [*by, param, PANEL])]
    means = aggregate(frame, [*series, param, PANEL], [metric]).drop_nulls(f"{metric}:mean")
    values = sort_values(frame[param_column(param)].unique().to_list())
    position = {v: float(v) for v in values} if numeric(values) else {v: i for i, v in enumerate(values)}
    fig, axes = _panels(frame)
    for ax, (panel,) in zip(axes, labels(frame, [PANEL])):
        points = means.filter(pl.col(param_column(PANEL)) == panel).iter_rows(named=True)
        for name, line in _lines(sorted(points, key=lambda p: position[p[param_column(param)]]), by, series).items():
            ax.errorbar([position[p[param_column(param)]] for p in line], [p[f"{metric}:mean"] for p in line],
                        yerr=[p[f"{metric}:std"] or 0.0 for p in line], fmt="o-", capsize=3, label=name)
        ax.set_xticks(list(position.values()), values)  # ticks at the swept values, as the papers draw them
        ax.legend(fontsize=8)
        _axes(ax, panel, full_key(param), metric)
    return _save(fig, out_dir / f"{metric}_vs_{full_key(param)}.png")


def _lines(points: list[dict], by: Sequence[str], series: Sequence[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for point in points:
        out.setdefault(_name(point, by, series), []).append(point)
    return out


def _name(point: dict, by: Sequence[str], series: Sequence[str]) -> str:
    """``cot``, or ``sc, method.n=5`` when a key beyond ``by`` separates configurations."""
    values = [str(point[param_column(k)]) for k in by]
    return ", ".join(values + [f"{k}={point[param_column(k)]}" for k in series[len(by):]])


def _panels(frame: pl.DataFrame) -> tuple[Figure, list[Axes]]:
    count = len(labels(frame, [PANEL]))
    fig = Figure(figsize=(4.5 * count, 3.6), layout="constrained")
    return fig, list(fig.subplots(1, count, squeeze=False)[0])


def _axes(ax: Axes, title: str, x: str, y: str) -> None:
    ax.set_title(title)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path
