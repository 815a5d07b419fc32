"""A paper's table in its own layout, kgx's figures beside the published ones, in every format.

Rows and columns are the paper's, in its order, under its group headings. Each of the paper's
rows takes three lines: ``paper`` (the figure as printed, marked ``*`` where it is quoted from
another paper and ``†`` where it is another row's figure), ``kgx`` (mean, 95% interval, runs x
questions, and what the runs stand on where it is not the paper's; or the cell's state: ``not
run``, ``failed``, ``mixed``, ``n/a``, ``no released output``, ``not in kgx``; on a derived row,
LMP's gains, kgx's own, kgx.report.paper_derived) and ``Δ`` (kgx minus the paper, and whether the
paper's figure lies ``in`` or ``out`` of kgx's interval). The text is a kgx.report.render
TextTable, so it prints in every format the other reports do. The notes follow it in every
format, as text, Markdown paragraphs, HTML paragraphs, LaTeX text under the tabular, and in CSV a
``notes`` column per cell: the rules, the papers' caveats, each figure's provenance, what kgx's
figures stand on, why a cell is not filled, and the failed jobs with the command that reruns them.
"""

from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass
from typing import Callable, Sequence

from kgx.report.paper_cells import Comparison
from kgx.report.paper_derived import rule_notes
from kgx.report.paper_published import COST_METRICS, PER_QUESTION, RULES, PaperTable, Published
from kgx.report.render import (
    TextTable,
    decimals,
    escape,
    html_table,
    latex_text,
    markdown_text,
    term_text,
    wrapped,
)
from kgx.report.sweeps import FailedJob

TEXT_WIDTH = 120  # a text table wider prints in blocks of columns; its notes wrap at it
FORMATS = {"text": "text", "term": "text", "markdown": "md", "md": "md", "latex": "latex", "html": "html", "csv": "csv"}
LEGEND = (
    "paper: the figure as printed. kgx: mean [95% interval] runs×questions; the interval is over seeds "
    "(Student's t) with two runs or more, over the questions (Wilson) for one run of a rate. "
    "Δ: kgx minus paper; in/out: the paper's figure inside/outside kgx's interval."
)
QUOTED, FIGURE_OF = "*", "†"
MARKS = (
    f"{QUOTED}: quoted from another paper (named below): a Δ measures kgx against that paper's run. "
    f"{FIGURE_OF}: the figure printed is another row's (below: whose)."
)
STATES = {
    "failed": "a sweep's job for the cell failed (the reason below)",
    "mixed": "runs of several configurations match the cell, so none fills it (below: what differs)",
    "n/a": "no figure exists for the cell's runs (below: why)",
    "no released output": "no released output of the authors is this cell's configuration",
}


@dataclass(frozen=True)
class Style:
    """How a format writes a cell's text."""

    cell: Callable[[str], str]


STYLES = {"text": Style(str), "md": Style(str), "html": Style(str), "latex": Style(escape)}


def number(value: float, metric: str, like: float, sign: str = "") -> str:
    """One decimal for percentages, as the papers print them; a cost figure to the precision of
    ``like`` (kgx's mean: its interval and difference print as precisely as it does).
    ``sign="+"`` prints the sign of a positive difference too."""
    precise = metric in COST_METRICS or metric in PER_QUESTION
    return f"{value:{sign},.{decimals(like) if precise else 1}f}"


def paper_text(p: Published) -> str:
    """The figure as printed, with its provenance marks."""
    return p.text + (QUOTED if p.provenance == "quoted" else "") + (FIGURE_OF if p.figure_of else "")


def kgx_text(c: Comparison) -> str:
    if c.published.derived:  # as the paper prints its gains; "-" where an input is missing
        return f"{c.mean:+.1f}%" if c.mean is not None else "-"
    if c.state != "run":
        return c.state
    metric = c.published.metric
    mean = number(c.mean, metric, c.mean)
    interval = f" [{number(c.low, metric, c.mean)}, {number(c.high, metric, c.mean)}]" if c.low is not None else ""
    size = f"{c.runs}×{c.questions}q" if c.questions else f"n={c.runs}"
    return f"{mean}{interval} {size}" + (f" ({c.on})" if c.on else "")


VERDICTS = {True: "in", False: "out"}  # the paper's figure inside or outside kgx's interval


def delta_text(c: Comparison) -> str:
    if c.difference is None:
        return ""
    verdict = f" {VERDICTS[c.inside]}" if c.inside is not None else ""
    return number(c.difference, c.published.metric, c.mean, "+") + verdict


def text_table(table: PaperTable, comparisons: Sequence[Comparison], style: Style) -> TextTable:
    """The paper's layout: a heading line per group, three lines per row (paper, kgx, Δ)."""
    columns = list(dict.fromkeys(c.published.column for c in comparisons))
    rows: dict[tuple[str, str], dict[str, Comparison]] = {}
    for c in comparisons:
        rows.setdefault((c.published.group, c.published.row), {})[c.published.column] = c
    body: list[list[str]] = []
    marks: dict[tuple[int, int], str] = {}  # the kgx and Δ cells: the paper's figure in or out of kgx's interval
    group = None
    for (heading, label), cells in rows.items():
        if heading != group and heading:
            body.append([heading, "", *[""] * len(columns)])
        group = heading
        shown = [cells.get(column) for column in columns]
        body.append([f"  {label}" if heading else label, "paper", *cell_texts(shown, paper_text, style)])
        marks.update(
            {(len(body), i + 2): VERDICTS[c.inside] for i, c in enumerate(shown) if c and c.inside is not None}
        )
        body.append(["", "kgx", *cell_texts(shown, kgx_text, style)])
        if any(c and c.difference is not None for c in shown):
            marks.update({(len(body), col): mark for (row, col), mark in marks.items() if row == len(body) - 1})
            body.append(["", "Δ", *cell_texts(shown, delta_text, style)])
    title = f"{table.name}: {table.paper}, {table.source}: {table.title}"
    return TextTable(title, ["", "", *columns], body, 2, marks)  # labels and header: every format escapes its own


def cell_texts(shown: Sequence, text: Callable, style: Style) -> list[str]:
    return [style.cell(text(c.published if text is paper_text else c)) if c else "" for c in shown]


def cell_notes(c: Comparison) -> list[str]:
    """Every note of one cell: the paper's, its provenance, and kgx's."""
    p = c.published
    provenance = [f"quoted from {p.quoted_from}"] if p.provenance == "quoted" else []
    provenance += [f"the figure printed is another row's: {p.figure_of}"] if p.figure_of else []
    return [n for n in (p.note, *provenance, c.note) if n]


def notes(table: PaperTable, comparisons: Sequence[Comparison], source: str, failed: Sequence[FailedJob]) -> list[str]:
    """What the table's figures rest on: kgx's source, the legend, the rules, every cell note,
    and the failed jobs with the commands that rerun them."""
    lines = [f"kgx: {source}", LEGEND]
    if any(c.published.provenance == "quoted" or c.published.figure_of for c in comparisons):
        lines.append(MARKS)
    states = dict.fromkeys(c.state for c in comparisons if c.state in STATES)
    lines += [f"{state}: {STATES[state]}." for state in states]
    if table.stand_in:
        lines.append(f"Stand-in questions: {table.stand_in}.")
    rules = dict.fromkeys(c.published.rule for c in comparisons)
    lines.append("Rules: " + "; ".join(f"{r}: {RULES[r]}" for r in rules) + ".")
    lines.extend(rule_notes(comparisons))
    order = list(dict.fromkeys(c.published.column for c in comparisons))
    groups: dict[str, set[str]] = {}
    for c in comparisons:
        groups.setdefault(c.published.row, set()).add(c.published.group)
    by_note: dict[str, dict[str, list[str]]] = {}
    for c in comparisons:
        p = c.published
        row = f"{p.row} [{p.group}]" if len(groups[p.row]) > 1 else p.row
        for note in cell_notes(c):
            by_note.setdefault(note, {}).setdefault(row, []).append(p.column)
    for note, rows in by_note.items():
        cells = [row if len(cols) == len(order) else f"{row} ({', '.join(cols)})" for row, cols in rows.items()]
        lines.append(f"{'; '.join(cells)}: {note}")
    lines.extend(failed_lines(failed))
    return lines


def failed_lines(failed: Sequence[FailedJob]) -> list[str]:
    """How many jobs failed and why, per sweep, and the command that runs them again."""
    lines = []
    sweeps = {job.sweep.run_id: job.sweep for job in failed}
    for run_id, sweep in sweeps.items():
        jobs = [job for job in failed if job.sweep.run_id == run_id]
        reasons: dict[str, int] = {}
        for job in jobs:
            reasons[job.reason] = reasons.get(job.reason, 0) + 1
        why = "; ".join(f"{n}× {r}" for r, n in reasons.items())
        unplaced = sum(job.params is None for job in jobs)
        where = f" {unplaced} failed before logging their params: no cell shows them." if unplaced else ""
        lines.append(
            f"Failed jobs: {len(jobs)} of sweep {sweep.name} ({why}).{where} `{sweep.command}` runs them again "
            "(jobs that finished are skipped)."
        )
    return lines


def csv_long(comparisons: Sequence[Comparison]) -> str:
    """One line per cell, the numbers as numbers, and every note of the cell: for a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    fields = ["table", "group", "row", "column", "published", "published_value", "metric", "backbone", "rule"]
    fields += ["provenance", "quoted_from", "figure_of", "state", "kgx_mean", "kgx_low", "kgx_high", "runs"]
    writer.writerow([*fields, "questions", "difference", "inside", "on", "notes"])
    for c in comparisons:
        p = c.published
        figures = (c.mean, c.low, c.high, c.runs or None, c.questions, c.difference, c.inside, c.on)
        values = [p.table, p.group, p.row, p.column, p.text, p.value, p.metric, p.backbone, p.rule]
        values += [p.provenance, p.quoted_from, p.figure_of, c.state, *figures, "; ".join(cell_notes(c))]
        writer.writerow(["" if v is None else v for v in values])
    return buffer.getvalue()


def render_paper(
    table: PaperTable, comparisons: Sequence[Comparison], source: str, fmt: str, failed: Sequence[FailedJob] = ()
) -> str:
    fmt = FORMATS[fmt]
    if fmt == "csv":
        return csv_long(comparisons)
    text = text_table(table, comparisons, STYLES[fmt])
    footer = notes(table, comparisons, source, failed)
    if fmt == "html":
        return html_table(text) + "".join(f'<p class="note">{html.escape(n)}</p>\n' for n in footer)
    if fmt == "latex":
        return latex_text(text) + latex_notes(footer)
    if fmt == "md":
        return markdown_text(text) + "\n" + "".join(f"{n}\n\n" for n in footer)
    return term_text(text, TEXT_WIDTH) + "\n" + "".join(f"{wrapped(n, TEXT_WIDTH)}\n" for n in footer)


def latex_notes(footer: Sequence[str]) -> str:
    """The notes under the tabular, as text the compiled table shows (not comments)."""
    body = "".join(f"\\noindent {escape(n)}\\par\n" for n in footer)
    return f"\\par\\smallskip\n{{\\footnotesize\n{body}}}\n"
