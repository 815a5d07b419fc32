"""kgx's figure for each published cell: the runs that make it, their mean and 95% interval, and
how the published figure stands against them.

A cell's runs are the runs whose params equal the cell's (:attr:`Published.selector`) and whose
backbone is the cell's. Runs that differ only in the ``run.`` group (the seed) are replicates;
when runs of several configurations match (another ``dataset.sample``, say), the one with the
most runs is shown, the latest on a tie, and the others are counted in the cell's note.

The interval is over seeds, Student's t on the replicates, when there are two or more; a single
run of a proportion (hits@1 and the other per-question hit rates) gets Wilson's interval over
its questions instead, since that is the uncertainty a reader of the paper's table faces then;
a single run of a cost figure has none.

A backbone kgx ran that none of the table's cells names (``llm=scripted`` on a paper table)
stands in for every cell's backbone when it is the only one: the table is then laid out from
those runs, and says so.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Optional, Sequence

import polars as pl

from kgx.report.paper_published import Published
from kgx.report.runs import REPLICATE_GROUP, metric_column

PROPORTIONS = frozenset({"hits1", "hits1_tog", "hit_any", "em", "partial_match", "complete_match"})
Z95 = 1.959964
# Student's t, two-sided 95%, by degrees of freedom; above 30 the normal quantile is within 4%.
T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131)
T95 += (2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
STAGE_PREFIX = "params.llm_stages."


@dataclass(frozen=True)
class Comparison:
    """One cell: the published figure, and kgx's when a run made it."""

    published: Published
    mean: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    runs: int = 0
    questions: Optional[int] = None
    note: str = ""  # what a reader should know about kgx's figure (other configurations, missing inputs)
    comparable: bool = True  # False: kgx's questions only stand in for the paper's

    @property
    def state(self) -> str:
        """``run``, ``not run``, or ``not in kgx`` (a method kgx does not have); a derived cell
        (kgx.report.paper_derived) is ``derived`` or, when an input is missing, ``not derived``."""
        if self.published.derived:
            return "derived" if self.mean is not None else "not derived"
        if not self.published.selector:
            return "not in kgx"
        return "run" if self.mean is not None else "not run"

    @property
    def difference(self) -> Optional[float]:
        if self.mean is None or self.published.value is None:
            return None
        return self.mean - self.published.value

    @property
    def inside(self) -> Optional[bool]:
        """Whether the published figure lies in kgx's interval; None when either is missing or the
        questions are not the paper's."""
        if self.low is None or self.high is None or self.published.value is None or not self.comparable:
            return None
        return self.low <= self.published.value <= self.high


def t95(df: int) -> float:
    return T95[df - 1] if df <= len(T95) else Z95


def seed_interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95% t-interval of the mean of replicate runs."""
    half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    mean = statistics.fmean(values)
    return mean - half, mean + half


def wilson(percent: float, n: int) -> tuple[float, float]:
    """Wilson's 95% interval of a rate over ``n`` questions, in percent."""
    p = percent / 100
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)


def backbone_key(text: str) -> str:
    """A backbone as one comparable string: the LLM, then the stages that have another one, sorted."""
    words = text.split()
    if not words:
        return ""
    llm, stages = words[0], dict(w.split("=", 1) for w in words[1:])
    return " ".join([llm, *sorted(f"{s}={b}" for s, b in stages.items() if b != llm)])


def run_backbones(frame: pl.DataFrame) -> pl.Series:
    """Each run's backbone in :func:`backbone_key`'s form, from ``llm.name`` and ``llm_stages.<stage>.name``."""
    stages = [c for c in frame.columns if c.startswith(STAGE_PREFIX) and c.endswith(".name")]
    keys = []
    for row in frame.select(["params.llm.name", *stages]).iter_rows(named=True):
        parts = [row["params.llm.name"] or ""]
        parts += [f"{c[len(STAGE_PREFIX) : -len('.name')]}={row[c]}" for c in stages if row[c]]
        keys.append(backbone_key(" ".join(parts)))
    return pl.Series("backbone", keys, dtype=pl.String)


def stand_in(frame: pl.DataFrame, cells: Sequence[Published], chosen: Optional[str] = None) -> Optional[str]:
    """The backbone that stands in for every cell's: ``chosen``, else the runs' one backbone when
    none of them is a backbone of the table; None: each cell is matched on its own backbone."""
    if chosen:
        return backbone_key(chosen)
    ran = set(frame["backbone"].to_list()) if frame.height else set()
    named = {backbone_key(c.backbone) for c in cells if c.backbone}
    if len(ran) == 1 and not ran & named:
        return next(iter(ran))
    return None


def matches(frame: pl.DataFrame, selector: dict[str, str], backbone: str) -> pl.DataFrame:
    """The runs with every param of ``selector`` (numbers compared as numbers, text without case)."""
    mask = pl.col("backbone") == backbone
    for key, wanted in selector.items():
        column = f"params.{key}"
        if column not in frame.columns:
            return frame.clear()
        mask &= pl.col(column).map_elements(lambda v, w=wanted: same(v, w), return_dtype=pl.Boolean).fill_null(False)
    return frame.filter(mask)


def same(value: Optional[str], wanted: str) -> bool:
    if value is None:
        return False
    try:
        return float(value) == float(wanted)
    except ValueError:
        return value.lower() == wanted.lower()


def compare(
    cells: Sequence[Published], frame: Optional[pl.DataFrame], backbone: Optional[str] = None, comparable: bool = True
) -> tuple[list[Comparison], Optional[str]]:
    """kgx's figure beside every published cell, from ``frame`` (runs as kgx.report.runs loads them,
    or released outputs as kgx.report.paper_released scores them; None: nothing has run), and the
    backbone that stood in for the cells' own (:func:`stand_in`), if one did."""
    if frame is None or frame.height == 0:
        return [Comparison(c, comparable=comparable) for c in cells], None
    frame = frame.with_columns(run_backbones(frame))
    standing = stand_in(frame, cells, backbone)
    out = []
    for cell in cells:
        if not cell.selector:
            out.append(Comparison(cell, comparable=comparable))
            continue
        found = matches(frame, cell.selector, standing or backbone_key(cell.backbone))
        out.append(figure(cell, found, comparable))
    return out, standing


def figure(cell: Published, runs: pl.DataFrame, comparable: bool) -> Comparison:
    """The cell from the runs that match it: the configuration with the most runs of the metric."""
    column = metric_column(cell.metric)
    if column not in runs.columns:
        return Comparison(cell, comparable=comparable)
    runs = runs.filter(pl.col(column).is_not_null())
    if runs.height == 0:
        return Comparison(cell, comparable=comparable)
    keys = [c for c in runs.columns if c.startswith("params.") and not c.startswith(f"params.{REPLICATE_GROUP}")]
    runs = runs.with_columns(pl.concat_str([pl.col(k).fill_null("\0") for k in keys], separator="\x1f").alias("config"))
    groups = runs.group_by("config").agg(pl.len().alias("n"), pl.col("start_time").max().alias("latest"))
    best = groups.sort(["n", "latest"], descending=True)["config"][0]
    chosen = runs.filter(pl.col("config") == best)
    values = chosen[column].to_list()
    notes = [n for n in chosen["tags.note"].to_list() if n] if "tags.note" in chosen.columns else []
    if groups.height > 1:
        notes.append(
            f"{groups.height - 1} other configuration(s) of these params ran too; shown: the one with most runs"
        )
    questions = chosen[metric_column("n_questions")].min() if metric_column("n_questions") in chosen.columns else None
    low = high = None
    if len(values) > 1:
        low, high = seed_interval(values)
    elif cell.metric in PROPORTIONS and questions:
        low, high = wilson(values[0], int(questions))
    return Comparison(
        cell,
        mean=statistics.fmean(values),
        low=low,
        high=high,
        runs=len(values),
        questions=int(questions) if questions else None,
        note="; ".join(dict.fromkeys(notes)),
        comparable=comparable,
    )
