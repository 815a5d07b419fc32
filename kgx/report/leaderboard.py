"""``python -m kgx.report leaderboard --dataset webqsp``: every system's figure kgx knows, in one table.

Three sources make the rows, one figure each (kgx.report.leaderboard_entries, _measured): the
papers' published tables (every file in ``kgx/report/published/``), the authors' released
outputs scored by kgx, and kgx's own FINISHED runs. A row says the system, its backbone, the KG it
stood on, the metric and its rule, where the figure comes from, and its cost per question where
the source gives one.

Rows of one system and backbone family (``gpt35`` and ``gpt35_1106`` are both ChatGPT) sit
together, so that a disagreement between papers, released outputs and kgx shows at a glance;
the groups are in order of their best figure, and a group's rows by metric, then provenance.

One measurement printed in several places is one piece of evidence, not several: a row whose
figure, metric, settings and origin (whose measurement it is: ToG's figure quoted by LMP and by
KnowPath is ToG's) are those of a row above it is marked ``#n``, that row's number, and a row the
paper's data says is another row's figure (``figure_of``) is marked with it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Optional, Sequence

import polars as pl

from kgx.core.cli import count
from kgx.report.leaderboard_entries import (
    ACCURACY,
    AUTHORS_HIT,
    ROG_RULE,
    Entry,
    family,
    published_entries,
)
from kgx.report.leaderboard_measured import FINE_TUNED, released_entries, run_entries
from kgx.report.paper_kg import ROG
from kgx.report.paper_published import PROVENANCE, RULES
from kgx.report.runs import ReportError, load_runs

METRIC_ORDER = {m: i for i, m in enumerate((*ACCURACY, AUTHORS_HIT))}
PROVENANCE_ORDER = {"reproduced": 0, "quoted": 1, "released outputs": 2, "kgx run": 3}
PROVENANCE_TEXT = {
    **PROVENANCE,
    "released outputs": "the authors' released per-question outputs, scored by kgx",
    "kgx run": "kgx's own runs (mean over seeds, +- their std)",
}


@dataclass(frozen=True)
class Row:
    """An entry in its place: its number, its group, and the row whose figure it repeats."""

    number: int
    group: str
    entry: Entry
    same_as: str  # "": an independent figure; "#3": row 3's measurement again; or the source's own word


@dataclass(frozen=True)
class Board:
    dataset: str
    metrics: tuple[str, ...]
    rows: list[Row]
    notes: list[str]


def leaderboard(
    dataset: str,
    experiment: str = "kgx",
    uri: Optional[str] = None,
    parent: Optional[str] = None,
    metrics: Optional[Sequence[str]] = None,
) -> Board:
    """The board of ``dataset`` (RoG's subgraph files stand for their test set), with the runs of
    ``experiment`` (or of sweep ``parent``); with no store or no runs the board has none, and says so."""
    try:
        frame, runs_note = load_runs(experiment, uri, parent), ""
    except ReportError as exc:
        if parent:
            raise
        frame, runs_note = None, f"no kgx runs: {exc.wording(cli=True)}"
    return build(ROG.get(dataset, dataset), frame, runs_note, metrics)


def build(
    dataset: str, frame: Optional[pl.DataFrame], runs_note: str = "", metrics: Optional[Sequence[str]] = None
) -> Board:
    """The board from the published figures, the released outputs and ``frame``'s runs."""
    published = published_entries(dataset)
    chosen = tuple(metrics) if metrics else field_metrics(published.entries, dataset)
    unknown = [m for m in chosen if m not in METRIC_ORDER]
    if unknown:
        raise ReportError(f"no leaderboard metric {', '.join(unknown)}; metrics: {', '.join(METRIC_ORDER)}")
    released = released_entries(dataset, chosen)
    entries = [e for e in published.entries if e.metric in chosen] + released.entries
    entries += run_entries(frame, dataset, chosen)
    rows = arrange(entries)
    notes = [*published.notes, *released.notes, *([runs_note] if runs_note else [])]
    return Board(dataset, chosen, rows, [*summary(rows), *notes])


def field_metrics(published: Sequence[Entry], dataset: str) -> tuple[str, ...]:
    """The metrics of the dataset's published figures, kgx's Hits@1, and the authors' Hit where a
    fine-tuned system's released outputs are scored under it."""
    found = {e.metric for e in published} | {"hits1"}
    if any(r.dataset == dataset for r in FINE_TUNED):
        found.add(AUTHORS_HIT)
    return tuple(m for m in METRIC_ORDER if m in found)


def arrange(entries: Sequence[Entry]) -> list[Row]:
    """Entries grouped by system and backbone family, numbered, repeats marked (module docstring)."""
    groups: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in entries:
        groups[(entry.system, family(entry.backbone))].append(entry)
    # groups by their best figure; those of kgx's test models (oracle, scripted) last
    order = sorted(groups, key=lambda k: (all(e.stand_in for e in groups[k]), -max(e.value for e in groups[k]), k))
    rows: list[Row] = []
    for system, backbone in order:
        first: dict[tuple, int] = {}
        for entry in sorted(groups[(system, backbone)], key=_within):
            number = len(rows) + 1
            measurement = (entry.metric, entry.value, entry.origin, entry.variant, entry.kg)
            if measurement in first:
                same = f"#{first[measurement]}"
            else:
                same = f"the figure of {entry.figure_of}" if entry.figure_of else ""
                first[measurement] = number
            rows.append(Row(number, f"{system} / {backbone or '-'}", entry, same))
    return rows


def _within(entry: Entry) -> tuple:
    return (
        METRIC_ORDER[entry.metric],
        PROVENANCE_ORDER.get(entry.provenance, len(PROVENANCE_ORDER)),
        entry.variant,
        entry.kg,
        -entry.value,
        entry.backbone,
        entry.source,
    )


def summary(rows: Sequence[Row]) -> list[str]:
    """The notes every board starts with: its counts, the rules and provenances it shows."""
    if not rows:
        return ["no figure of this dataset: no published table, released output or kgx run has one"]
    groups = len({r.group for r in rows})
    repeats = sum(r.same_as.startswith("#") for r in rows)
    rules = sorted({r.entry.rule for r in rows})
    kinds = [p for p in PROVENANCE_ORDER if any(r.entry.provenance == p for r in rows)]
    return [
        f"{count(len(rows), 'figure')} of {count(groups, 'system')} x backbone; {repeats:,} repeat a measurement "
        "listed above (marked #n: one origin, one figure) and are no further evidence",
        "rules: " + "; ".join(f"{rule}: {ROG_RULE if rule == 'rog' else RULES.get(rule, rule)}" for rule in rules),
        "provenance: " + "; ".join(f"{kind}: {PROVENANCE_TEXT[kind]}" for kind in kinds),
        "cost per question (LLM calls, tokens) where the source gives it: the paper's cost table for its rows of "
        "that system and backbone, a released file's records, a run's means",
    ]
