"""PNG figures of runs: accuracy against cost, and a metric against a swept parameter.

One panel per dataset (different datasets have different scales), at most ``COLUMNS`` side by
side and further datasets on rows below, so that a figure is about as wide as a page (1,280 px)
whatever the number of datasets, and is read at its own size rather than shrunk. Each point is
the mean over replicate runs (seeds) with std error bars, and is named beside it. Figures are
drawn on matplotlib's ``Figure`` directly, not pyplot, so no display backend or global figure
state is involved.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from kgx.report.runs import (
    ReportError,
    full_key,
    natural_key,
    numeric,
    param_column,
    require_keys,
    require_metric,
    separating_keys,
    sort_values,
)
from kgx.report.tables import aggregate, labels

PANEL = "dataset"
COLUMNS = 2  # panels side by side; more datasets take further rows
PANEL_SIZE = (4.6, 3.6)  # inches
DPI = 110  # two panels and a legend column: about 1,250 px wide
LEGEND_ROWS = 22  # as many as fit beside a panel; more series get another legend column
LEGEND_WIDTH = 2.2  # inches the figure widens by per legend column


def plot_cost_accuracy(
    frame: pl.DataFrame,
    out_dir: Path,
    metric: str = "hits1",
    cost: str = "total_tokens_per_q",
    by: Sequence[str] = ("method",),
) -> Path:
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
    style = _styles(list({_name(p, by, series) for p in means.iter_rows(named=True)}))
    for ax, (panel,) in zip(axes, labels(frame, [PANEL])):
        for point in means.filter(pl.col(param_column(PANEL)) == panel).iter_rows(named=True):
            name = _name(point, by, series)
            at = (point[f"{cost}:mean"], point[f"{metric}:mean"])
            ax.errorbar(
                *at,
                xerr=point[f"{cost}:std"],
                yerr=point[f"{metric}:std"],
                capsize=3,
                linestyle="none",
                **style[name],
            )
            _point_label(ax, name, at)
        _axes(ax, panel, cost, metric)
    return _save(fig, out_dir / f"{metric}_vs_{cost}.png")


def plot_param(
    frame: pl.DataFrame, out_dir: Path, param: str, metric: str = "hits1", by: Sequence[str] = ("method",)
) -> Path:
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
    style = _styles(list({_name(p, by, series) for p in means.iter_rows(named=True)}))
    for ax, (panel,) in zip(axes, labels(frame, [PANEL])):
        points = means.filter(pl.col(param_column(PANEL)) == panel).iter_rows(named=True)
        for name, line in _lines(sorted(points, key=lambda p: position[p[param_column(param)]]), by, series).items():
            xs = [position[p[param_column(param)]] for p in line]
            ys = [p[f"{metric}:mean"] for p in line]
            ax.errorbar(xs, ys, yerr=[p[f"{metric}:std"] or 0.0 for p in line], capsize=3, **style[name])
            _point_label(ax, name, (xs[-1], ys[-1]))  # a line is named at its last point
        _ticks(ax, position, values)
        _axes(ax, panel, full_key(param), metric)
    return _save(fig, out_dir / f"{metric}_vs_{full_key(param)}.png")


def _point_label(ax: Axes, name: str, at: tuple[float, float]) -> None:
    """The series' name beside its point, small, so that the figure reads without the legend."""
    ax.annotate(name, at, xytext=(5, 4), textcoords="offset points", fontsize=7, color="#333")


def _styles(names: list[str]) -> dict[str, dict]:
    """A colour and marker per series, the same in every panel, keyed once in the legend (where
    points close together overlap their names, the legend still tells them apart)."""
    markers = "osD^vP*X"
    return {
        name: {"color": f"C{i % 10}", "marker": markers[i // 10 % len(markers)], "label": name}
        for i, name in enumerate(sorted(names, key=natural_key))
    }


def _ticks(ax: Axes, position: dict, values: list) -> None:
    """Ticks at the swept values, as the papers draw them. Values spread over orders of
    magnitude (1, 2, 4, ..., 64) get a log axis, else the small ones would print on top of each
    other; long or many labels are turned so that neighbours do not touch."""
    places = sorted(position.values())
    if numeric(values) and places[0] > 0 and places[-1] / places[0] >= 16:
        ax.set_xscale("log")
        ax.minorticks_off()
    crowded = sum(len(str(v)) for v in values) > 24
    ax.set_xticks(
        list(position.values()),
        [str(v) for v in values],
        rotation=30 if crowded else 0,
        ha="right" if crowded else "center",
    )


def _lines(points: list[dict], by: Sequence[str], series: Sequence[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for point in points:
        out.setdefault(_name(point, by, series), []).append(point)
    return out


def _name(point: dict, by: Sequence[str], series: Sequence[str]) -> str:
    """``cot``, or ``sc, method.n=5`` when a key beyond ``by`` separates configurations (a
    method without that key, whose value is absent, is just its name)."""
    values = [str(point[param_column(k)]) for k in by]
    return ", ".join(
        values + [f"{k}={point[param_column(k)]}" for k in series[len(by) :] if point[param_column(k)] is not None]
    )


def _panels(frame: pl.DataFrame) -> tuple[Figure, list[Axes]]:
    """A panel per dataset, ``COLUMNS`` to a row; the grid's unused places are left blank."""
    count = len(labels(frame, [PANEL]))
    columns, rows = min(count, COLUMNS), math.ceil(count / COLUMNS)
    width, height = PANEL_SIZE
    fig = Figure(figsize=(width * columns + LEGEND_WIDTH, height * rows), layout="constrained")
    axes = list(fig.subplots(rows, columns, squeeze=False).flat)
    for spare in axes[count:]:
        fig.delaxes(spare)
    return fig, axes[:count]


def _axes(ax: Axes, title: str, x: str, y: str) -> None:
    ax.set_title(title)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)


def _save(fig: Figure, path: Path) -> Path:
    """The legend goes outside the panels, to their right, where it covers no point."""
    handles = {}
    for ax in fig.axes:
        handles.update(zip(*reversed(ax.get_legend_handles_labels())))
    if handles:
        names = sorted(handles, key=natural_key)
        columns = math.ceil(len(names) / LEGEND_ROWS)
        fig.set_figwidth(fig.get_figwidth() + LEGEND_WIDTH * (columns - 1))
        fig.legend([handles[n] for n in names], names, loc="outside right upper", fontsize=8, ncols=columns)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    return path
