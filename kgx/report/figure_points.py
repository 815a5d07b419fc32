"""What a sweep's figures show (kgx.report.sweep_figures draws them with kgx.report.figure_draw),
computed apart from their drawing so that it can be checked value by value.

A point is a configuration: the mean over its replicate runs (seeds) on one dataset, labelled by
method and backbone, and by whatever else separates it from its neighbours (``depth=3``).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from typing import Optional, Sequence

import polars as pl

from kgx.datasets.kinds import kind_key
from kgx.report.paper_cells import Comparison
from kgx.report.questions import QuestionFields, breakdown_table
from kgx.report.runs import (
    ReportError,
    numeric,
    param_column,
    separating_keys,
)
from kgx.report.tables import Grid, aggregate, labels

FIGURE_DIR = "figures"  # the parent run's artifact folder
PANEL = "dataset"
SERIES = ("method", "llm")  # what a point is labelled by: the method and its backbone
COSTS = {"llm_calls_per_q": "LLM calls per question", "total_tokens_per_q": "tokens per question", "cost_usd": "USD"}


@dataclass(frozen=True)
class Point:
    """One configuration on one dataset: ``y`` (accuracy) against ``x`` (a cost or a swept value),
    means over its ``runs``; ``front``: on the Pareto front of its panel."""

    panel: str
    label: str
    x: float
    y: float
    runs: int = 1
    front: bool = False


@dataclass(frozen=True)
class Cell:
    """A paper's cell: kgx's mean and 95% interval (None: none), and the published figure."""

    label: str
    mean: float
    low: Optional[float]
    high: Optional[float]
    published: float
    inside: Optional[bool]


def short_name(key: str) -> str:
    """``method.depth`` as ``depth``, ``kg.name`` as ``kg``: a point's label is read at a glance."""
    group, _, leaf = key.rpartition(".")
    return group.rpartition(".")[2] if leaf == "name" and group else leaf


def series_keys(frame: pl.DataFrame) -> list[str]:
    """Method, backbone, and the keys that still separate configurations within a dataset."""
    return [*SERIES, *separating_keys(frame, [*SERIES, PANEL])]


def label_text(keys: Sequence[str], values: Sequence[Optional[str]]) -> str:
    """``tog, gpt4o-mini`` or ``tog, gpt4o-mini, depth=3`` for the values of ``keys`` (method and
    backbone first): a key a configuration lacks (None) is left out."""
    named = [str(v) for v in values[: len(SERIES)]]
    extra = [f"{short_name(k)}={v}" for k, v in zip(keys[len(SERIES) :], values[len(SERIES) :]) if v is not None]
    return ", ".join(named + extra)


def point_label(row: dict, keys: Sequence[str]) -> str:
    return label_text(keys, [row[param_column(k)] for k in keys])


def with_front(points: Sequence[Point]) -> list[Point]:
    """The points in their order, those on their panel's Pareto front marked: no other point of
    the panel is at most as costly and more accurate (of equal points, one is on the front)."""
    front: set[int] = set()
    for panel in dict.fromkeys(p.panel for p in points):
        best = -math.inf
        for i, p in sorted(
            ((i, p) for i, p in enumerate(points) if p.panel == panel), key=lambda ip: (ip[1].x, -ip[1].y)
        ):
            if p.y > best:
                front.add(i)
            best = max(best, p.y)
    return [dataclasses.replace(p, front=i in front) for i, p in enumerate(points)]


def cost_points(frame: pl.DataFrame, metric: str, cost: str) -> list[Point]:
    """``metric`` against ``cost`` per configuration and dataset; none when no run has the cost
    or every run's is zero (a scripted or local backbone costs no dollar)."""
    keys = series_keys(frame)
    means = aggregate(frame, [*keys, PANEL], [metric, cost]).drop_nulls([f"{metric}:mean", f"{cost}:mean"])
    if means.is_empty() or not (means[f"{cost}:mean"] != 0).any():
        return []
    points = [
        Point(
            row[param_column(PANEL)],
            point_label(row, keys),
            row[f"{cost}:mean"],
            row[f"{metric}:mean"],
            row[f"{metric}:n"],
        )
        for row in means.iter_rows(named=True)
    ]
    return with_front(sorted(points, key=lambda p: (p.panel, p.label)))


def param_points(frame: pl.DataFrame, param: str, metric: str) -> list[Point]:
    """``metric`` against the swept number ``param`` per configuration and dataset, ordered by
    it: a line per label. Runs without the param (a method that lacks the knob) are left out."""
    frame = frame.filter(pl.col(param_column(param)).is_not_null())
    keys = [k for k in series_keys(frame) if k != param]
    means = aggregate(frame, [*keys, param, PANEL], [metric]).drop_nulls(f"{metric}:mean")
    points = [
        Point(
            row[param_column(PANEL)],
            point_label(row, keys),
            float(row[param_column(param)]),
            row[f"{metric}:mean"],
            row[f"{metric}:n"],
        )
        for row in means.iter_rows(named=True)
    ]
    return sorted(points, key=lambda p: (p.panel, p.label, p.x))


def swept_numbers(frame: pl.DataFrame) -> list[str]:
    """The config keys the runs differ in whose values are all numbers (``kg.drop``,
    ``method.depth``, ``llm.temperature``); the seed is a replicate, not a parameter."""
    keys = separating_keys(frame, [*SERIES, PANEL])
    return [k for k in keys if numeric(frame[param_column(k)].drop_nulls().unique().to_list())]


def kind_grids(frame: pl.DataFrame, fields: QuestionFields, metric: str) -> dict[str, Grid]:
    """Per dataset, ``metric`` by configuration x the kind of question, split by the key the
    estimate's strata use (kgx.estimate.strata.kind_key: MetaQA's ``qtype``, CWQ's
    ``compositionality_type``, GrailQA's ``level``, else ``hops``); a dataset whose questions are
    of one kind has none. A dataset whose file this machine lacks is said on stderr and left out."""
    grids = {}
    for (dataset,) in labels(frame, [PANEL]):
        runs = frame.filter(pl.col(param_column(PANEL)) == dataset)
        first = runs.row(0, named=True)
        try:
            meta = fields.dataset_meta(first)
            key = kind_key([meta.get(r.id, {}) for r in fields.of_run(first["run_id"])])
            if key:
                grids[dataset] = breakdown_table(runs, fields, series_keys(runs), key, metric)
        except ReportError as exc:
            print(f"kgx: no figure by question kind for {dataset}: {exc.wording(cli=True)}", file=sys.stderr)
    return grids


def paper_points(comparisons: Sequence[Comparison]) -> list[Cell]:
    """The cells kgx ran that the paper prints a figure for, in the table's order."""
    return [
        Cell(f"{c.published.row} · {c.published.column}", c.mean, c.low, c.high, c.published.value, c.inside)
        for c in comparisons
        if c.mean is not None and c.published.value is not None and not c.published.derived
    ]
