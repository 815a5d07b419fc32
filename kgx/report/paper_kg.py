"""The KG and the settings a paper cell's runs ran on: which runs may make a cell, and what they say.

A cell's identity is method × dataset × KG kind × backbone × settings. The papers ran on
Freebase; a run makes a cell of theirs when its KG serves its dataset:

* the dataset's own KG (``dataset.kg``: Freebase for CWQ and WebQSP, MetaQA's KB for MetaQA), or
  any SPARQL endpoint for a Freebase dataset (``kg=sparql kg.endpoint=...``);
* RoG's per-question subgraphs (``dataset=webqsp_rog`` or ``cwq_rog`` with ``kg=subgraph``, their own
  KG): these fill the WebQSP and CWQ columns, marked as on RoG subgraphs, with how many of the
  test set's questions they hold (RoG's WebQSP file has 1,628 of WebQSP's 1,639).

A run on a KG that does not serve its dataset (the demo KG, another dataset's KG, the replay KG
built from published reasoning chains) makes no cell: its questions fall back, or meet a KG biased
toward their answers. The reader may ask for such runs by name (``--kg replay``), and the cell
then says so. Methods that read no KG (io, cot, sc) answer the same on any KG: their KG is no part
of their cells' identity. The oracle backbone (``llm=oracle``) answers from a KG's gold paths: it
gives no figure for a method that reads no KG (the cell is ``n/a``), and a figure it gives is a
ceiling of the method's search, which the cell's note says.

Runs of one cell that differ in anything but their seed and execution settings (another KG,
``dataset.sample``, a method setting) are not one configuration: the cell is not filled, and one
line says what differs and how to choose.
"""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass, fields, is_dataclass
from typing import Optional

import polars as pl

from kgx.core.config import Config, LLMConfig
from kgx.report.runs import REPLICATE_GROUP

# RoG's subgraph files of a paper's test set -> that test set (conf/dataset/*_rog.yaml).
ROG = {"webqsp_rog": "webqsp", "cwq_rog": "cwq"}
# Questions of the test sets as kgx has them (conf/dataset/webqsp.yaml, cwq.yaml), the papers' sets.
TEST_SET = {"webqsp": 1639, "cwq": 3531}
ORACLE_MODEL = "kgx-oracle/"  # conf/llm/oracle.yaml
DATASET_COLUMN = "paper_dataset"  # the paper's dataset a run stands for (RoG's files stand for theirs)
KG_COLUMN = "paper_kg"  # the run's KG, as a cell's note names it
# Params that describe a run without changing what it computes: where its data comes from, its price.
DESCRIPTIVE = frozenset({"dataset.source", "input_cost_per_token", "output_cost_per_token"})


@dataclass(frozen=True)
class Candidates:
    """The runs that may make a cell on the KG asked for, and a sentence on the ones left out."""

    runs: pl.DataFrame
    left_out: str = ""


@functools.lru_cache(maxsize=None)
def execution_keys() -> frozenset[str]:
    """The params that say how a run executes, not what it computes (kgx.core.run_identity's
    ``execution`` fields): they do not set configurations of a cell apart."""

    def walk(cls: type, prefix: str) -> set[str]:
        hints = typing.get_type_hints(cls)
        found = set()
        for f in fields(cls):
            if not f.metadata.get("result", True):
                found.add(prefix + f.name)
            elif is_dataclass(hints.get(f.name)):
                found |= walk(hints[f.name], f"{prefix}{f.name}.")
        return found

    keys = walk(Config, "")
    stages = {f"llm_stages.*.{k[len('llm.') :]}" for k in walk(LLMConfig, "llm.")}
    return frozenset(keys | stages)


@functools.lru_cache(maxsize=None)
def reads_no_kg(method: str) -> bool:
    """Whether a method answers from the question alone (io, cot, sc: no horizon in a KG)."""
    from kgx.methods import METHODS  # every method's module: only when a report asks

    found = METHODS.get(method)
    return found is not None and found.config().horizon() is None


def is_setting(key: str, method: str) -> bool:
    """Whether param ``key`` sets a run's configuration apart (``run.``, execution fields and
    descriptions do not; the KG does not for a method that reads none)."""
    if key.startswith(REPLICATE_GROUP) or key.startswith("settings."):
        return False
    if reads_no_kg(method) and key.startswith("kg."):
        return False
    if key in DESCRIPTIVE or key.rsplit(".", 1)[-1] in DESCRIPTIVE:
        return False
    parts = key.split(".")
    staged = ".".join(["llm_stages", "*", *parts[2:]]) if parts[0] == "llm_stages" else ""
    return key not in execution_keys() and staged not in execution_keys()


def with_paper_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the paper dataset each run stands for and its KG, as columns."""
    name = pl.col("params.dataset.name") if "params.dataset.name" in frame.columns else pl.lit(None, pl.String)
    kg = pl.col("params.kg.name") if "params.kg.name" in frame.columns else pl.lit(None, pl.String)
    return frame.with_columns(name.replace(ROG).alias(DATASET_COLUMN), kg.alias(KG_COLUMN))


def param(row: dict, key: str) -> Optional[str]:
    value = row.get(f"params.{key}")
    return None if value in (None, "None", "") else value


def serves(row: dict) -> bool:
    """Whether a run's KG holds its dataset's entities: the dataset's own KG, or an endpoint for
    a Freebase dataset (module docstring)."""
    own = param(row, "dataset.kg")
    kg = param(row, "kg.name")
    if own is None or kg is None:  # released outputs and runs of other tools: their KG is their paper's
        return True
    return kg == own or (own == "freebase" and param(row, "kg.backend") == "endpoint")


def candidates(runs: pl.DataFrame, method: str, kg: Optional[str]) -> Candidates:
    """The runs of a cell on the KG asked for: ``kg`` by name (``--kg``), else a KG that serves
    the run's dataset; a method that reads no KG keeps all. The others are counted in a sentence."""
    if reads_no_kg(method) or runs.height == 0:
        return Candidates(runs)
    rows = runs.to_dicts()
    keep = [(row.get(KG_COLUMN) == kg) if kg else serves(row) for row in rows]
    dropped = [row.get(KG_COLUMN) or "?" for row, kept in zip(rows, keep) if not kept]
    if not dropped:
        return Candidates(runs)
    kgs = ", ".join(sorted(set(dropped)))
    if kg:
        text = f"{len(dropped)} run(s) on kg {kgs} left out: --kg {kg} asks for kg {kg}"
    else:
        text = (
            f"{len(dropped)} run(s) on kg {kgs} left out: that KG does not serve the dataset (its topic entities "
            f"are missing, or it is biased toward their answers); --kg {sorted(set(dropped))[0]} shows such runs"
        )
    return Candidates(runs.filter(pl.Series(keep)), text)


def differences(runs: pl.DataFrame, method: str) -> dict[str, list[str]]:
    """The settings that take more than one value among ``runs``, with their values."""
    out = {}
    for column in runs.columns:
        key = column[len("params.") :]
        if column.startswith("params.") and is_setting(key, method):
            values = sorted({"-" if v in (None, "None") else str(v) for v in runs[column].to_list()})
            if len(values) > 1:
                out[key] = values
    return out


def mixed_line(differ: dict[str, list[str]], configurations: int) -> str:
    """The one line a cell whose runs are several configurations gets: what differs, how to choose."""
    shown = "; ".join(f"{key}: {' | '.join(values)}" for key, values in list(differ.items())[:4])
    more = f" and {len(differ) - 4} more" if len(differ) > 4 else ""
    fix = "--kg NAME chooses a KG" if any(k.startswith("kg.") for k in differ) else "--parent SWEEP chooses one sweep"
    return (
        f"not filled: {configurations} configurations ran for this cell, differing in {shown}{more}; "
        f"{fix} (--parent SWEEP takes one sweep's runs)"
    )


def is_oracle(row: dict) -> bool:
    return (param(row, "llm.model") or "").startswith(ORACLE_MODEL)


def run_notes(row: dict, questions: Optional[int], method: str, asked: Optional[str]) -> tuple[list[str], str]:
    """What a cell made of this configuration's runs stands on, in its notes and in a few words
    for the cell itself: RoG's subgraphs (with how many of the test set's questions), a KG the
    reader asked for that does not serve the dataset, the oracle's ceiling in place of a backbone."""
    notes, marks = [], []
    dataset = param(row, "dataset.name") or ""
    if dataset in ROG:
        total = TEST_SET[ROG[dataset]]
        of = f"{questions:,} of the test set's {total:,} questions" if questions else f"of the test set's {total:,}"
        if reads_no_kg(method):
            notes.append(f"on the questions of RoG's subgraph files ({of})")
        else:
            notes.append(f"on RoG subgraphs ({of})")
            marks.append("RoG subgraphs")
    kg = row.get(KG_COLUMN)
    if asked and not reads_no_kg(method) and not serves(row):
        notes.append(f"on kg {kg}, which does not serve {dataset} (asked for with --kg {asked}): no accuracy claim")
        marks.append(f"kg {kg}")
    if is_oracle(row):
        notes.append(
            f"the oracle (llm=oracle, answering from the gold paths) stood in for the backbone on kg {kg}: "
            "a ceiling of the method's search, not an accuracy"
        )
        marks.append("oracle")
    return notes, ", ".join(marks)
