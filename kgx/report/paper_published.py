"""The papers' published figures, as data: kgx's own are one CSV file per paper in
``kgx/report/published/``; a plugin's tables (registered with :func:`paper_tables`, found through the
entry-point group ``kgx.papers``) name a folder of their own.

A line is one cell of one of the papers' tables, its value copied as printed::

    table,group,row,column,value,metric,backbone,rule,kgx_row,kgx_column,provenance,quoted_from,...
    knowpath_table1,LLM only,IO prompt,CWQ,37.6 ± 0.8,hits1_tog,gpt35,tog,method=io,dataset=cwq,quoted,ToG...

* ``value`` as printed: ``37.6 ± 0.8``, ``9``, ``+46.9%``, or ``-`` where the paper has no figure.
* ``metric``: the kgx metric that implements the paper's ``rule`` (see :data:`RULES`), or a figure
  kgx has no metric for (``gain_pct``, derived from other cells).
* ``backbone``: the kgx LLM config the paper's backbone is (``gpt35``), with per-stage backbones
  after it (``chatglm3_6b answer=gpt35``); a backbone kgx has no config for keeps its own name
  (``llama2_70b``); empty where none applies (fine-tuned models).
* ``kgx_row`` and ``kgx_column``: the run params that make the cell in kgx (``method=knowpath
  method.ipg=false``, ``dataset=cwq``); an empty ``kgx_row`` is a row kgx has no method for.

Every line is checked when the files are read; a malformed one is a :class:`PublishedError`
naming the file and line. The tables themselves (their papers, titles, files and the runs that make
them, ``conf/paper/<table>.yaml``) are :data:`TABLES`.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from kgx.core.metrics import QUESTION_METRICS
from kgx.core.registry import Registry
from kgx.report.runs import ReportError, full_key

PUBLISHED_DIR = Path(__file__).resolve().parent / "published"
FIELDS = (
    "table",
    "group",
    "row",
    "column",
    "value",
    "metric",
    "backbone",
    "rule",
    "kgx_row",
    "kgx_column",
    "provenance",
    "quoted_from",
    "figure_of",
    "note",
)
PROVENANCE = {
    "reproduced": "the paper's authors' own run, as far as the papers show",
    "quoted": "copied from another paper, named",
    "derived": "computed from other cells of the table",
}

# The papers' evaluation rules, and the kgx metric of each where kgx has one.
RULES = {
    "tog": "ToG's exact match: a gold alias contained in the braced answer, or the answer in it (hits1_tog)",
    "lmp": "LMP's hit: the output mentions a gold answer, or a listed answer lies in one (hit_any)",
    "exact": "Hits@1: the top answer is a gold answer (hits1)",
    "human": "CGPE's Judge sets: each answer judged by people (kgx: hits1 on its stand-in)",
    "partial": "CGPE's partial match: one or more gold answers among the answers (partial_match)",
    "complete": "CGPE's complete match: every gold answer among the answers (complete_match)",
    "mean": "a mean per question (LLM calls, tokens, seconds, retries)",
    "f1": "F1 of the answers against the gold answers (f1)",
    "share": "a share of the questions, in percent",
    "gain": "a relative gain in percent, derived from other cells of the table (kgx's from kgx's cells)",
}
COST_METRICS = ("llm_calls_per_q", "total_tokens_per_q", "input_tokens_per_q", "latency_s_per_q")
# Figures per question the report derives from a run's totals: name -> (total, count). A parse
# failure is an output that did not parse or validate; kgx asks again, warmer (llm.parse_retries,
# llm.retry_temperature_step), which is LMP's retry (its Appendix A.7, Table 6).
PER_QUESTION = {"parse_failures_per_q": ("parse_failures", "n_questions")}
KGX_METRICS = frozenset(QUESTION_METRICS) | frozenset(COST_METRICS) | frozenset(PER_QUESTION)
VALUE = re.compile(r"^(?P<num>[+-]?\d+(?:\.\d+)?)(?P<pct>%)?(?:\s*±\s*(?P<spread>\d+(?:\.\d+)?))?$")
NAME = re.compile(r"^[a-z0-9_]+$")
SETTING = re.compile(r"^[A-Za-z0-9_.+/-]+=[^\s=]+$")


class PublishedError(ReportError):
    """A published-figures file that cannot be read: the message names the file and the line."""


@dataclass(frozen=True)
class PaperTable:
    """One of the papers' tables: where it is printed, what it shows, why kgx's cells may stand for
    other questions than the paper's (``stand_in``), and the folder whose CSV files hold its cells."""

    name: str
    paper: str
    source: str
    title: str
    stand_in: str = ""
    folder: Path = PUBLISHED_DIR


# kgx's own tables and every installed package's, through the entry-point group ``kgx.papers``.
TABLES: Registry[PaperTable] = Registry("paper table", "kgx.papers")


def paper_tables(folder: Path, *tables: PaperTable) -> None:
    """Register ``tables``, whose published cells are lines of the CSV files in ``folder``, and
    whose sweeps are ``+paper=<name>`` (a plugin's ``kgx_conf/paper/<name>.yaml``)."""
    for table in tables:
        TABLES.register(table.name, dataclasses.replace(table, folder=folder), str(folder))


CGPE_STAND_IN = (
    "MOOC Q&A, CGPE's dataset, has no public copy: kgx's figures are on MetaQA (1-hop for the 1-hop sets, 2-hop "
    "for the multi-hop one), so a difference is no reproduction gap and no interval is compared"
)
paper_tables(
    PUBLISHED_DIR,
    PaperTable("knowpath_table1", "KnowPath (Zhao et al.)", "Table 1", "Hits@1 (%) of the methods on four datasets"),
    PaperTable("knowpath_table2", "KnowPath (Zhao et al.)", "Table 2", "ablations: w/o IPG, w/o SE, the base"),
    PaperTable("knowpath_cost", "KnowPath (Zhao et al.)", "Tables 3-6", "LLM calls, tokens and seconds per question"),
    PaperTable("lmp_table1", "LMP (Wan et al.)", "Table 1", "exact match accuracy (%) on five datasets"),
    PaperTable("lmp_table2", "LMP (Wan et al.)", "Table 2", "exact match accuracy (%) per LLM backbone"),
    PaperTable("lmp_table3", "LMP (Wan et al.)", "Table 3", "accuracy (%) under noise in the KG"),
    PaperTable("lmp_table4", "LMP (Wan et al.)", "Table 4", "LLM calls and tokens per question (ChatGPT)"),
    PaperTable("lmp_table5", "LMP (Wan et al.)", "Table 5", "accuracy (%) of LMP's variants (ChatGPT)"),
    PaperTable("lmp_table6", "LMP (Wan et al.)", "Table 6", "retries per question (Llama-3)"),
    PaperTable("lmp_table8", "LMP (Wan et al.)", "Table 8", "F1 (%) of the models"),
    PaperTable("lmp_table9", "LMP (Wan et al.)", "Table 9", "accuracy (%) by relation sampling method"),
    PaperTable("lmp_table10", "LMP (Wan et al.)", "Table 10", "questions (%) with all/partial/no correct relations"),
    PaperTable("lmp_table11", "LMP (Wan et al.)", "Table 11", "facts' accuracy (%) by correct relations sampled"),
    PaperTable("lmp_table12", "LMP (Wan et al.)", "Table 12", "final accuracy (%) with and without correct facts"),
    PaperTable("lmp_figure4", "LMP (Wan et al.)", "Figure 4", "CWQ by question type (a) and depth (b), ChatGPT"),
    PaperTable("cgpe_table1", "CGPE (Tao et al.)", "Table 1", "results on the question sets", CGPE_STAND_IN),
    PaperTable("cgpe_table2", "CGPE (Tao et al.)", "Table 2", "LLM calls per question", CGPE_STAND_IN),
    PaperTable("cgpe_table3", "CGPE (Tao et al.)", "Table 3", "ablations on the 1-hop Judge set", CGPE_STAND_IN),
    PaperTable("cgpe_table4", "CGPE (Tao et al.)", "Table 4", "a backbone per stage (CE, PE, A)", CGPE_STAND_IN),
    PaperTable("tog_table1", "ToG (Sun et al.), as the other papers quote it", "Table 1", "the baselines' Hits@1 (%)"),
    PaperTable("paths_over_graph_table1", "Paths-over-Graph (Tan et al.)", "Table 1", "Hits@1 (%) of PoG and PoG-E"),
    PaperTable("gog_table1", "GoG (Xu et al.)", "Table 1", "Hits@1 (%) on CWQ and WebQSP, complete KG"),
    PaperTable("fidelis_table1", "FiDeLiS (Sui et al.)", "Table 1", "Hits@1 (%) on RoG's WebQSP and CWQ subgraphs"),
)


@dataclass(frozen=True)
class Published:
    """One published cell: the paper's words and figure, and the kgx run params that make it."""

    table: str
    group: str
    row: str
    column: str
    text: str  # the value as printed
    value: Optional[float]  # None: the paper prints no figure ("-")
    spread: Optional[float]  # the paper's "± x"
    metric: str
    backbone: str
    rule: str
    kgx_row: dict[str, str]
    kgx_column: dict[str, str]
    provenance: str  # reproduced, quoted or derived (PROVENANCE)
    quoted_from: str  # the paper a quoted figure comes from
    figure_of: str  # whose figure it is, where it is another row's
    note: str
    where: str  # file:line

    @property
    def selector(self) -> dict[str, str]:
        """The params a kgx run of this cell has (full keys), backbone aside; empty: kgx has no such method."""
        return {**self.kgx_row, **self.kgx_column} if self.kgx_row else {}

    @property
    def derived(self) -> bool:
        """A figure the paper computes from other cells of its table (kgx.report.paper_derived)."""
        return self.rule == "gain"


def settings(text: str, where: str, field: str) -> dict[str, str]:
    """``key=value key=value`` as full param keys (``method`` is ``method.name``)."""
    found = {}
    for token in text.split():
        if not SETTING.match(token):
            raise PublishedError(f"{where}: {field} '{text}': '{token}' is not key=value")
        key, value = token.split("=", 1)
        found[full_key(key)] = value
    return found


def check_backbone(text: str, where: str) -> None:
    """``llm`` or ``llm stage=llm ...``: LLM config names in kgx's spelling (lower case, ``_``)."""
    words = text.split()
    if words and (not NAME.match(words[0]) or any(not re.match(r"^[a-z_]+=[a-z0-9_]+$", w) for w in words[1:])):
        raise PublishedError(
            f"{where}: backbone '{text}': expected an LLM config name (gpt35), then stage=name pairs "
            "(chatglm3_6b answer=gpt35)"
        )


def check_provenance(fields: dict[str, str], where: str) -> None:
    """A figure's provenance is one of PROVENANCE; a quoted one names its paper, and a derived
    one is exactly a figure of the ``gain`` rule."""
    kind = fields["provenance"]
    if kind not in PROVENANCE:
        raise PublishedError(f"{where}: provenance '{kind}' is none of {', '.join(PROVENANCE)}")
    if (kind == "quoted") != bool(fields["quoted_from"].strip()):
        raise PublishedError(
            f"{where}: quoted_from '{fields['quoted_from']}' goes with provenance 'quoted' only, which must name "
            "the paper it quotes"
        )
    if (kind == "derived") != (fields["rule"] == "gain"):
        raise PublishedError(f"{where}: provenance 'derived' goes with rule 'gain' and only with it")


def parse(fields: dict[str, str], where: str) -> Published:
    """One line of a published-figures file, checked field by field."""
    if fields["table"] not in TABLES:
        raise PublishedError(f"{where}: table '{fields['table']}' is none of {', '.join(TABLES)}")
    for name in ("row", "column", "value", "metric", "rule"):
        if not fields[name].strip():
            raise PublishedError(f"{where}: field '{name}' is empty")
    text = fields["value"].strip()
    match = VALUE.match(text)
    if text != "-" and not match:
        raise PublishedError(
            f"{where}: value '{text}' is not a figure as printed (37.6, 37.6 ± 0.8, +46.9%) or '-' for none"
        )
    if fields["rule"] not in RULES:
        raise PublishedError(f"{where}: rule '{fields['rule']}' is none of {', '.join(RULES)}")
    check_backbone(fields["backbone"], where)
    kgx_row = settings(fields["kgx_row"], where, "kgx_row")
    kgx_column = settings(fields["kgx_column"], where, "kgx_column")
    if kgx_row and fields["metric"] not in KGX_METRICS:
        raise PublishedError(
            f"{where}: metric '{fields['metric']}' is no kgx metric ({', '.join(sorted(KGX_METRICS))}); a cell "
            "kgx cannot make has an empty kgx_row"
        )
    check_provenance(fields, where)
    if kgx_row and not fields["backbone"]:
        raise PublishedError(f"{where}: a cell kgx makes (kgx_row '{fields['kgx_row']}') needs its backbone")
    return Published(
        table=fields["table"],
        group=fields["group"],
        row=fields["row"],
        column=fields["column"],
        text=text,
        value=float(match["num"]) if match else None,
        spread=float(match["spread"]) if match and match["spread"] else None,
        metric=fields["metric"],
        backbone=fields["backbone"],
        rule=fields["rule"],
        kgx_row=kgx_row,
        kgx_column=kgx_column,
        provenance=fields["provenance"],
        quoted_from=fields["quoted_from"],
        figure_of=fields["figure_of"],
        note=fields["note"],
        where=where,
    )


def read_file(path: Path) -> list[Published]:
    """Every line of one file, in order; the first malformed line stops the read, named."""
    with path.open(encoding="utf-8", newline="") as handle:
        lines = list(csv.reader(handle))
    if not lines or tuple(lines[0]) != FIELDS:
        raise PublishedError(f"{path}:1: the header must be {','.join(FIELDS)}")
    cells: list[Published] = []
    seen: dict[tuple[str, str, str, str], str] = {}
    for number, line in enumerate(lines[1:], start=2):
        where = f"{path}:{number}"
        if len(line) != len(FIELDS):
            raise PublishedError(f"{where}: {len(line)} fields, expected {len(FIELDS)} ({','.join(FIELDS)})")
        cell = parse(dict(zip(FIELDS, line)), where)
        key = (cell.table, cell.group, cell.row, cell.column)
        if key in seen:
            raise PublishedError(f"{where}: the cell {' / '.join(key)} is given again (first at {seen[key]})")
        seen[key] = where
        cells.append(cell)
    return cells


@functools.lru_cache(maxsize=None)
def load_published() -> dict[str, tuple[Published, ...]]:
    """Every published cell by table, in file order (the paper's reading order), from the folder
    of every registered table."""
    by_table: dict[str, list[Published]] = {name: [] for name in TABLES}
    for folder in dict.fromkeys(t.folder for t in TABLES.values()):
        for path in sorted(folder.glob("*.csv")):
            for cell in read_file(path):
                by_table[cell.table].append(cell)
    return {name: tuple(cells) for name, cells in by_table.items()}


def paper_table(name: str) -> tuple[PaperTable, tuple[Published, ...]]:
    """A table and its published cells; an unknown name lists the tables."""
    if name not in TABLES:
        listed = "\n".join(f"  {t.name:<16} {t.paper} {t.source}: {t.title}" for t in TABLES.values())
        raise ReportError(f"no paper table '{name}'; the tables:\n{listed}")
    return TABLES[name], load_published()[name]
