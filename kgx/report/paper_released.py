"""The authors' released per-question outputs, scored by kgx under the paper's rule, as runs of a table.

``$KGX_DATA_DIR/reference_outputs/`` holds LMP's, PoG's and AoG's released outputs (see the data
README). Each file is one configuration (method, dataset, backbone); kgx.results.released reads
and scores it, the same code as ``python -m kgx.score``, and the figures become one row of a
frame shaped like kgx.report.runs' (``params.*``, ``metrics.*``), so that a paper's table fills
from them as from kgx's own runs. PoG and AoG also record each question's LLM calls, tokens and
seconds; their means fill the cost tables.

Where the paper's rule reads inputs kgx's data does not have, the figure says so in its note:
PoG's evaluation adds alias files (``cope_alias/``) that were never released with the data.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

import polars as pl

from kgx.core import paths
from kgx.core.config import ConfigError
from kgx.datasets import DataError, dataset_config, load
from kgx.datasets.files import json_lines
from kgx.report.paper_cells import backbone_key
from kgx.report.paper_published import Published
from kgx.results.released import RULES, match, read_predictions, summary

FOLDER = "reference_outputs"
COSTS = {  # a released record's field -> kgx's metric
    "call_num": "llm_calls_per_q",
    "total_token": "total_tokens_per_q",
    "input_token": "input_tokens_per_q",
    "time": "latency_s_per_q",
}
SOURCES = {  # where each folder's files come from (the authors' repositories)
    "lmp": "github.com/wanjunhong0/LMP",
    "pog": "github.com/liyichen-cly/PoG",
    "aog": "github.com/xuduyinuo/AoG",
}
VERDICT = "correct"  # AoG's own per-question verdict; its share is shown beside kgx's score
POG_ALIASES = (
    "PoG's own evaluation also reads {files} (its cope_alias/ folder), which kgx's data does not have: "
    "kgx scores with the dataset's own answer names"
)


@dataclass(frozen=True)
class Released:
    """One released file and the configuration it is the output of."""

    path: str  # under $KGX_DATA_DIR/reference_outputs
    method: str
    dataset: str
    backbone: str
    rule: str  # kgx.results.released's rule: exact, tog or lmp
    note: str = ""


RELEASED = (
    Released("lmp/lmp_webqsp_gpt-4_1hop.jsonl", "lmp", "webqsp", "gpt4", "lmp"),
    Released("lmp/lmp_webqsp_gpt-3.5-turbo_1hop.jsonl", "lmp", "webqsp", "gpt35", "lmp"),
    Released("lmp/lmp_webqsp_llama-3_1hop.jsonl", "lmp", "webqsp", "llama3_70b", "lmp", "the file names Llama-3"),
    Released("lmp/lmp_simpleqa_gpt-4_1hop.jsonl", "lmp", "simpleqa", "gpt4", "lmp"),
    Released("lmp/lmp_grailqa_llama-3_3hop.jsonl", "lmp", "grailqa", "llama3_70b", "lmp", "the file names Llama-3"),
    Released("lmp/lmp_webquestions_gpt-3.5-turbo_2hop.jsonl", "lmp", "webquestions", "gpt35", "lmp"),
    Released(
        "pog/PoG_cwq_gpt-3.5-turbo-0125.jsonl",
        "pog",
        "cwq",
        "gpt35",
        "tog",
        POG_ALIASES.format(files="CWQ_aliase_data31158.json and ComplexWebQuestions_test_wans.json"),
    ),
    Released(
        "pog/PoG_webqsp_gpt-3.5-turbo-0125.jsonl",
        "pog",
        "webqsp",
        "gpt35",
        "tog",
        POG_ALIASES.format(files="WQSP_aliase_data.json"),
    ),
    Released("pog/PoG_grailqa_gpt-3.5-turbo-0125.jsonl", "pog", "grailqa", "gpt35", "tog"),
    Released("aog/AoG_webqsp_qwen3-max.jsonl", "aog", "webqsp", "qwen3_max", "tog"),
    Released("aog/AoG_simpleqa_qwen3-max.jsonl", "aog", "simpleqa", "qwen3_max", "tog"),
    Released("aog/AoG_grailqa_qwen3-max.jsonl", "aog", "grailqa", "qwen3_max", "tog"),
)


def fills(released: Released, cell: Published) -> bool:
    """Whether the file is the output of the cell's configuration: the method at its defaults, on
    the cell's dataset, with its backbone, scored by the cell's rule's metric."""
    wanted = {"method.name": released.method, "dataset.name": released.dataset}
    return (
        cell.selector == wanted
        and backbone_key(cell.backbone) == released.backbone
        and cell.metric in (RULES[released.rule], *COSTS.values())
    )


def relevant(cells: Sequence[Published]) -> list[Released]:
    """The released files that fill some of ``cells``."""
    return [r for r in RELEASED if any(fills(r, c) for c in cells)]


@dataclass
class Scored:
    """A released file's figures, or why there are none."""

    released: Released
    metrics: dict[str, float]
    note: str


def score(released: Released, questions: dict[str, list]) -> Scored:
    """The file scored under its rule, with its cost means; ``questions`` caches the datasets."""
    path = paths.resolve(f"{FOLDER}/{released.path}")
    if not path.is_file():
        source = SOURCES[released.path.split("/")[0]]
        return Scored(released, {}, f"not found: {path} (the authors' released outputs: {source})")
    try:
        if released.dataset not in questions:
            questions[released.dataset] = load(dataset_config(released.dataset, whole=True))
        gold = questions[released.dataset]
        records = read_predictions(path).records
    except (ConfigError, DataError) as exc:
        return Scored(released, {}, str(exc))
    pairs, _ = match(records, gold)
    hits, f1 = summary(pairs, released.rule)
    figures = {RULES[released.rule]: hits, "f1": f1, "n_questions": float(len(pairs))}
    figures.update(recorded_means(path))
    notes = [released.note] if released.note else []
    if len(pairs) < len(gold):
        notes.append(f"{len(gold) - len(pairs)} of {len(gold)} questions have no released answer")
    return Scored(released, figures, "; ".join(notes))


def recorded_means(path: Path) -> dict[str, float]:
    """The means of the per-question figures the file records: cost (PoG, AoG) and the authors'
    own verdict (AoG's ``correct``, in percent); none for files without them."""
    found: dict[str, list[float]] = {}
    for _, row in json_lines(path, check_strings=False):
        for field, metric in COSTS.items():
            if isinstance(row.get(field), (int, float)) and not isinstance(row.get(field), bool):
                found.setdefault(metric, []).append(float(row[field]))
        if isinstance(row.get(VERDICT), bool):
            found.setdefault(VERDICT, []).append(100.0 * row[VERDICT])
    return {metric: statistics.fmean(values) for metric, values in found.items()}


def score_all(which: Iterable[Released]) -> list[Scored]:
    questions: dict[str, list] = {}
    return [score(r, questions) for r in which]


def as_runs(scored: Sequence[Scored]) -> Optional[pl.DataFrame]:
    """Scored files as a frame of runs (kgx.report.runs' columns); None when none has figures."""
    rows = [
        {
            "run_id": s.released.path,
            "start_time": 0,
            "params.method.name": s.released.method,
            "params.dataset.name": s.released.dataset,
            "params.llm.name": s.released.backbone,
            "tags.note": f"released output {s.released.path}" + (f"; {s.note}" if s.note else ""),
            **{f"metrics.{k}": v for k, v in s.metrics.items()},
        }
        for s in scored
        if s.metrics
    ]
    return pl.from_dicts(rows, infer_schema_length=None) if rows else None


def described(scored: Sequence[Scored]) -> str:
    """Which files a table's figures come from, and why any of them gave none."""
    used = [s.released.path for s in scored if s.metrics]
    failed = [f"{s.released.path}: {s.note}" for s in scored if not s.metrics]
    text = f"the authors' released outputs, scored by kgx under the paper's rule ({', '.join(used) or 'none'})"
    return text + (f"; not scored: {'; '.join(failed)}" if failed else "")


def listing(scored: Sequence[Scored], cells: dict[str, Sequence[Published]]) -> str:
    """Every released file: its configuration, kgx's figures under its rule, and the cells it fills."""
    lines = [f"released outputs under {paths.data_dir() / FOLDER}, scored by kgx (kgx.results.released):"]
    for s in scored:
        r = s.released
        figures = ", ".join(
            f"{k}={v:.1f}" + (" (the file's own verdicts)" if k == VERDICT else "")
            for k, v in s.metrics.items()
            if k != "n_questions"
        )
        filled = [
            f"{c.table} {c.row} / {c.column}"
            for t in cells.values()
            for c in t
            if fills(r, c) and c.metric in s.metrics
        ]
        lines.append(f"  {r.path}: {r.method} on {r.dataset} with {r.backbone}, rule {r.rule}")
        lines.append(f"    {figures or 'no figures'}" + (f" ({s.note})" if s.note else ""))
        lines.append(f"    fills: {'; '.join(filled) if filled else 'no cell of the recorded tables'}")
    return "\n".join(lines) + "\n"
