"""Every paper table's LaTeX compiles with pdflatex from Debian's texlive-latex-base, in a document with
no package: every published figure, every cell state, kgx's figures with their Δ lines, the provenance
marks, and notes holding every character the reports print (±, ×, Δ, −, †, quotes, accents, LaTeX's
specials), with no character lost (``\\tracinglostchars``) and no font built on the fly."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from kgx.report.paper_cells import Comparison
from kgx.report.paper_derived import derive
from kgx.report.paper_layout import render_paper
from kgx.report.paper_published import TABLES, paper_table
from kgx.report.render import escape
from kgx.report.sweeps import FailedJob, Sweep

PDFLATEX = shutil.which("pdflatex")
if PDFLATEX is None and os.environ.get("CI"):
    pytest.fail("pdflatex is missing: CI installs texlive-latex-base (.ci/run)", pytrace=False)
needs_pdflatex = pytest.mark.skipif(PDFLATEX is None, reason="needs pdflatex (Debian: texlive-latex-base)")

# Every character kind a note may hold: what reports print, what the papers' notes quote, LaTeX's own.
HARD = "±0.8 × 2 Δ −1.2 – — ‘q’ “q” … ≥ ≤ ≈ → · † ‡ § ° é ü ç ñ ½ 中 $5 & 10% #3 a_b {x} ~ ^ \\ <x> |y|"
STATES = ("run", "failed", "mixed", "n/a", "no released output", "not run")


def every_state(name: str) -> list[Comparison]:
    """The table's cells, each in one of the states in turn, every note holding HARD."""
    table, cells = paper_table(name)
    out = []
    for i, cell in enumerate(cells):
        state = STATES[i % len(STATES)]
        if state == "run":
            out.append(Comparison(cell, 61.25 + i, 58.0, 64.4, 3, 200, f"on RoG subgraphs; {HARD}", on="RoG subgraphs"))
        else:
            outcome = "" if state == "not run" else state
            out.append(Comparison(cell, note=f"{state}: {HARD}", outcome=outcome, comparable=not table.stand_in))
    return derive(out)


def failed() -> list[FailedJob]:
    sweep = Sweep("0" * 32, "tog_table1: paper/row 1a2b3c", "tog_table1", "+paper=tog_table1 dataset=cwq", 0, 1, 1)
    return [FailedJob("1" * 32, "paper/row=io_gpt35", f"LLMError: {HARD}", sweep, 0)]


def document(names: list[str]) -> str:
    parts = [r"\documentclass{article}", r"\tracinglostchars=2", r"\begin{document}"]
    for name in names:
        table, _ = paper_table(name)
        parts.append(rf"\section*{{{escape(name)}}}")
        parts.append(render_paper(table, every_state(name), f"kgx: {HARD}", "latex", failed()))
    return "\n".join([*parts, r"\end{document}", ""])


@needs_pdflatex
def test_every_paper_tables_latex_compiles_with_pdflatex(tmp_path):
    (tmp_path / "tables.tex").write_text(document(sorted(TABLES)), encoding="utf-8")
    done = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "tables.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (tmp_path / "tables.log").read_text(errors="replace")
    errors = [line for line in log.splitlines() if line.startswith("!")]
    assert done.returncode == 0 and not errors, "\n".join(errors) or done.stdout[-2000:]
    assert (tmp_path / "tables.pdf").stat().st_size > 10_000
    assert "Missing character" not in log  # no character dropped
    assert "mktexpk" not in done.stdout + done.stderr  # no font built on the fly (TS1 symbols)


def test_the_latex_of_a_table_escapes_every_note_and_mark():
    table, _ = paper_table("lmp_table2")
    text = render_paper(table, every_state("lmp_table2"), "kgx: source", "latex", failed())
    assert "Δ" not in text and "±" not in text and "×" not in text and "†" not in text
    assert r"$\Delta$" in text and r"$\pm$" in text and r"72.5*$\dagger$" in text
    assert r"\noindent failed: a sweep's job for the cell failed (the reason below).\par" in text
    assert r"\noindent Failed jobs: 1 of sweep tog\_table1: paper/row 1a2b3c" in text
