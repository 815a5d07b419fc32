"""A :class:`Grid` as text: aligned for the terminal, Markdown, LaTeX, CSV, or an HTML table.

A Grid becomes a :class:`TextTable` (every cell in words) and the formats lay that out, so a
table built in other words (a paper's own layout, kgx.report.paper_layout) prints the same way.
CSV is the long form, one line per cell with ``mean``, ``std`` and ``n`` in their own columns,
so the numbers stay numbers for a spreadsheet or a notebook; missing cells have empty fields.
"""

from __future__ import annotations

import csv
import html
import io
import math
import textwrap
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

from kgx.report.tables import Cell, Grid

MISSING_TEXT = "-"
# What pdflatex reads as commands or cannot set in its default font: spelt in LaTeX's own words, so
# that a table compiles in any document with no package (the base of Debian's texlive-latex-base),
# and with no text symbol of the TS1 encoding (\textdagger and the like), whose fonts are built on
# first use.
LATEX_SPECIAL = {
    "\\": r"$\backslash$",
    "~": r"$\sim$",
    "^": r"\^{}",
    "<": r"$<$",
    ">": r"$>$",
    "|": r"$|$",
    "$": r"$\$$",
    **{c: "\\" + c for c in "&%#_{}"},
}
LATEX_UNICODE = {
    "±": r"$\pm$",
    "×": r"$\times$",
    "Δ": r"$\Delta$",
    "−": r"$-$",
    "–": "--",
    "—": "---",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
    "…": r"\ldots{}",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "≈": r"$\approx$",
    "→": r"$\rightarrow$",
    "·": r"$\cdot$",
    "†": r"$\dagger$",
    "‡": r"$\ddagger$",
    "§": r"$\S$",
    "°": r"$^\circ$",
    "\u00a0": "~",
}


def decimals(x: float) -> int:
    """One decimal, as the papers print percentages and token counts; three significant
    digits below 1, so that a cost of $0.0023 does not print as 0.0 (and never as 2.3e-03)."""
    return 1 if x == 0 or abs(x) >= 1 else 2 - math.floor(math.log10(abs(x)))


def cell_text(cell: Cell, pm: str = "+-", missing: str = MISSING_TEXT) -> str:
    if cell.mean is None:
        return missing
    d = decimals(cell.mean)  # the std is printed to the mean's precision; thousands grouped
    if cell.std is None:
        return f"{cell.mean:,.{d}f} (n={cell.n})"
    return f"{cell.mean:,.{d}f} {pm} {cell.std:,.{d}f} (n={cell.n})"


@dataclass(frozen=True)
class TextTable:
    """A table in words: a title, the header, the body's rows, and how many leading columns are
    labels (left-aligned, escaped in LaTeX, ``<th>`` in HTML); the other cells are printed as they
    are. ``marks`` (row, column) -> a word HTML colours the cell by (a paper's ``in``/``out``)."""

    title: str
    header: list[str]
    body: list[list[str]]
    labels: int
    marks: dict[tuple[int, int], str] = field(default_factory=dict)


@dataclass(frozen=True)
class NotedTable:
    """A table in words and the notes that go with it (a paper's table on a sweep's page)."""

    table: TextTable
    notes: Sequence[str]


def as_text(grid: Grid, text: Callable[[Cell], str]) -> TextTable:
    """One label column per row key, then one column per grid column, each cell in ``text``'s words."""
    header = [*grid.row_keys, *grid.headers]
    body = [[_label(v) for v in row] + [text(grid.cell(row, col)) for col in grid.cols] for row in grid.rows]
    return TextTable(grid.title, header, body, len(grid.row_keys))


def _label(value: Optional[str]) -> str:
    return MISSING_TEXT if value is None else value


def term(grid: Grid) -> str:
    return term_text(as_text(grid, cell_text))


def term_text(table: TextTable, width: Optional[int] = None) -> str:
    """Aligned columns. Given a ``width``, a table wider than that prints in blocks of columns
    that fit, one under the other, each with the label columns again (a paper's twelve
    backbone x dataset columns read in a terminal without wrapping every line)."""
    header, body = table.header, table.body
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    labels = list(range(table.labels))
    blocks = _blocks(widths, table.labels, width) if width else [list(range(table.labels, len(header)))]

    def line(cells: list[str], shown: list[int]) -> str:
        return "  ".join(
            cells[i].ljust(widths[i]) if i < table.labels else cells[i].rjust(widths[i]) for i in shown
        ).rstrip()

    parts = [table.title]
    for block in blocks:
        shown = labels + block
        parts += [line(header, shown), "  ".join("-" * widths[i] for i in shown), *(line(r, shown) for r in body)]
        parts.append("") if block is not blocks[-1] else None
    return "\n".join(parts) + "\n"


def _blocks(widths: list[int], labels: int, width: int) -> list[list[int]]:
    """The value columns in runs that fit ``width`` beside the label columns (at least one each)."""
    room = width - sum(w + 2 for w in widths[:labels])
    blocks: list[list[int]] = [[]]
    used = 0
    for i in range(labels, len(widths)):
        if blocks[-1] and used + widths[i] + 2 > room:
            blocks.append([])
            used = 0
        blocks[-1].append(i)
        used += widths[i] + 2
    return blocks


def wrapped(text: str, width: int) -> str:
    """A note as lines of at most ``width`` characters, the lines after the first indented."""
    return textwrap.fill(text, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)


def markdown(grid: Grid) -> str:
    return markdown_text(as_text(grid, cell_text))


def markdown_text(table: TextTable) -> str:
    rule = ["---"] * table.labels + ["---:"] * (len(table.header) - table.labels)
    rows = [table.header, rule, *table.body]
    return (
        f"{table.title}\n\n"
        + "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows)
        + "\n"
    )


def latex(grid: Grid) -> str:
    return latex_text(as_text(grid, lambda c: cell_text(c, r"$\pm$", "--")))


def latex_text(table: TextTable) -> str:
    """Labels and the header are escaped; cells are LaTeX already (``$\\pm$``)."""
    spec = "l" * table.labels + "r" * (len(table.header) - table.labels)
    out = [
        f"% {table.title}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\hline",
        " & ".join(map(escape, table.header)) + r" \\",
        r"\hline",
    ]
    out += [" & ".join(escape(c) if i < table.labels else c for i, c in enumerate(row)) + r" \\" for row in table.body]
    return "\n".join([*out, r"\hline", r"\end{tabular}"]) + "\n"


def escape(text: str) -> str:
    """Text as LaTeX: its special characters escaped (method names like ``knowpath_v2``), the
    symbols reports print (±, ×, Δ, −, †) as LaTeX's, accented letters as their accents; any
    other character pdflatex's default font lacks becomes its plain-letter form, or ``?``."""
    return "".join(LATEX_SPECIAL.get(c) or LATEX_UNICODE.get(c) or _plain(c) for c in text)


ACCENTS = {"\u0301": "'", "\u0300": "`", "\u0302": "^", "\u0308": '"', "\u0303": "~", "\u0327": "c", "\u030c": "v"}


def _plain(char: str) -> str:
    """A character pdflatex sets as it is (ASCII), with its accent (é), or as close as ASCII gets."""
    if char.isascii():
        return char
    base, *marks = unicodedata.normalize("NFD", char)
    if base.isascii() and len(marks) == 1 and marks[0] in ACCENTS:
        return f"\\{ACCENTS[marks[0]]}{{{base}}}"
    return unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode() or "?"


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


def html_table(table: Union[Grid, TextTable]) -> str:
    """A ``<table>`` with the title as its caption, in a box of its own that scrolls sideways
    when the table is wider than the page (the label columns stay in view: kgx.report.html's
    style); every label and cell is escaped, a marked cell carries its mark as a class."""
    if isinstance(table, Grid):
        table = as_text(table, lambda c: cell_text(c, "±"))
    rows = ["<tr>" + "".join(f'<th scope="col">{html.escape(c)}</th>' for c in table.header) + "</tr>"]
    rows += [
        "<tr>"
        + "".join(
            f'<th scope="row">{html.escape(c)}</th>'
            if i < table.labels
            else f'<td class="{" ".join(["num", *filter(None, [table.marks.get((r, i))])])}">{html.escape(c)}</td>'
            for i, c in enumerate(row)
        )
        + "</tr>"
        for r, row in enumerate(table.body)
    ]
    caption = html.escape(table.title.replace("+-", "±"))
    return f'<div class="scroll"><table><caption>{caption}</caption>{"".join(rows)}</table></div>\n'


FORMATS: dict[str, Callable[[Grid], str]] = {
    "term": term,
    "md": markdown,
    "csv": csv_long,
    "latex": latex,
    "html": html_table,
}


def render(grid: Grid, fmt: str = "term") -> str:
    return FORMATS[fmt](grid)
