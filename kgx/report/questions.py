"""Figures of runs split by a question field: a metric per question type, per depth, with or without
the answer shown (``python -m kgx.report breakdown``, and the paper tables that split by one).

A field is a question's own, from its dataset (``qtype`` and ``hops`` of MetaQA, CWQ's
``compositionality_type``, GrailQA's ``level``: the kinds kgx.estimate.strata stratifies by), or
what a run recorded of the question (kgx.results.record):

* ``shown``: whether a gold answer was in the prompt of the call that answered (LMP's "correct
  facts", Table 12); ``status``, ``breakdown``: how the question ended and why it was missed;
* ``distance``: hops from a topic entity to the nearest gold answer in the KG the run used, as its
  reachability check measured it (a stand-in for a question's depth where the dataset gives none,
  CWQ's: LMP Figure 4b). It is the question's on that KG, so a run that reads no KG takes it from
  another run of the same questions that measured it.

A run's records are its ``predictions.jsonl`` artifact; a dataset field needs the dataset's file
under ``$KGX_DATA_DIR``, and a run whose file is missing says so rather than giving no figure.
"""

from __future__ import annotations

import statistics
import tempfile
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence

import polars as pl

from kgx.core.config import ConfigError, DatasetConfig
from kgx.report.pages import run_records
from kgx.report.runs import ReportError, param_column, sort_values
from kgx.report.tables import Cell, Grid, check_replicates, labels
from kgx.results.record import Record

RECORD_FIELDS = {
    "shown": "a gold answer was in the prompt of the call that answered",
    "status": "how the question ended (ok, fallback, error)",
    "breakdown": "why it was missed (kgx.diagnose.breakdown), or correct",
    "distance": "hops to the nearest gold answer in the run's KG (its reachability check)",
}
DATASET_FIELDS = ("qtype", "hops", "compositionality_type", "level", "function", "relation")


def record_value(record: Record, name: str) -> Optional[str]:
    """A recorded field of one question, as text (``true``/``false`` for a yes or no)."""
    if name == "shown":
        return None if record.shown is None else str(record.shown).lower()
    if name == "distance":
        return None if record.reach is None or record.reach.distance is None else str(record.reach.distance)
    return str(getattr(record, name))


@dataclass
class QuestionFields:
    """Every field of the runs' questions, read once: records per run, dataset meta per file, and
    the distances the KG runs measured per question (for runs that measure none)."""

    mlflow: Any
    records: dict[str, list[Record]] = field(default_factory=dict)
    meta: dict[tuple, dict[str, dict[str, Any]]] = field(default_factory=dict)
    distances: dict[str, dict[str, str]] = field(default_factory=dict)  # run id -> question id -> hops
    peers: list[dict] = field(default_factory=list)  # the runs a report reads, whose distances others borrow

    def of_run(self, run_id: str) -> list[Record]:
        if run_id not in self.records:
            with tempfile.TemporaryDirectory() as tmp:
                self.records[run_id] = run_records(self.mlflow, run_id, tmp)
        return self.records[run_id]

    def dataset_meta(self, row: dict) -> dict[str, dict[str, Any]]:
        """Question id -> meta of the run's dataset file (the whole file, whatever subset ran)."""
        from kgx.datasets import DataError, dataset_config, load

        cfg = run_dataset(row)
        key = (cfg.name, cfg.loader, cfg.path, cfg.qtype, cfg.split)
        if key not in self.meta:
            try:
                base = dataset_config(cfg.name, whole=True)
            except ConfigError:
                base = DatasetConfig(name=cfg.name)
            try:
                questions = load(replace(base, loader=cfg.loader, path=cfg.path, qtype=cfg.qtype, split=cfg.split))
            except (ConfigError, DataError) as exc:
                raise ReportError(f"question fields of run {row['run_id']} ({cfg.name}): {exc}") from None
            self.meta[key] = {q.id: q.meta for q in questions}
        return self.meta[key]

    def values(self, row: dict, name: str, peers: Sequence[dict] = ()) -> dict[str, Optional[str]]:
        """Question id -> the value of field ``name`` for every question of run ``row``; ``peers``
        are other runs on the same questions, whose measured distances stand in where it has none."""
        records = self.of_run(row["run_id"])
        if name in RECORD_FIELDS:
            found = {r.id: record_value(r, name) for r in records}
            if name == "distance" and not any(found.values()):
                found = {qid: self.peer_distance(peers, qid) for qid in found}
            return found
        meta = self.dataset_meta(row)
        return {r.id: None if meta.get(r.id, {}).get(name) is None else str(meta[r.id][name]) for r in records}

    def peer_distance(self, peers: Sequence[dict], qid: str) -> Optional[str]:
        for peer in peers:
            key = peer["run_id"]
            if key not in self.distances:
                self.distances[key] = {r.id: d for r in self.of_run(key) if (d := record_value(r, "distance"))}
            if qid in self.distances[key]:
                return self.distances[key][qid]
        return None


def run_dataset(row: dict) -> DatasetConfig:
    """The dataset file a run read, from its params (a run may have pointed its dataset elsewhere)."""

    def given(key: str) -> Optional[str]:
        value = row.get(param_column(f"dataset.{key}"))
        return None if value in (None, "None", "") else value

    return DatasetConfig(
        name=given("name") or "demo",
        loader=given("loader") or "jsonl",
        path=given("path"),
        qtype=given("qtype"),
        split=given("split"),
    )


def subset_score(records: Sequence[Record], values: dict[str, Optional[str]], metric: str, wanted: str) -> tuple:
    """``metric`` in percent over the questions whose field is ``wanted``, and how many they are
    (None and 0 when none is)."""
    chosen = [r for r in records if values.get(r.id) == wanted]
    if not chosen:
        return None, 0
    return 100.0 * statistics.fmean(r.scores.get(metric, 0.0) for r in chosen), len(chosen)


def field_label(name: str) -> str:
    return f"{name} ({RECORD_FIELDS[name]})" if name in RECORD_FIELDS else name


def breakdown_table(frame: pl.DataFrame, fields_: QuestionFields, rows: Sequence[str], by: str, metric: str) -> Grid:
    """``metric`` by ``rows`` x the values of question field ``by``: per run, the metric over
    its questions of each value; per cell, mean +- std over replicate runs (n = runs)."""
    check_replicates(frame, rows)
    runs = frame.to_dicts()
    per_run: list[tuple[tuple, dict[str, tuple]]] = []
    sizes: dict[str, int] = {}
    for row in runs:
        peers = [
            p
            for p in runs
            if p is not row and p.get(param_column("dataset.name")) == row.get(param_column("dataset.name"))
        ]
        values = fields_.values(row, by, peers)
        records = fields_.of_run(row["run_id"])
        figures = {}
        for value in {v for v in values.values() if v is not None}:
            figures[value] = subset_score(records, values, metric, value)
            sizes[value] = max(sizes.get(value, 0), figures[value][1])
        per_run.append((tuple(row[param_column(k)] for k in rows), figures))
    if not sizes:
        raise ReportError(
            f"no question of these runs has a value for '{by}'; fields: {', '.join([*RECORD_FIELDS, *DATASET_FIELDS])}"
        )
    columns = [(v,) for v in sort_values(list(sizes))]
    grid = Grid(
        title=(
            f"{metric} by {' x '.join(rows)} / question {field_label(by)}: mean +- std over seeds (n = runs); "
            f"questions per value: {', '.join(f'{c[0]}: {sizes[c[0]]:,}' for c in columns)}"
        ),
        row_keys=list(rows),
        col_keys=[by],
        rows=labels(frame, rows),
        cols=columns,
        headers=[c[0] for c in columns],
        metric=metric,
    )
    for label in grid.rows:
        for column in columns:
            means = [f[column[0]][0] for key, f in per_run if key == label and column[0] in f]
            means = [m for m in means if m is not None]
            if means:
                grid.cells[label, column] = Cell(
                    statistics.fmean(means), statistics.stdev(means) if len(means) > 1 else None, len(means)
                )
    return grid
