"""The leaderboard's rows kgx measures itself: released outputs scored by kgx, and kgx's own runs.

Released outputs are the files under ``$KGX_DATA_DIR/reference_outputs/``: the training-free
systems' (LMP, PoG, AoG: kgx.report.paper_released) and the fine-tuned GNN-RAG's per-question
results on RoG's test sets. Each is scored under every kgx rule against the dataset's gold
(kgx.results.released, as ``python -m kgx.score``); a RoG/GNN-RAG file is also scored under its
authors' own rule against its own gold (kgx.results.rog_eval), and the authors' stated figure
(``eval_result.txt``) is listed beside it as their own. A file's cost per question is the mean of
what it records (PoG's calls and tokens).

kgx's runs are the FINISHED runs reports read (kgx.report.runs), one row per configuration and
metric: runs that differ only in their seed and execution settings are replicates, whose mean it
shows with their standard deviation; its cost is the runs' mean calls and tokens per question.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Optional, Sequence

import polars as pl

from kgx.core import paths
from kgx.core.cli import count
from kgx.core.config import ConfigError
from kgx.core.types import Question
from kgx.datasets import DataError, dataset_config, load
from kgx.report.leaderboard_entries import AUTHORS_HIT, RULE_OF, Entry, Found, kg_changes, kg_text
from kgx.report.paper_kg import (
    DATASET_COLUMN,
    is_oracle,
    is_setting,
    param,
    reads_no_kg,
    serves,
    with_paper_columns,
)
from kgx.report.paper_released import FOLDER, RELEASED, Released, recorded_means
from kgx.results import rog_eval
from kgx.results.released import ROG, PredictionRecord, authors_figures, figures, match, read_predictions

GNN_RAG_NOTE = "GNN-RAG: a ReaRev GNN retrieves on RoG's subgraphs, RoG-7B (fine-tuned LLaMA2-Chat-7B) answers"
FINE_TUNED = tuple(
    Released(
        f"gnn_rag/gnn-rag{ra}-{dataset}.detailed_eval_result.jsonl",
        f"gnn_rag{ra.replace('-', '_')}",
        dataset,
        "rog_7b",
        "exact",
        note,
    )
    for dataset in ("webqsp", "cwq")
    for ra, note in (("", GNN_RAG_NOTE), ("-ra", GNN_RAG_NOTE + "; +RA: RoG's own relation paths added to the GNN's"))
)
NAMES = {"lmp": "LMP", "pog": "PoG", "aog": "AoG", "gnn_rag": "GNN-RAG", "gnn_rag_ra": "GNN-RAG+RA"}
RUN_COSTS = {"calls": "metrics.llm_calls_per_q", "tokens": "metrics.total_tokens_per_q"}
NO_KG = "no KG (the question alone)"
STAND_IN_MODELS = ("kgx-",)  # conf/llm's oracle, scripted and local test models: kgx-oracle/, kgx-scripted/, ...


def released_entries(dataset: str, metrics: Sequence[str]) -> Found:
    """Every released file of ``dataset``, scored by kgx, as rows of ``metrics``."""
    files = [r for r in (*RELEASED, *FINE_TUNED) if r.dataset == dataset]
    if not files:
        return Found([], [])
    try:
        questions = load(dataset_config(dataset, whole=True))
    except (ConfigError, DataError) as exc:
        return Found([], [f"released outputs not scored: {exc}"])
    entries, notes = [], []
    for released in files:
        path = paths.resolve(f"{FOLDER}/{released.path}")
        try:
            records = read_predictions(path).records
        except DataError as exc:
            notes.append(f"released outputs {released.path} not scored: {exc}")
            continue
        pairs, _ = match(records, questions)
        if not pairs:
            notes.append(f"released outputs {released.path} not scored: none of its records is a question of {dataset}")
            continue
        entries += _released_rows(released, path, records, pairs, metrics)
    return Found(entries, notes)


def _released_rows(
    released: Released,
    path: Path,
    records: list[PredictionRecord],
    pairs: list[tuple[Question, PredictionRecord]],
    metrics: Sequence[str],
) -> list[Entry]:
    """A file's rows: each of ``metrics`` under kgx's rules, and for a RoG/GNN-RAG file the
    authors' Hit, kgx's and theirs."""
    found = figures(pairs)
    costs = recorded_means(path)
    authored = [r for r in records if r.format == ROG]
    name = f"{NAMES.get(released.method, released.method)} (released outputs)"
    base = Entry(
        system=released.method,
        name=name,
        variant="",
        backbone=released.backbone,
        kg=kg_text("subgraph") if authored else kg_text(dataset_config(released.dataset).kg),
        metric="",
        rule="",
        value=0.0,
        spread=None,
        provenance="released outputs",
        source=released.path,
        origin=f"kgx scoring {released.path}",
        questions=len(pairs),
        calls=costs.get("llm_calls_per_q"),
        tokens=costs.get("total_tokens_per_q"),
        note=released.note,
    )
    rows = [_with(base, metric, found[metric]) for metric in metrics if metric in found]
    if authored and AUTHORS_HIT in metrics:
        hit = rog_eval.totals(authors_figures(authored))["Hit"]
        rows.append(_with(base, AUTHORS_HIT, hit, questions=len(authored)))
        stated = rog_eval.stated_totals(path)
        if stated is not None and "Hit" in stated.figures:
            rows.append(
                _with(
                    base,
                    AUTHORS_HIT,
                    stated.figures["Hit"],
                    name=NAMES.get(released.method, released.method),
                    provenance="reproduced",
                    source=f"{stated.path.name} (the authors')",
                    origin=NAMES.get(released.method, released.method),
                    questions=len(authored),
                )
            )
    return rows


def _with(base: Entry, metric: str, value: float, **changes) -> Entry:
    return replace(base, metric=metric, rule=RULE_OF[metric], value=value, **changes)


def run_entries(frame: Optional[pl.DataFrame], dataset: str, metrics: Sequence[str]) -> list[Entry]:
    """kgx's runs on ``dataset`` (RoG's subgraph files stand for theirs), one row per configuration
    and metric. A configuration's variant is its method settings that differ from the other
    configurations of that method on the board (a run carries every setting, its dataset's paper
    settings included, so the method's own defaults would name them all)."""
    if frame is None or frame.height == 0 or "params.dataset.name" not in frame.columns:
        return []
    runs = with_paper_columns(frame).filter(pl.col(DATASET_COLUMN) == dataset)
    configurations: dict[tuple, list[dict]] = defaultdict(list)
    for row in runs.to_dicts():
        method = param(row, "method.name") or "?"
        settings = {
            k[len("params.") :]: str(v)
            for k, v in row.items()
            if k.startswith("params.") and v not in (None, "None") and is_setting(k[len("params.") :], method)
        }
        configurations[tuple(sorted(settings.items()))].append(row)
    by_method: dict[str, list[dict[str, str]]] = defaultdict(list)
    for key in configurations:
        settings = dict(key)
        by_method[settings.get("method.name", "?")].append(settings)
    return [
        entry
        for key, rows in configurations.items()
        for entry in _run_rows(dict(key), _differing(dict(key), by_method), rows, dataset, metrics)
    ]


def _differing(settings: dict[str, str], by_method: dict[str, list[dict[str, str]]]) -> str:
    """The method settings in which this configuration differs from another of its method."""
    others = by_method[settings.get("method.name", "?")]
    keys = {k for other in others for k in other if k.startswith("method.")}
    varying = sorted(k for k in keys if len({other.get(k) for other in others}) > 1)
    return " ".join(f"{k}={settings[k]}" for k in varying if k in settings)


def _run_rows(
    settings: dict[str, str], differing: str, rows: list[dict], dataset: str, metrics: Sequence[str]
) -> list[Entry]:
    first = rows[0]
    method = param(first, "method.name") or "?"
    kg = param(first, "kg.name")
    on = kg_text(kg, kg_changes(settings))
    if reads_no_kg(method):
        on = NO_KG
    elif kg and not serves(first):
        on += f" (not {dataset}'s KG)"
    model = param(first, "llm.model") or ""
    stand_in = model.startswith(STAND_IN_MODELS)
    notes = []
    if is_oracle(first):
        notes.append("the oracle answers from the gold paths: a ceiling of the method's search, not an accuracy")
    elif stand_in:
        notes.append(f"{model} is one of kgx's test models: no accuracy claim")
    ids = ", ".join(r["run_id"][:8] for r in rows)
    base = Entry(
        system=method,
        name=f"{method} (kgx)",
        variant=differing,
        backbone=param(first, "llm.name") or "",
        kg=on,
        metric="",
        rule="",
        value=0.0,
        spread=None,
        provenance="kgx run",
        source=f"kgx: {count(len(rows), 'run')} ({ids})",
        origin=f"kgx runs {ids}",
        questions=_int(_mean(rows, "metrics.n_questions")),
        calls=_mean(rows, RUN_COSTS["calls"]),
        tokens=_mean(rows, RUN_COSTS["tokens"]),
        note="; ".join(notes),
        stand_in=stand_in,
    )
    out = []
    for metric in metrics:
        values = [r[f"metrics.{metric}"] for r in rows if r.get(f"metrics.{metric}") is not None]
        if values:
            spread = statistics.stdev(values) if len(values) > 1 else None
            out.append(_with(base, metric, statistics.fmean(values), spread=spread))
    return out


def _mean(rows: list[dict], column: str) -> Optional[float]:
    values = [r[column] for r in rows if r.get(column) is not None]
    return statistics.fmean(values) if values else None


def _int(value: Optional[float]) -> Optional[int]:
    return None if value is None else round(value)
