"""A paper's table in its own layout, kgx's figures beside the published ones (``kgx.report paper``).

Rows and columns are the paper's, in its order, under its group headings. Each of the paper's
rows takes three lines: ``paper`` (the figure as printed), ``kgx`` (mean, 95% interval, runs x
questions; ``not run`` when no run made the cell, ``not in kgx`` for a method kgx does not have;
on a derived row, LMP's gains, kgx's own computed from kgx's cells, kgx.report.paper_derived)
and ``Δ`` (kgx minus the paper, and whether the paper's figure lies ``in`` or ``out`` of kgx's
interval). The text is a kgx.report.render TextTable, so it prints in every format the other
reports do; notes (the rules, the papers' caveats, what kgx's figures stand for) follow it.
"""

from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

import polars as pl

from kgx.report.paper_cells import Comparison
from kgx.report.paper_derived import compare_all, rule_notes
from kgx.report.paper_published import COST_METRICS, RULES, TABLES, PaperTable, paper_table
from kgx.report.paper_released import as_runs, described, relevant, score_all
from kgx.report.render import TextTable, decimals, escape, html_table, latex_text, markdown_text, term_text
from kgx.report.runs import ReportError, load_runs

PAPER_TAG = "paper"  # kgx.run.sweep tags a +paper= sweep's parent run with the table's name
FORMATS = {"text": "text", "term": "text", "markdown": "md", "md": "md", "latex": "latex", "html": "html", "csv": "csv"}
LEGEND = (
    "paper: the figure as printed. kgx: mean [95% interval] runs×questions; the interval is over seeds "
    "(Student's t) with two runs or more, over the questions (Wilson) for one run of a rate. "
    "Δ: kgx minus paper; in/out: the paper's figure inside/outside kgx's interval."
)


@dataclass(frozen=True)
class Style:
    """How a format spells what the text format writes plainly."""

    pm: str
    cell: Callable[[str], str]  # escapes a cell's text


STYLES = {
    "text": Style("±", str),
    "md": Style("±", str),
    "html": Style("±", str),
    "latex": Style(r"$\pm$", escape),
}


def number(value: float, metric: str, like: float, sign: str = "") -> str:
    """One decimal for percentages, as the papers print them; a cost figure to the precision of
    ``like`` (kgx's mean: its interval and difference print as precisely as it does).
    ``sign="+"`` prints the sign of a positive difference too."""
    return f"{value:{sign}.{decimals(like) if metric in COST_METRICS else 1}f}"


def kgx_text(c: Comparison) -> str:
    if c.published.derived:  # as the paper prints its gains; "-" where an input is missing
        return f"{c.mean:+.1f}%" if c.mean is not None else "-"
    if c.state != "run":
        return c.state
    metric = c.published.metric
    mean = number(c.mean, metric, c.mean)
    interval = f" [{number(c.low, metric, c.mean)}, {number(c.high, metric, c.mean)}]" if c.low is not None else ""
    size = f"{c.runs}×{c.questions}q" if c.questions else f"n={c.runs}"
    return f"{mean}{interval} {size}"


def delta_text(c: Comparison) -> str:
    if c.difference is None:
        return ""
    verdict = {True: " in", False: " out", None: ""}[c.inside]
    return number(c.difference, c.published.metric, c.mean, "+") + verdict


def text_table(table: PaperTable, comparisons: Sequence[Comparison], style: Style) -> TextTable:
    """The paper's layout: a heading line per group, three lines per row (paper, kgx, Δ)."""
    columns = list(dict.fromkeys(c.published.column for c in comparisons))
    rows: dict[tuple[str, str], dict[str, Comparison]] = {}
    for c in comparisons:
        rows.setdefault((c.published.group, c.published.row), {})[c.published.column] = c
    body: list[list[str]] = []
    group: Optional[str] = None
    for (heading, label), cells in rows.items():
        if heading != group and heading:
            body.append([heading, "", *[""] * len(columns)])
        group = heading
        shown = [cells.get(column) for column in columns]
        paper = [style.cell(c.published.text).replace("±", style.pm) if c else "" for c in shown]
        body.append([f"  {label}" if heading else label, "paper", *paper])
        body.append(["", "kgx", *[style.cell(kgx_text(c)) if c else "" for c in shown]])
        if any(c and c.difference is not None for c in shown):
            body.append(["", "Δ", *[style.cell(delta_text(c)) if c else "" for c in shown]])
    title = f"{table.name}: {table.paper}, {table.source}: {table.title}"
    return TextTable(title, ["", "", *columns], body, 2)


def notes(table: PaperTable, comparisons: Sequence[Comparison], source: str) -> list[str]:
    """What the table's figures rest on: kgx's source, the legend, the rules, and every cell note."""
    lines = [f"kgx: {source}", LEGEND]
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
        for note in (p.note, c.note):
            if note:
                by_note.setdefault(note, {}).setdefault(row, []).append(p.column)
    for note, rows in by_note.items():
        cells = [row if len(cols) == len(order) else f"{row} ({', '.join(cols)})" for row, cols in rows.items()]
        lines.append(f"{'; '.join(cells)}: {note}")
    return lines


def csv_long(comparisons: Sequence[Comparison]) -> str:
    """One line per cell, the numbers as numbers: for a spreadsheet or a notebook."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    fields = ["table", "group", "row", "column", "published", "published_value", "metric", "backbone", "rule"]
    writer.writerow([*fields, "state", "kgx_mean", "kgx_low", "kgx_high", "runs", "questions", "difference", "inside"])
    for c in comparisons:
        p = c.published
        figures = (c.mean, c.low, c.high, c.runs or None, c.questions, c.difference, c.inside)
        values = [p.table, p.group, p.row, p.column, p.text, p.value, p.metric, p.backbone, p.rule, c.state, *figures]
        writer.writerow(["" if v is None else v for v in values])
    return buffer.getvalue()


def render_paper(table: PaperTable, comparisons: Sequence[Comparison], source: str, fmt: str) -> str:
    fmt = FORMATS[fmt]
    if fmt == "csv":
        return csv_long(comparisons)
    text = text_table(table, comparisons, STYLES[fmt])
    footer = notes(table, comparisons, source)
    if fmt == "html":
        return html_table(text) + "".join(f'<p class="note">{html.escape(n)}</p>\n' for n in footer)
    if fmt == "latex":
        return latex_text(text) + "".join(f"% {n}\n" for n in footer)
    if fmt == "md":
        return markdown_text(text) + "\n" + "".join(f"{n}\n\n" for n in footer)
    return term_text(text) + "\n" + "".join(f"{n}\n" for n in footer)


def kgx_runs(experiment: str, uri: Optional[str], parent: Optional[str]) -> tuple[Optional[pl.DataFrame], str]:
    """The runs to lay out and how to name them. Without ``parent`` no runs is no error: the
    table is shown with every cell ``not run``, which is what a reader about to run it wants."""
    try:
        frame = load_runs(experiment, uri, parent)
    except ReportError as exc:
        if parent:
            raise
        return None, f"no runs to show ({exc})"
    where = f"sweep {parent}" if parent else f"experiment '{experiment}'"
    return frame, f"the FINISHED runs of {where} ({frame.height})"


def paper_report(
    name: str,
    fmt: str = "text",
    experiment: str = "kgx",
    uri: Optional[str] = None,
    parent: Optional[str] = None,
    released: bool = False,
    backbone: Optional[str] = None,
) -> str:
    """Table ``name`` in its paper's layout, kgx's cells from runs (or from the released outputs)."""
    table, cells = paper_table(name)
    if released:
        scored = score_all(relevant(cells))
        frame, source = as_runs(scored), described(scored)
    else:
        frame, source = kgx_runs(experiment, uri, parent)
    comparisons, standing = compare_all(cells, frame, backbone, comparable=not table.stand_in)
    return render_paper(table, comparisons, source + standing_note(frame, comparisons, standing, name), fmt)


def standing_note(
    frame: Optional[pl.DataFrame], comparisons: Sequence[Comparison], standing: Optional[str], name: str
) -> str:
    """A sentence when a backbone the paper did not use stood in for its, or when the runs make no cell."""
    if frame is None or frame.height == 0:
        return ""
    named = ", ".join(dict.fromkeys(c.published.backbone for c in comparisons if c.published.backbone))
    text = f"; backbone {standing} stands in for the paper's ({named})" if standing else ""
    if not any(c.state == "run" for c in comparisons):
        text += (
            f"; none of them makes a cell of this table (python -m kgx -m +paper={name} runs its cells; "
            "--backbone NAME lays out runs of one backbone in every cell's place)"
        )
    return text


def paper_section(frame: pl.DataFrame, name: str) -> tuple[str, Union[TextTable, str]]:
    """The sweep page's section for a ``+paper=`` sweep: the table from the sweep's runs."""
    if name not in TABLES:
        return f"Paper table {name}", f"no paper table '{name}'"
    table, cells = paper_table(name)
    comparisons, _ = compare_all(cells, frame, None, comparable=not table.stand_in)
    text = text_table(table, comparisons, STYLES["html"])
    caption = f"{text.title}. {LEGEND}"
    return f"Paper table: {name}", TextTable(caption, text.header, text.body, text.labels)
