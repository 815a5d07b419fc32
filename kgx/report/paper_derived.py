"""The papers' derived rows (LMP Table 2's "LMP Gain"), computed from kgx's own cells.

A derived row is no measurement: the paper computes it from other rows of its table, and kgx
computes its own the same way from kgx's figures for those rows, so that a reader sees kgx's gain
beside the published one rather than the published one alone. The rule is the paper's:

* LMP Table 2 prints the relative gain in percent, ``100 × (LMP − baseline) / baseline``, per
  column (backbone × dataset). Checked against every printed gain (LMP's caption: "calculated
  with the best and the second best", LMP being the best): *without knowledge graph* the baseline
  is CoT; *with knowledge graph* it is the best of the KG baselines of the column, ToG and EffiQA
  (GPT-4 on WebQSP: 90.0 over EffiQA's 82.9, +8.6%, not over ToG's 82.6), and the gain is "-"
  where neither has a figure.

A derived cell is computed only when all its inputs ran: a target or a baseline kgx can make
but has not run leaves it "-" (state ``not derived``), with a note naming what is missing. A
baseline kgx has no method for (EffiQA) can never run: kgx's gain is over the baselines it has,
and the table's notes say so (:func:`rule_notes`). A baseline of 0 gives no relative gain ("-",
noted). None of the seed papers' other tables has a derived row (no average, no improvement
row); a ``gain`` line with no rule here is an error naming its file and line (:func:`derivation`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional, Sequence

from kgx.report.paper_cells import Comparison, Inputs, compare
from kgx.report.paper_published import Published, PublishedError

Row = tuple[str, str]  # (group, row) in the paper's words


@dataclass(frozen=True)
class Derivation:
    """A derived row: ``target``'s relative gain in percent over the best of ``baselines``."""

    target: Row
    baselines: tuple[Row, ...]
    rule: str  # the rule in words, for the table's notes


KG = "with knowledge graph"
DERIVED: dict[tuple[str, str, str], Derivation] = {
    ("lmp_table2", "without knowledge graph", "LMP Gain"): Derivation(
        (KG, "LMP"), (("without knowledge graph", "CoT"),), "100 × (LMP − CoT) / CoT, per column"
    ),
    ("lmp_table2", KG, "LMP Gain"): Derivation(
        (KG, "LMP"),
        ((KG, "ToG"), (KG, "EffiQA")),
        "100 × (LMP − best) / best, per column, best: the higher of ToG and EffiQA there",
    ),
}


def derivation(cell: Published) -> Derivation:
    """The rule of a derived cell; a ``gain`` line kgx has no rule for is named."""
    found = DERIVED.get((cell.table, cell.group, cell.row))
    if found is None:
        known = ", ".join(f"{t} / {g} / {r}" for t, g, r in DERIVED)
        raise PublishedError(f"{cell.where}: a derived cell ({cell.row}) kgx has no rule for; the rules: {known}")
    return found


def relative_gain(target: float, baselines: Sequence[float]) -> Optional[float]:
    """``100 × (target − best) / best``, best the highest baseline; None without a positive best."""
    best = max(baselines, default=0.0)
    return 100 * (target - best) / best if best > 0 else None


def derive(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """``comparisons`` with every derived cell computed from kgx's figures in its column."""
    by_cell = {(c.published.group, c.published.row, c.published.column): c for c in comparisons}
    return [derived(c, by_cell) if c.published.derived else c for c in comparisons]


def derived(cell: Comparison, by_cell: dict[tuple[str, str, str], Comparison]) -> Comparison:
    """One derived cell: its gain when all its inputs ran, else "-" and a note naming what did not."""
    rule, column = derivation(cell.published), cell.published.column
    target = by_cell.get((*rule.target, column))
    # A baseline kgx has no method for can never run: the gain is over the ones it has (rule_notes).
    baselines = [by_cell[(*row, column)] for row in rule.baselines if (*row, column) in by_cell]
    baselines = [c for c in baselines if c.state != "not in kgx"]
    missing: dict[str, list[str]] = {}  # state -> the inputs in it (not run, failed, mixed, ...)
    for c in (target, *baselines):
        if c is not None and c.state != "run":
            missing.setdefault(c.state, []).append(c.published.row)
    if target is None or target.state == "not in kgx" or not baselines:
        return dataclasses.replace(cell, note="no figure of kgx's to derive it from")
    if missing:
        said = "; ".join(f"{' and '.join(rows)} {state}" for state, rows in missing.items())
        return dataclasses.replace(cell, note=f"{said}: no gain without all its inputs")
    gain = relative_gain(target.mean, [c.mean for c in baselines])
    if gain is None:
        return dataclasses.replace(cell, note=f"{' and '.join(c.published.row for c in baselines)} scored 0: no gain")
    return dataclasses.replace(cell, mean=gain)


def compare_all(cells: Sequence[Published], inputs: Inputs) -> tuple[list[Comparison], Optional[str]]:
    """:func:`kgx.report.paper_cells.compare`, then the derived cells from the compared ones."""
    comparisons, standing = compare(cells, inputs)
    return derive(comparisons), standing


def rule_notes(comparisons: Sequence[Comparison]) -> list[str]:
    """One line per derived row of the table: how kgx computes it, over which baselines."""
    absent = {(c.published.group, c.published.row) for c in comparisons if c.state == "not in kgx"}
    found = dict.fromkeys((c.published.group, c.published.row) for c in comparisons if c.published.derived)
    lines = []
    for group, row in found:
        rule = DERIVED[(comparisons[0].published.table, group, row)]
        text = f"{row} [{group}], kgx's: {rule.rule}, from kgx's own cells (no interval; Δ in points)"
        left_out = [name for g, name in rule.baselines if (g, name) in absent]
        if left_out:
            text += f"; {' and '.join(left_out)} not in kgx: kgx's is over the other baselines"
        lines.append(text + ".")
    return lines
