"""``python -m kgx.report paper``: a paper's table from kgx's runs, or from the authors' released outputs.

The runs are the FINISHED runs of one sweep (``--parent``: its run id, or its name, the latest of
that name with finished runs, kgx.report.sweeps) or of the experiment; the failed jobs are those
of that sweep, or of every sweep of the table (tag ``paper``). Without ``--parent``, no runs is no
error: the table shows every cell ``not run``, which is what a reader about to run it wants. A
``+paper=`` sweep's own page (kgx.report.sweep_summary) opens with the table and its notes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import polars as pl

from kgx.report.paper_cells import Comparison, Inputs, prepared
from kgx.report.paper_derived import compare_all
from kgx.report.paper_layout import STYLES, notes, render_paper, text_table
from kgx.report.paper_published import TABLES, paper_table
from kgx.report.paper_released import Scored, as_runs, described, fills, relevant, score_all
from kgx.report.questions import QuestionFields
from kgx.report.render import NotedTable
from kgx.report.runs import ReportError, client, load_runs
from kgx.report.sweeps import FailedJob, Sweep, as_sweep, choose, failed_jobs, sweep_runs

PAPER_TAG = "paper"  # kgx.run.sweep tags a +paper= sweep's parent run with the table's name


@dataclass
class Source:
    """The runs a table is made from, how to name them, the failed jobs, the per-question fields."""

    frame: Optional[pl.DataFrame]
    text: str
    failed: list[FailedJob] = field(default_factory=list)
    fields: Optional[QuestionFields] = None


def kgx_runs(name: str, experiment: str, uri: Optional[str], parent: Optional[str]) -> Source:
    """The runs and failed jobs of sweep ``parent`` (a ReportError when there is no such sweep),
    else of the experiment and every sweep of table ``name``."""
    try:
        mlflow = client(uri)
    except ReportError as exc:
        if parent:
            raise
        return Source(None, f"no runs to show ({exc})")
    if parent:
        choice = choose(mlflow, experiment, parent)
        sweeps, where, said = [choice.sweep], f"sweep {choice.sweep.name}", choice.note
    else:
        found = mlflow.get_experiment_by_name(experiment)
        runs = sweep_runs(mlflow, found.experiment_id, f"tags.`{PAPER_TAG}` = '{name}'") if found else []
        sweeps, where, said = [as_sweep(mlflow, r) for r in runs], f"experiment '{experiment}'", ""
    try:
        frame = load_runs(experiment, uri, sweeps[0].run_id if parent else None)
        text = f"the FINISHED runs of {where} ({frame.height})"
    except ReportError as exc:
        frame, text = None, f"no runs to show ({exc})"
    fields = QuestionFields(mlflow, peers=prepared(frame).to_dicts() if frame is not None else [])
    return Source(frame, text + (f"; {said}" if said else ""), failed_jobs(mlflow, sweeps), fields)


def paper_report(
    name: str,
    fmt: str = "text",
    experiment: str = "kgx",
    uri: Optional[str] = None,
    parent: Optional[str] = None,
    released: bool = False,
    backbone: Optional[str] = None,
    kg: Optional[str] = None,
) -> str:
    """Table ``name`` in its paper's layout, kgx's cells from runs (or from the released outputs)."""
    table, cells = paper_table(name)
    scored = score_all(relevant(cells)) if released else []
    source = Source(as_runs(scored), described(scored)) if released else kgx_runs(name, experiment, uri, parent)
    inputs = Inputs(source.frame, backbone, kg, not table.stand_in, source.fields, source.failed, released=released)
    comparisons, standing = compare_all(cells, inputs)
    comparisons = [unscored(c, scored) for c in comparisons]
    text = source.text + standing_note(source.frame, comparisons, standing, name)
    return render_paper(table, comparisons, text, fmt, source.failed)


def unscored(c: Comparison, scored: Sequence[Scored]) -> Comparison:
    """A cell whose released file exists but could not be scored says why (its format, its data)."""
    if c.state != "no released output":
        return c
    why = [
        f"released output {s.released.path} not scored: {s.note}"
        for s in scored
        if not s.metrics and fills(s.released, c.published)
    ]
    return dataclasses.replace(c, note="; ".join([c.note, *why]).strip("; ")) if why else c


def standing_note(
    frame: Optional[pl.DataFrame], comparisons: Sequence[Comparison], standing: Optional[str], name: str
) -> str:
    """A sentence when a backbone the paper did not use stood in for its, or when the runs make no cell."""
    named = ", ".join(dict.fromkeys(c.published.backbone for c in comparisons if c.published.backbone))
    text = f"; backbone {standing} stands in for the paper's ({named})" if standing else ""
    if frame is not None and frame.height and not any(c.state == "run" for c in comparisons):
        text += (
            f"; none of them makes a cell of this table (python -m kgx -m +paper={name} runs its cells; "
            "--backbone NAME lays out runs of one backbone in every cell's place; --kg NAME runs on another KG)"
        )
    return text


def paper_section(mlflow: Any, sweep_id: str, frame: pl.DataFrame, name: str) -> tuple[str, object]:
    """The sweep page's section for a ``+paper=`` sweep: the table from the sweep's runs, with
    every note the text report has (the failed jobs and how to rerun them among them)."""
    if name not in TABLES:
        return f"Paper table {name}", f"no paper table '{name}'"
    table = TABLES[name]
    sweep: Sweep = as_sweep(mlflow, mlflow.get_run(sweep_id))
    failed = failed_jobs(mlflow, [sweep])
    comparisons, standing = sweep_cells(mlflow, frame, name, failed)
    source = f"the FINISHED runs of sweep {sweep.name} ({frame.height})" + standing_note(
        frame, comparisons, standing, name
    )
    text = text_table(table, comparisons, STYLES["html"])
    return f"Paper table: {name}", NotedTable(text, notes(table, comparisons, source, failed))


def sweep_cells(
    mlflow: Any, frame: pl.DataFrame, name: str, failed: Sequence[FailedJob] = ()
) -> tuple[list[Comparison], Optional[str]]:
    """Every cell of paper table ``name`` from a sweep's runs (``frame``), and the backbone that
    stood in for the paper's, if one did: for the sweep's page and its figure against the paper."""
    table, cells = paper_table(name)
    fields = QuestionFields(mlflow, peers=prepared(frame).to_dicts())
    inputs = Inputs(frame, comparable=not table.stand_in, fields=fields, failed=failed)
    return compare_all(cells, inputs)
