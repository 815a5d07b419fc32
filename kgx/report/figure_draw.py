"""The drawing of a sweep's figures (kgx.report.figure_points computes what they show).

Readable at the size MLflow's artifact pane and a browser show them: 10 inches wide at 100 dpi
(1,000 px), panels wrapped two to a row rather than strung out in one strip, every point labelled
beside it. Each figure is a PNG and an HTML page: the same figure as inline SVG, whose points
name their figures on hover, and the figures in a table below it. Drawn on matplotlib's
``Figure`` directly, not pyplot: no display backend, no global state.
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from kgx.report.figure_points import Cell, Point, label_text
from kgx.report.runs import natural_key
from kgx.report.tables import Grid

WIDTH = 10.0  # inches
DPI = 100
PANEL_HEIGHT = 4.0
COLUMNS = 2  # panels per row
BAR_HEIGHT = 0.22  # inches per bar of the figure by question kind
CELL_HEIGHT = 0.32  # inches per cell of the figure against the paper


def cost_figure(points: Sequence[Point], stem: Path, metric: str, cost: str) -> list[Path]:
    """``metric`` against cost, a panel per dataset; the Pareto front joined and ringed."""
    fig, axes = panels([*dict.fromkeys(p.panel for p in points)])
    colour = colours(p.label for p in points)
    tips = {}
    for panel, ax in axes.items():
        mine = [p for p in points if p.panel == panel]
        front = sorted((p for p in mine if p.front), key=lambda p: p.x)
        ax.step([p.x for p in front], [p.y for p in front], where="post", color="0.6", linestyle="--", zorder=1)
        for p in mine:
            gid = f"p{len(tips)}"
            dot = ax.scatter(
                [p.x], [p.y], s=70 if p.front else 40, color=colour[p.label], zorder=3,
                edgecolors="black" if p.front else "none", linewidths=1.5,
            )  # fmt: skip
            dot.set_gid(gid)
            tips[gid] = f"{p.label}: {metric} {p.y:.1f}, {cost} {p.x:,.4g} ({p.runs} runs)" + (
                ", on the Pareto front" if p.front else ""
            )
            ax.annotate(p.label, (p.x, p.y), xytext=(5, 4), textcoords="offset points", fontsize=8)
        spread(ax, [p.x for p in mine], [p.y for p in mine])
        titled(ax, panel, cost, metric)
    fig.suptitle(f"{metric} against {cost}; dashed: the Pareto front (ringed points)")
    rows = [[p.panel, p.label, f"{p.y:.1f}", f"{p.x:,.4g}", str(p.runs), "yes" if p.front else ""] for p in points]
    return save(fig, stem, ["dataset", "configuration", metric, cost, "runs", "Pareto front"], rows, tips)


def kind_figure(grids: dict[str, Grid], stem: Path, metric: str) -> list[Path]:
    """``metric`` per kind of question, a bar per configuration, a panel per dataset."""
    sizes = [len(g.cols) * len(g.rows) for g in grids.values()]
    fig = Figure(figsize=(WIDTH, sum(1.2 + BAR_HEIGHT * n for n in sizes)), layout="constrained")
    axes = fig.subplots(len(grids), 1, squeeze=False, height_ratios=[1.2 + BAR_HEIGHT * n for n in sizes])[:, 0]
    names = [label_text(g.row_keys, row) for g in grids.values() for row in g.rows]
    colour = colours(names)
    rows = []
    for ax, (dataset, grid) in zip(axes, grids.items()):
        kinds = [c[0] for c in grid.cols]
        width = 0.8 / len(grid.rows)
        for i, row in enumerate(grid.rows):
            name = label_text(grid.row_keys, row)
            values = [grid.cell(row, c).mean for c in grid.cols]
            places = [k + 0.4 - width * (i + 0.5) for k in range(len(kinds))]
            bars = ax.barh(places, [v or 0.0 for v in values], height=width, color=colour[name], label=name)
            ax.bar_label(bars, [f"{v:.0f}" if v is not None else "-" for v in values], padding=2, fontsize=7)
            rows += [[dataset, kind, name, f"{v:.1f}" if v is not None else "-"] for kind, v in zip(kinds, values)]
        ax.set_yticks(range(len(kinds)), kinds, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 105)
        titled(ax, f"{dataset}: by {grid.col_keys[0]}", metric, "")
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{metric} by kind of question (mean over seeds)")
    return save(fig, stem, ["dataset", "kind", "configuration", metric], rows, {})


def paper_figure(cells: Sequence[Cell], stem: Path, table: str) -> list[Path]:
    """kgx's figure per cell with its 95% interval, the published figure beside it: a dot per
    cell, green when the published figure is inside the interval, orange when outside, blue when
    they are not compared (kgx's questions stand in for the paper's, or kgx has no interval)."""
    fig = Figure(figsize=(WIDTH, 1.4 + CELL_HEIGHT * len(cells)), layout="constrained")
    ax = fig.subplots()
    tips = {}
    for y, cell in enumerate(cells):
        shade = {True: "tab:green", False: "tab:orange"}.get(cell.inside, "tab:blue")
        low, high = cell.low if cell.low is not None else cell.mean, cell.high if cell.high is not None else cell.mean
        dot, *_ = ax.errorbar(
            [cell.mean], [y], xerr=[[cell.mean - low], [high - cell.mean]], fmt="o", color=shade, capsize=3
        )
        dot.set_gid(f"c{y}")
        tips[f"c{y}"] = f"{cell.label}: kgx {cell.mean:.1f} [{low:.1f}, {high:.1f}], published {cell.published:.1f}"
        ax.scatter([cell.published], [y], marker="x", s=60, color="black", zorder=3)
    ax.scatter([], [], marker="x", color="black", label="published")
    ax.errorbar([], [], xerr=[], fmt="o", color="tab:green", label="kgx, 95% interval: published inside")
    ax.errorbar([], [], xerr=[], fmt="o", color="tab:orange", label="kgx: published outside")
    if any(c.inside is None for c in cells):
        ax.errorbar([], [], xerr=[], fmt="o", color="tab:blue", label="kgx: other questions, or no interval")
    ax.set_yticks(range(len(cells)), [c.label for c in cells], fontsize=8)
    ax.invert_yaxis()
    titled(ax, f"{table}: kgx against the published figures", "figure (%)", "")
    ax.legend(fontsize=8, loc="best")
    rows = [
        [c.label, f"{c.mean:.1f}", "-" if c.low is None else f"{c.low:.1f} to {c.high:.1f}", f"{c.published:.1f}"]
        for c in cells
    ]
    return save(fig, stem, ["cell", "kgx", "95% interval", "published"], rows, tips)


def param_figure(points: Sequence[Point], stem: Path, metric: str, param: str) -> list[Path]:
    """``metric`` against a swept number, a line per configuration, a panel per dataset."""
    fig, axes = panels([*dict.fromkeys(p.panel for p in points)])
    colour = colours(p.label for p in points)
    for panel, ax in axes.items():
        mine = [p for p in points if p.panel == panel]
        for name in dict.fromkeys(p.label for p in mine):
            line = [p for p in mine if p.label == name]
            ax.plot([p.x for p in line], [p.y for p in line], marker="o", color=colour[name], label=name)
            ax.annotate(name, (line[-1].x, line[-1].y), xytext=(5, 0), textcoords="offset points", fontsize=8)
        spread(ax, [p.x for p in mine], [p.y for p in mine])
        ax.set_xticks(sorted({p.x for p in mine}), [f"{x:g}" for x in sorted({p.x for p in mine})])
        titled(ax, panel, param, metric)
    fig.suptitle(f"{metric} against {param}")
    rows = [[p.panel, p.label, f"{p.x:g}", f"{p.y:.1f}", str(p.runs)] for p in points]
    return save(fig, stem, ["dataset", "configuration", param, metric, "runs"], rows, {})


def panels(names: list[str]) -> tuple[Figure, dict[str, Axes]]:
    """A panel per name, ``COLUMNS`` to a row, the figure ``WIDTH`` wide whatever their number."""
    columns = min(COLUMNS, len(names))
    lines = math.ceil(len(names) / columns)
    fig = Figure(figsize=(WIDTH, 1.0 + PANEL_HEIGHT * lines), layout="constrained")
    axes = fig.subplots(lines, columns, squeeze=False).ravel()
    for spare in axes[len(names) :]:
        spare.set_visible(False)
    return fig, dict(zip(names, axes))


def colours(names: Sequence[str]) -> dict[str, str]:
    """A colour per name, the same in every panel."""
    return {name: f"C{i % 10}" for i, name in enumerate(sorted(set(names), key=natural_key))}


def spread(ax: Axes, xs: Sequence[float], ys: Sequence[float]) -> None:
    """A log axis for values over orders of magnitude (tokens of IO and of ToG), else linear;
    room on the right for the labels of the rightmost points; accuracy from 0."""
    positive = [x for x in xs if x > 0]
    if positive and len(positive) == len(xs) and max(positive) / min(positive) >= 16:
        ax.set_xscale("log")
    ax.margins(x=0.15)
    ax.set_ylim(0, max(10.0, 1.15 * max(ys)))


def titled(ax: Axes, title: str, x: str, y: str) -> None:
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)


def save(fig: Figure, stem: Path, headers: list[str], rows: list[list[str]], tips: dict[str, str]) -> list[Path]:
    """``<stem>.png`` and ``<stem>.html``: the SVG inline, each ``tips`` element titled (the
    browser shows it on hover), the figures in a table under it."""
    png, page = stem.with_suffix(".png"), stem.with_suffix(".html")
    fig.savefig(png, dpi=DPI)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    for gid, tip in tips.items():
        svg = svg.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{html.escape(tip)}</title>', 1)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>" for row in rows)
    title = html.escape(fig.get_suptitle() or stem.name)
    page.write_text(
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title><style>'
        "body{font:14px sans-serif;margin:16px}svg{max-width:100%;height:auto}"
        "table{border-collapse:collapse;margin-top:12px}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
        f"</style></head><body>{svg}<table><tr>{head}</tr>{body}</table></body></html>\n"
    )
    return [png, page]
