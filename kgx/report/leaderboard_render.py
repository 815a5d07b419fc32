"""A leaderboard (kgx.report.leaderboard) as text, CSV, a sortable HTML page, and a PNG of accuracy
against cost.

The page is self-contained as kgx.report.html's pages are: its CSS, its figure as base64 PNG, and
a few lines of script that sort the table by the column clicked (without the script the table
is simply in the board's order). The figure has two panels, accuracy against LLM calls and
against tokens per question, one labelled point per row with a cost; colours tell the rules
apart, since figures under different rules do not compare.
"""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path
from typing import Callable, Optional

from kgx.report.html import STYLE, esc
from kgx.report.leaderboard import AUTHORS_HIT, Board, Row

HEADER = ("#", "system", "backbone", "as named", "KG", "metric (rule)", "figure", "n", "provenance", "source")
HEADER += ("calls/q", "tokens/q", "same as")
CSV_FIELDS = ("number", "group", "system", "name", "variant", "backbone", "kg", "metric", "rule", "value", "spread")
CSV_FIELDS += ("questions", "provenance", "source", "origin", "calls_per_q", "tokens_per_q", "same_as", "note")

SORT_SCRIPT = """
document.querySelectorAll('table.board th').forEach((th, col) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0];
  const up = th.dataset.dir !== 'up';
  th.dataset.dir = up ? 'up' : 'down';
  const key = r => { const c = r.cells[col]; const t = c.dataset.v ?? c.textContent; const n = parseFloat(t);
    return isNaN(n) ? t : n; };
  const rows = [...body.rows].sort((a, b) => { const x = key(a), y = key(b);
    const d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return up ? d : -d; });
  rows.forEach(r => body.appendChild(r));
}));
"""
BOARD_STYLE = "table.board th{cursor:pointer}tr.g1 td{background:#f7f7fb}td.note{color:#666}"


def figure_text(row: Row) -> str:
    e = row.entry
    places = 2 if e.metric == AUTHORS_HIT else 1  # the authors' Hit is checked to its last digit
    return f"{e.value:.{places}f}" + (f" ± {e.spread:.{places}f}" if e.spread is not None else "")


def cells(row: Row) -> list[str]:
    e = row.entry
    return [
        str(row.number),
        e.system,
        e.backbone or "-",
        e.name + (f" [{e.variant}]" if e.variant else ""),
        e.kg,
        f"{e.metric} ({e.rule})",
        figure_text(row),
        "" if e.questions is None else f"{e.questions:,}",
        e.provenance,
        e.source,
        "" if e.calls is None else f"{e.calls:.1f}",
        "" if e.tokens is None else f"{e.tokens:,.0f}",
        row.same_as,
    ]


def title(board: Board) -> str:
    return f"Leaderboard: {board.dataset} ({', '.join(board.metrics)})"


def text(board: Board, plot: Optional[Path]) -> str:
    """Aligned columns, a blank line between groups, then the notes."""
    lines = [cells(r) for r in board.rows]
    widths = [max(len(c) for c in column) for column in zip(HEADER, *lines)]

    def line(values: list[str] | tuple[str, ...]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()

    out = [title(board), line(HEADER), "  ".join("-" * w for w in widths)]
    for i, (row, values) in enumerate(zip(board.rows, lines)):
        if i and row.group != board.rows[i - 1].group:
            out.append("")
        out.append(line(values))
    out += ["", *(f"- {note}" for note in board.notes)]
    if plot is not None:
        out.append(f"- accuracy against cost: {plot}")
    return "\n".join(out) + "\n"


def csv_text(board: Board, plot: Optional[Path]) -> str:
    """One line per row, every field of its entry; numbers as numbers."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for row in board.rows:
        e = row.entry
        writer.writerow(
            [row.number, row.group, e.system, e.name, e.variant, e.backbone, e.kg, e.metric, e.rule, e.value]
            + ["" if v is None else v for v in (e.spread, e.questions)]
            + [e.provenance, e.source, e.origin]
            + ["" if v is None else v for v in (e.calls, e.tokens)]
            + [row.same_as, e.note]
        )
    return buffer.getvalue()


def html_page(board: Board, plot: Optional[Path]) -> str:
    """The sortable table, its notes and the figure, in one document."""
    head = "".join(f"<th>{esc(h)}</th>" for h in HEADER)
    body, shade, previous = [], 0, None
    for row in board.rows:
        if previous is not None and row.group != previous:
            shade = 1 - shade
        previous = row.group
        values = cells(row)
        sort_value = {0: row.number, 6: row.entry.value, 10: row.entry.calls, 11: row.entry.tokens}
        tds = "".join(
            f'<td data-v="{esc(sort_value[i])}">{esc(v)}</td>'
            if sort_value.get(i) is not None
            else f"<td>{esc(v)}</td>"
            for i, v in enumerate(values)
        )
        note = f' title="{esc(row.entry.note)}"' if row.entry.note else ""
        body.append(f'<tr class="g{shade}" data-group="{esc(row.group)}"{note}>{tds}</tr>')
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in board.notes)
    figure = ""
    if plot is not None:
        data = base64.b64encode(plot.read_bytes()).decode()
        figure = f'<figure><img alt="accuracy against cost" src="data:image/png;base64,{data}"></figure>'
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title(board))}</title>'
        f"<style>{STYLE}{BOARD_STYLE}</style></head><body><h1>{esc(title(board))}</h1>"
        '<p class="sub">click a column to sort by it; a row\'s note shows on hover</p>'
        f'<table class="board"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        f"{notes}{figure}<script>{SORT_SCRIPT}</script></body></html>\n"
    )


FORMATS: dict[str, Callable[[Board, Optional[Path]], str]] = {"text": text, "csv": csv_text, "html": html_page}


def measurements(board: Board) -> list[tuple[Row, Optional[float], Optional[float]]]:
    """One (row, calls, tokens) per measurement that has a cost and is no test model's: a repeat
    (``#n``) is no point of its own, but lends row n the cost its source gives (ToG's calls, in LMP's
    cost table, for ToG's own figure)."""
    first = {r.number: r for r in board.rows if not r.same_as.startswith("#") and not r.entry.stand_in}
    costs = {n: [r.entry.calls, r.entry.tokens] for n, r in first.items()}
    for row in board.rows:
        if row.same_as.startswith("#") and int(row.same_as[1:]) in costs:
            cost = costs[int(row.same_as[1:])]
            cost[0] = cost[0] if cost[0] is not None else row.entry.calls
            cost[1] = cost[1] if cost[1] is not None else row.entry.tokens
    return [
        (first[n], calls, tokens) for n, (calls, tokens) in costs.items() if calls is not None or tokens is not None
    ]


def written(board: Board, out_dir: Path) -> Optional[Path]:
    """The board's figure, ``leaderboard_<dataset>.png`` in ``out_dir``, or None when no row has a cost."""
    return plot_board(board, out_dir / f"leaderboard_{board.dataset}.png")


def plot_board(board: Board, path: Path) -> Optional[Path]:
    """Accuracy against calls and against tokens per question, a labelled point per measurement
    with that cost (:func:`measurements`); None (nothing written) when none has a cost."""
    from matplotlib.figure import Figure

    points = measurements(board)
    if not points:
        return None
    rules = sorted({row.entry.rule for row, _, _ in points})
    colour = {rule: f"C{i % 10}" for i, rule in enumerate(rules)}
    fig = Figure(figsize=(13, 5.5), layout="constrained")
    for ax, (index, label) in zip(fig.subplots(1, 2), ((1, "LLM calls per question"), (2, "tokens per question"))):
        shown = [p for p in points if p[index] is not None]
        for rule in rules:
            mine = [p for p in shown if p[0].entry.rule == rule]
            if mine:
                ax.scatter(
                    [p[index] for p in mine], [p[0].entry.value for p in mine], color=colour[rule], label=f"rule {rule}"
                )
        for point in shown:
            row = point[0]
            ax.annotate(
                f"#{row.number} {row.entry.system} {row.entry.backbone}".strip(),
                (point[index], row.entry.value),
                fontsize=7,
                xytext=(3, 3),
                textcoords="offset points",
            )
        ax.set_xlabel(label)
        ax.set_ylabel("figure (%)")
        ax.grid(alpha=0.3)
        if shown:
            ax.legend(fontsize=8, loc="best")
    fig.suptitle(f"{title(board)}: accuracy against cost")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path
