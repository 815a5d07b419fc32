"""The leaderboard's rows as the papers give them: one figure each, from the published tables.

Every file in ``kgx/report/published/`` is read (kgx.report.paper_published), whatever paper it
holds, so a new paper's figures join the board as soon as its file is there. A cell joins a
dataset's board when it is a figure over that whole test set:

* its column is the dataset (``dataset=webqsp``), not some of its questions (a column split by a
  question field, ``question.<field>=...``, or a row with several figures for one dataset: LMP's
  Table 11 by relations sampled);
* its table runs on the dataset itself, not a stand-in (CGPE's MOOC Q&A, for which MetaQA stands);
* its metric is an accuracy (kgx.core.metrics); calls and tokens per question (a paper's cost
  table) become the cost of that paper's rows of the same system and backbone.

A row's system is its kgx method (``tog``) where kgx has one, else its name as the paper prints it
without the backbone (``FiDeLiS + GPT-4`` is ``fidelis``), so that one system from several papers
sits together. Settings that differ from the method's defaults make a variant (``method.prune=bm25``).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Optional

from kgx.core.metrics import QUESTION_METRICS
from kgx.report.paper_published import TABLES, Published, load_published

ACCURACY = tuple(m for m in QUESTION_METRICS if m != "answer_recall")
AUTHORS_HIT = "hit"  # the RoG/GNN-RAG authors' Hit, under their rule (kgx.results.rog_eval)
RULE_OF = {  # a kgx metric -> the rule's name in the papers' data (kgx.report.paper_published.RULES)
    "hits1": "exact",
    "hits1_tog": "tog",
    "hit_any": "lmp",
    "em": "exact",
    "f1": "f1",
    "partial_match": "partial",
    "complete_match": "complete",
    AUTHORS_HIT: "rog",
}
ROG_RULE = "RoG's and GNN-RAG's Hit: a gold answer within the outputs joined (kgx.results.rog_eval)"
COSTS = {"llm_calls_per_q": "calls", "total_tokens_per_q": "tokens"}
PUBLISHED_KG = "as published"  # a paper's figure stands on the KG as the paper ran it
KG_TEXT = {
    "freebase": "full Freebase",
    "subgraph": "RoG subgraphs",
    "metaqa": "MetaQA KB",
    "pathquestion": "PathQuestion KB",
    "replay": "replay KG (biased)",
    "demo": "demo KG",
}
CHANGES = ("kg.noise.", "kg.drop")  # the KG settings that take triples out of it
OFF = {"0", "0.0", "false", "none", ""}  # such a setting at these values takes nothing out


@dataclass(frozen=True)
class Entry:
    """One figure of one system on the board's dataset, and where it comes from."""

    system: str  # kgx method, or the source's name for a system kgx does not have
    name: str  # as the source names the row
    variant: str  # settings apart from the method's defaults
    backbone: str  # kgx LLM config name (or the source's own); "" where none applies
    kg: str
    metric: str
    rule: str
    value: float
    spread: Optional[float]
    provenance: str  # reproduced, quoted, released outputs, kgx run
    source: str
    origin: str  # whose measurement it is: the figures of one origin are one piece of evidence
    questions: Optional[int] = None
    calls: Optional[float] = None  # LLM calls per question
    tokens: Optional[float] = None  # tokens per question
    note: str = ""
    figure_of: str = ""  # the source's own word that this is another row's figure
    stand_in: bool = False  # a kgx test model answered (oracle, scripted): no accuracy claim


def family(backbone: str) -> str:
    """The model a backbone config is a snapshot of (``gpt35_1106`` and ``gpt35`` are both ChatGPT;
    ``deepseek_v3_pinned`` is DeepSeek-V3): rows of one family sit together."""
    first = backbone.split(" ")[0]
    return re.sub(r"(_\d{4}|_pinned)$", "", first)


def system_key(name: str) -> str:
    """A system's name as a key: the paper's row without its backbone (``+ GPT-4``) or ``(Ours)``."""
    bare = re.sub(r"\s*\(ours\)\s*$", "", name.split(" + ")[0].strip(), flags=re.IGNORECASE)
    return re.sub(r"[^a-z0-9]+", "_", bare.lower()).strip("_")


def paper_name(text: str) -> str:
    """A paper as an origin: its name before the authors (``ToG (Sun et al., 2024)`` is ``ToG``)."""
    return text.split(" (")[0].strip()


@functools.lru_cache(maxsize=None)
def _defaults(method: str) -> dict[str, str]:
    from kgx.methods import METHODS  # every method's module: only when a report asks

    found = METHODS.get(method)
    return {k: str(v).lower() for k, v in vars(found.config()).items()} if found else {}


def variant(method: Optional[str], settings: dict[str, str]) -> str:
    """The ``method.*`` settings that differ from the method's defaults, as ``key=value`` words."""
    defaults = _defaults(method) if method else {}
    return " ".join(
        f"{key}={value}"
        for key, value in sorted(settings.items())
        if key.startswith("method.") and key != "method.name" and defaults.get(key[len("method.") :]) != value.lower()
    )


def kg_changes(settings: dict[str, str]) -> str:
    """The settings that take triples out of the KG (``kg.noise.*``, ``kg.drop``) and are on, as
    ``key=value`` words: the KG a figure stands on is then not the whole KG."""
    return " ".join(
        f"{key}={value}"
        for key, value in sorted(settings.items())
        if key.startswith(CHANGES) and value.lower() not in OFF
    )


def kg_text(kg: Optional[str], changes: str = "") -> str:
    """A KG in words, with what a run changed in it."""
    return KG_TEXT.get(kg or "", f"kg {kg}") + (f", {changes}" if changes else "")


@dataclass(frozen=True)
class Found:
    """The entries of a source and what a reader should know about the ones left out."""

    entries: list[Entry]
    notes: list[str]


def published_entries(dataset: str) -> Found:
    """Every published figure over ``dataset``'s whole test set (module docstring)."""
    chosen: dict[tuple, list[Published]] = defaultdict(list)
    costs: dict[tuple, dict[str, float]] = defaultdict(dict)
    stand_ins, subsets = set(), set()
    for cell in (c for cells in load_published().values() for c in cells):
        settings = {**cell.kgx_row, **cell.kgx_column}
        if settings.get("dataset.name") != dataset or cell.value is None:
            continue
        table = TABLES[cell.table]
        if table.stand_in:
            stand_ins.add(cell.table)
            continue
        if any(key.startswith("question.") for key in settings):
            subsets.add(cell.table)
            continue
        method = settings.get("method.name")
        system = method or system_key(cell.row)
        key = (paper_name(table.paper), system, variant(method, settings), kg_changes(settings), cell.backbone)
        if cell.metric in COSTS:
            costs[key][COSTS[cell.metric]] = cell.value
        elif cell.metric in ACCURACY:
            chosen[(cell.table, cell.group, cell.row, cell.backbone, cell.metric, key)].append(cell)
    entries = []
    for (_, _, _, _, _, key), cells in chosen.items():
        if len(cells) > 1:  # several figures of one row on the dataset: its columns split the questions
            subsets.add(cells[0].table)
            continue
        entry = _entry(cells[0], key)
        cost = costs.get(key, {})
        entries.append(replace(entry, calls=cost.get("calls"), tokens=cost.get("tokens")))
    notes = []
    if stand_ins:
        notes.append(
            f"not listed: {', '.join(sorted(stand_ins))} (the paper's dataset has no public copy; {dataset} stands in)"
        )
    if subsets:
        notes.append(f"not listed: the figures of {', '.join(sorted(subsets))} over some of {dataset}'s questions")
    return Found(entries, notes)


def _entry(cell: Published, key: tuple) -> Entry:
    paper, system, settings, changes, backbone = key
    table = TABLES[cell.table]
    where = f"{paper_name(table.paper)} {table.source}"
    quoted = cell.provenance == "quoted"
    # a row that is the dataset (LMP Table 3): its column and the table's title name the figure
    name = f"{cell.column} ({table.title})" if "dataset.name" in cell.kgx_row else cell.row
    return Entry(
        system=system,
        name=name,
        variant=settings,
        backbone=backbone,
        kg=PUBLISHED_KG + (f", {changes}" if changes else ""),
        metric=cell.metric,
        rule=cell.rule,
        value=cell.value,
        spread=cell.spread,
        provenance=cell.provenance,
        source=f"{where}, quoting {cell.quoted_from}" if quoted else where,
        origin=paper_name(cell.quoted_from) if quoted else paper,
        note=cell.note,
        figure_of=cell.figure_of,
    )
