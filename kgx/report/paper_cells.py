"""kgx's figure for each published cell: the runs that make it, their mean and 95% interval, and
how the published figure stands against them.

A cell's runs are the runs whose params equal the cell's (:attr:`Published.selector`), whose
backbone is the cell's and whose KG serves their dataset (kgx.report.paper_kg: RoG's subgraph
files stand for their test sets; ``--kg NAME`` asks for another KG). Runs that differ only in the
``run.`` group (the seed) and in execution settings are replicates; runs of several
configurations (another KG, another ``dataset.sample``) fill no cell: its note says what differs.
A cell no run made is ``failed`` when a sweep's job for it failed (with the reason), ``not run``
otherwise, or ``no released output`` for ``--released``; the oracle on a method without a KG is
``n/a``. A cell split by a question field (``question.<field>=<value>`` in its column, LMP
Figure 4 and Table 12) is the metric over those questions of its runs (kgx.report.questions).

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

from kgx.report.paper_kg import (
    DATASET_COLUMN,
    candidates,
    differences,
    is_oracle,
    is_setting,
    mixed_line,
    reads_no_kg,
    run_notes,
    with_paper_columns,
)
from kgx.report.paper_published import PER_QUESTION, Published
from kgx.report.questions import QuestionFields, subset_score
from kgx.report.runs import metric_column
from kgx.report.sweeps import FailedJob

PROPORTIONS = frozenset({"hits1", "hits1_tog", "hit_any", "em", "partial_match", "complete_match"})
Z95 = 1.959964
# Student's t, two-sided 95%, by degrees of freedom; above 30 the normal quantile is within 4%.
T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131)
T95 += (2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
STAGE_PREFIX = "params.llm_stages."
QUESTION_PREFIX = "question."  # a selector key that splits a cell by a question field


@dataclass(frozen=True)
class Comparison:
    """One cell: the published figure, and kgx's when a run made it."""

    published: Published
    mean: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    runs: int = 0
    questions: Optional[int] = None
    note: str = ""  # what a reader should know about kgx's figure (its KG, the runs left out, a failure)
    comparable: bool = True  # False: kgx's questions only stand in for the paper's
    outcome: str = ""  # why no run fills a cell kgx can make: failed, mixed, n/a, no released output
    on: str = ""  # in a few words, what the runs stand on where it is not the paper's (RoG subgraphs, oracle)

    @property
    def state(self) -> str:
        """``run``, ``not run``, ``failed``, ``mixed``, ``n/a``, ``no released output``, or ``not
        in kgx`` (a method kgx does not have); a derived cell (kgx.report.paper_derived) is
        ``derived`` or, when an input is missing, ``not derived``."""
        if self.published.derived:
            return "derived" if self.mean is not None else "not derived"
        if not self.published.selector:
            return "not in kgx"
        if self.mean is not None:
            return "run"
        return self.outcome or "not run"

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


@dataclass(frozen=True)
class Inputs:
    """What a table's cells are made from: ``frame``, runs as kgx.report.runs loads them or
    released outputs as kgx.report.paper_released scores them (None: nothing ran); the backbone
    and the KG the reader asked for; the runs' per-question fields (cells split by a question
    field); the sweeps' failed jobs; whether the figures are the authors' released outputs."""

    frame: Optional[pl.DataFrame]
    backbone: Optional[str] = None
    kg: Optional[str] = None
    comparable: bool = True
    fields: Optional[QuestionFields] = None
    failed: Sequence[FailedJob] = ()
    released: bool = False


def matches(frame: pl.DataFrame, selector: dict[str, str], backbone: str) -> pl.DataFrame:
    """The runs with every run param of ``selector`` (numbers compared as numbers, text without
    case; the dataset as the paper's a run stands for, kgx.report.paper_kg)."""
    mask = pl.col("backbone") == backbone
    for key, wanted in selector.items():
        if key.startswith(QUESTION_PREFIX):
            continue
        column = DATASET_COLUMN if key == "dataset.name" else f"params.{key}"
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


def with_per_question(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the per-question figures kgx.report.paper_published.PER_QUESTION derives
    from a run's totals (parse failures per question, LMP Table 6's retries)."""
    out = frame
    for name, (total, count) in PER_QUESTION.items():
        if metric_column(total) in frame.columns and metric_column(count) in frame.columns:
            out = out.with_columns(
                (pl.col(metric_column(total)) / pl.col(metric_column(count))).alias(metric_column(name))
            )
    return out


def prepared(frame: pl.DataFrame) -> pl.DataFrame:
    return with_per_question(with_paper_columns(frame.with_columns(run_backbones(frame))))


def compare(cells: Sequence[Published], inputs: Inputs) -> tuple[list[Comparison], Optional[str]]:
    """kgx's figure beside every published cell, and the backbone that stood in for the cells'
    own (:func:`stand_in`), if one did."""
    frame = prepared(inputs.frame) if inputs.frame is not None and inputs.frame.height else None
    failed = failed_frame(inputs.failed)
    both = [f.select("backbone") for f in (frame, failed) if f is not None]
    standing = stand_in(pl.concat(both), cells, inputs.backbone) if both else None
    out = []
    for cell in cells:
        if not cell.selector:
            out.append(Comparison(cell, comparable=inputs.comparable))
            continue
        wanted = standing or backbone_key(cell.backbone)
        made = figure(cell, matches(frame, cell.selector, wanted), inputs) if frame is not None else None
        if made is None or made.state == "not run":
            made = unmade(cell, failed, wanted, inputs, made)
        out.append(made)
    return out, standing


def unmade(
    cell: Published, failed: Optional[pl.DataFrame], backbone: str, inputs: Inputs, made: Optional[Comparison]
) -> Comparison:
    """A cell no run made: ``failed`` with the reason when a sweep's job for it failed (the
    latest), ``no released output`` from released outputs, else ``not run``."""
    note = made.note if made else ""
    if failed is not None:
        jobs = candidates(matches(failed, cell.selector, backbone), cell.selector["method.name"], inputs.kg).runs
        if jobs.height:
            job = jobs.sort("start_time", descending=True).row(0, named=True)
            why = f"failed: {job['reason']} (job {job['job']} of sweep {job['sweep']})"
            return Comparison(cell, note=why, comparable=inputs.comparable, outcome="failed")
    outcome = "no released output" if inputs.released else ""
    return Comparison(cell, note=note, comparable=inputs.comparable, outcome=outcome)


def failed_frame(jobs: Sequence[FailedJob]) -> Optional[pl.DataFrame]:
    """The failed jobs whose params are known, as runs: matched to cells as runs are."""
    rows = [
        {f"params.{k}": v for k, v in job.params.items()}
        | {"start_time": job.started, "reason": job.reason, "job": job.name, "sweep": job.sweep.name}
        for job in jobs
        if job.params
    ]
    return prepared(pl.from_dicts(rows, infer_schema_length=None)) if rows else None


def figure(cell: Published, runs: pl.DataFrame, inputs: Inputs) -> Comparison:
    """The cell from the runs that match it: on a KG that serves the dataset (or the one asked
    for), one configuration, its replicates' mean and interval."""
    method = cell.selector["method.name"]
    column = metric_column(cell.metric)
    if column not in runs.columns:
        return Comparison(cell, comparable=inputs.comparable)
    found = candidates(runs.filter(pl.col(column).is_not_null()), method, inputs.kg)
    chosen = found.runs
    if chosen.height == 0:
        return Comparison(cell, note=found.left_out, comparable=inputs.comparable)
    first = chosen.row(0, named=True)
    if reads_no_kg(method) and is_oracle(first):
        why = f"the oracle answers from a KG's gold paths, and {method} reads no KG: no figure"
        return Comparison(cell, note=why, comparable=inputs.comparable, outcome="n/a")
    keys = [c for c in chosen.columns if c.startswith("params.") and is_setting(c[len("params.") :], method)]
    configs = chosen.select(pl.concat_str([pl.col(k).fill_null("\0") for k in keys], separator="\x1f")).n_unique()
    if configs > 1:
        line = mixed_line(differences(chosen, method), configs)
        return Comparison(cell, note=line, comparable=inputs.comparable, outcome="mixed")
    values, questions, split_note = measured(cell, chosen, column, inputs.fields)
    if not values:
        return Comparison(cell, note=split_note, comparable=inputs.comparable)
    notes = [n for n in chosen["tags.note"].to_list() if n] if "tags.note" in chosen.columns else []
    stands, on = run_notes(first, questions, method, inputs.kg)
    notes += stands + [n for n in (found.left_out, split_note) if n]
    low = high = None
    if len(values) > 1:
        low, high = seed_interval(values)
    elif cell.metric in PROPORTIONS and questions:
        low, high = wilson(values[0], questions)
    return Comparison(
        cell,
        mean=statistics.fmean(values),
        low=low,
        high=high,
        runs=len(values),
        questions=questions,
        note="; ".join(dict.fromkeys(notes)),
        comparable=inputs.comparable,
        on=on,
    )


def measured(
    cell: Published, runs: pl.DataFrame, column: str, fields: Optional[QuestionFields]
) -> tuple[list[float], Optional[int], str]:
    """The figure of each replicate run, the questions it is over, and a note: the run's metric,
    or for a cell split by a question field the metric over those of its questions."""
    split = {k[len(QUESTION_PREFIX) :]: v for k, v in cell.selector.items() if k.startswith(QUESTION_PREFIX)}
    if not split:
        counts = runs[metric_column("n_questions")] if metric_column("n_questions") in runs.columns else None
        questions = int(counts.min()) if counts is not None and counts.min() else None
        return runs[column].to_list(), questions, ""
    ((name, wanted),) = split.items()
    if fields is None:
        return [], None, f"split by question {name}: needs the runs' per-question records, which these have not"
    values, sizes = [], []
    rows = runs.to_dicts()
    for row in rows:
        peers = fields_peers(fields, row)
        score, n = subset_score(fields.of_run(row["run_id"]), fields.values(row, name, peers), cell.metric, wanted)
        if score is not None:
            values.append(score)
            sizes.append(n)
    if not values:
        return [], None, f"no question of these runs has {name} = {wanted}"
    return values, min(sizes), ""


def fields_peers(fields: QuestionFields, row: dict) -> list[dict]:
    """Other runs on the same questions, whose measured distances a run without a KG borrows."""
    return [
        p for p in fields.peers if p["run_id"] != row["run_id"] and p.get(DATASET_COLUMN) == row.get(DATASET_COLUMN)
    ]
