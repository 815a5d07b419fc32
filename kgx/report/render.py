"""A :class:`Grid` as text: aligned for the terminal, Markdown, LaTeX, CSV, or an HTML table.

CSV is the long form, one line per cell with ``mean``, ``std`` and ``n`` in their own columns,
so the numbers stay numbers for a spreadsheet or a notebook; missing cells have empty fields.
"""

from __future__ import annotations

import csv
import html
import io
import math
import re
from typing import Callable, Optional

from kgx.report.tables import Cell, Grid

MISSING_TEXT = "-"
LATEX_SPECIAL = {"\\": r"\textbackslash{}"}  # the others are escaped by a backslash


def decimals(x: float) -> int:
    """One decimal, as the papers print percentages and token counts; three significant
    digits below 1, so that a cost of $0.0023 does not print as 0.0 (and never as 2.3e-03)."""
    return 1 if x == 0 or abs(x) >= 1 else 2 - math.floor(math.log10(abs(x)))


def cell_text(cell: Cell, pm: str = "+-", missing: str = MISSING_TEXT) -> str:
    if cell.mean is None:
        return missing
    d = decimals(cell.mean)  # the std is printed to the mean's precision
    if cell.std is None:
        return f"{cell.mean:.{d}f} (n={cell.n})"
    return f"{cell.mean:.{d}f} {pm} {cell.std:.{d}f} (n={cell.n})"


def _lines(grid: Grid, text: Callable[[Cell], str]) -> tuple[list[str], list[list[str]]]:
    """Header and body as text: one label column per row key, then one column per grid column."""
    header = [*grid.row_keys, *grid.headers]
    body = [[_label(v) for v in row] + [text(grid.cell(row, col)) for col in grid.cols] for row in grid.rows]
    return header, body


def _label(value: Optional[str]) -> str:
    return MISSING_TEXT if value is None else value


def term(grid: Grid) -> str:
    header, body = _lines(grid, cell_text)
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    labels = len(grid.row_keys)

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < labels else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([grid.title, line(header), "  ".join("-" * w for w in widths), *map(line, body)]) + "\n"


def markdown(grid: Grid) -> str:
    header, body = _lines(grid, cell_text)
    rule = ["---"] * len(grid.row_keys) + ["---:"] * len(grid.cols)
    rows = [header, rule, *body]
    return (
        f"{grid.title}\n\n" + "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows) + "\n"
    )


def latex(grid: Grid) -> str:
    header, body = _lines(grid, lambda c: cell_text(c, r"$\pm$", "--"))
    spec = "l" * len(grid.row_keys) + "r" * len(grid.cols)
    out = [
        f"% {grid.title}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\hline",
        " & ".join(map(escape, header)) + r" \\",
        r"\hline",
    ]
    out += [" & ".join(escape(c) if i < len(grid.row_keys) else c for i, c in enumerate(row)) + r" \\" for row in body]
    return "\n".join([*out, r"\hline", r"\end{tabular}"]) + "\n"


def escape(text: str) -> str:
    """LaTeX's special characters in labels (method names like ``knowpath_v2``)."""
    return re.sub(r"[\\&%$#_{}]", lambda m: LATEX_SPECIAL.get(m.group(), "\\" + m.group()), text)


def csv_long(grid: Grid) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    metric = [grid.metric] if grid.metric else []
    writer.writerow([*(["metric"] if metric else []), *grid.row_keys, *grid.col_keys, "mean", "std", "n"])
    for row in grid.rows:
        for col in grid.cols:
            cell = grid.cell(row, col)
            writer.writerow([*metric, *_blank(row), *_blank(col), *_blank((cell.mean, cell.std)), cell.n])
    return buffer.getvalue()


def _blank(values: tuple) -> list:
    return ["" if v is None else v for v in values]


def html_table(grid: Grid) -> str:
    """A ``<table>`` with the title as its caption; every label is escaped."""
    header, body = _lines(grid, lambda c: cell_text(c, "±"))
    labels = len(grid.row_keys)
    rows = ["<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in header) + "</tr>"]
    rows += [
        "<tr>"
        + "".join(
            f"<th>{html.escape(c)}</th>" if i < labels else f'<td class="num">{html.escape(c)}</td>'
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in body
    ]
    return f"<table><caption>{html.escape(grid.title.replace('+-', '±'))}</caption>{''.join(rows)}</table>\n"


FORMATS: dict[str, Callable[[Grid], str]] = {
    "term": term,
    "md": markdown,
    "csv": csv_long,
    "latex": latex,
    "html": html_table,
}


def render(grid: Grid, fmt: str = "term") -> str:
    return FORMATS[fmt](grid)
