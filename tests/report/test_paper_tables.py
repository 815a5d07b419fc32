"""Paper tables: every ``+paper=`` table composes for every cell and makes the cells its published
figures name; the published figures load and a malformed line is named; ``kgx.report paper`` lays a
small real sweep (``llm=scripted``, questions written here) out as the paper does, and fills cells
from released outputs; a table refuses to start without its data, and an unknown one lists them."""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

import polars as pl
import pytest
import yaml
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import MissingConfigException
from mlflow.tracking import MlflowClient

from kgx.core.paths import CONF_DIR
from kgx.report.__main__ import main as report_main
from kgx.report.paper_cells import Inputs, compare, wilson
from kgx.report.paper_layout import paper_text
from kgx.report.paper_published import TABLES, PublishedError, load_published, paper_table, read_file
from kgx.report.paper_report import paper_report
from kgx.report.runs import ReportError
from kgx.report.sweep_summary import html_report
from kgx.run.compose import register_schemas
from kgx.run.spec import to_run_spec
from kgx.run.sweep import job_overrides
from kgx.track.tracker import run_params
from tests.inprocess import Done, kgx_main

COUNTS = {
    "knowpath_table1": 60,
    "knowpath_table2": 16,
    "knowpath_cost": 48,
    "lmp_table1": 80,
    "lmp_table2": 72,
    "lmp_table3": 12,
    "lmp_table4": 12,
    "lmp_table5": 10,
    "lmp_table6": 4,
    "lmp_table8": 12,
    "lmp_table9": 12,
    "lmp_table10": 12,
    "lmp_table11": 12,
    "lmp_table12": 8,
    "lmp_figure4": 24,
    "cgpe_table1": 56,
    "cgpe_table2": 18,
    "cgpe_table3": 8,
    "cgpe_table4": 14,
    "tog_table1": 35,
    "fidelis_table1": 2,
    "gog_table1": 44,
    "paths_over_graph_table1": 20,
}
# Composing a job costs ~0.2 s (Hydra/OmegaConf), hundreds of jobs in all: one small table of each paper
# is checked in the quick tier (pytest -m "not slow"), every table in CI.
RELEASED_TABLES = {"knowpath_table1", "knowpath_cost", "lmp_table1", "lmp_table2"}  # the cells released outputs fill
QUICK = {"knowpath_table2", "lmp_table5", "cgpe_table3"}
TABLES_BY_COST = [name if name in QUICK else pytest.param(name, marks=pytest.mark.slow) for name in sorted(COUNTS)]
KGX_BACKBONES = {p.stem for p in (CONF_DIR / "llm").glob("*.yaml")}
CWQ = [
    {
        "ID": "cwq-1",
        "question": "Which country is Canberra the capital of?",
        "answer": "Australia",
        "compositionality_type": "composition",
        "topic_entity": {"m.0dplh": "Canberra"},
    },
    {
        "ID": "cwq-2",
        "question": "Who wrote the play Hamlet?",
        "answer": "William Shakespeare",
        "compositionality_type": "composition",
        "topic_entity": {"m.0ds5f": "Hamlet"},
    },
]
WEBQSP = [
    {
        "QuestionId": "WebQTest-1",
        "RawQuestion": "who influenced samuel taylor coleridge?",
        "answer": ["Immanuel Kant"],
        "topic_entity": {"m.078w2": "Samuel Taylor Coleridge"},
    },
    {
        "QuestionId": "WebQTest-2",
        "RawQuestion": "where is the columbia river?",
        "answer": ["Columbia Lake"],
        "topic_entity": {"m.01lsl": "Columbia River"},
    },
]


def write_data(root: Path) -> Path:
    """Demo-sized data in the shared data's layout: two CWQ and two WebQSP questions, LMP's and
    PoG's released outputs on the WebQSP two."""
    (root / "freebase_qa").mkdir(parents=True)
    (root / "freebase_qa" / "cwq.json").write_text(json.dumps(CWQ))
    (root / "freebase_qa" / "cwq_aliases.json").write_text("{}")
    (root / "freebase_qa" / "WebQSP.json").write_text(json.dumps(WEBQSP))
    lmp = [
        {"question": "who influenced samuel taylor coleridge?", "result": "1. Immanuel Kant\n2. John Milton"},
        {"question": "where is the columbia river?", "result": "1. Canada"},
    ]
    pog = [
        {"RawQuestion": q["RawQuestion"], "results": json.dumps({"A": {"Answer": a}}), "call_num": n}
        | {"total_token": 100 * n, "input_token": 90 * n, "time": 2.0 * n}
        for q, a, n in zip(WEBQSP, ["Immanuel Kant", "Columbia Lake"], [8, 10])
    ]
    for name, records in (("lmp/lmp_webqsp_gpt-4_1hop.jsonl", lmp), ("pog/PoG_webqsp_gpt-3.5-turbo-0125.jsonl", pog)):
        path = root / "reference_outputs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return root


def kgx(cwd: Path, data: Path, *args: str) -> Done:
    return kgx_main(cwd, *args, env={"KGX_DATA_DIR": str(data)})


# --------------------------------------------------------------------------- the tables' sweeps


@functools.lru_cache(maxsize=None)
def composed(name: str) -> tuple[tuple[tuple[str, ...], dict[str, str]], ...]:
    """Every job of a table, composed in process as the sweep's callback composes it: its overrides
    and its run params."""
    register_schemas()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        table = compose(config_name="config", overrides=[f"+paper={name}"], return_hydra_config=True)
        jobs = [(tuple(o), to_run_spec(compose(config_name="config", overrides=o), o)) for o in job_overrides(table)]
    GlobalHydra.instance().clear()
    return tuple((overrides, run_params(spec.resolved())) for overrides, spec in jobs)


def params(name: str) -> list[dict[str, str]]:
    return [job for _, job in composed(name)]


def test_the_tables_are_the_paper_configs():
    assert sorted(TABLES) == sorted(p.stem for p in (CONF_DIR / "paper").glob("*.yaml"))


@pytest.mark.parametrize("name", TABLES_BY_COST)
def test_every_cell_of_a_table_composes_and_every_published_cell_kgx_can_make_is_one(name):
    """A composed job stands for a run: the report's own matching must find a job for every
    published figure kgx has a method and a backbone for, and for no cell kgx cannot make."""
    jobs = params(name)
    assert jobs, name
    frame = pl.from_dicts(
        [
            {f"params.{k}": v for k, v in job.items()} | {"start_time": i, "metrics.n_questions": 10.0}
            for i, job in enumerate(jobs)
        ]
    ).with_columns(
        pl.lit(50.0).alias(f"metrics.{m}")
        for m in (
            "hits1",
            "hits1_tog",
            "hit_any",
            "partial_match",
            "complete_match",
            "llm_calls_per_q",
            "total_tokens_per_q",
            "input_tokens_per_q",
            "latency_s_per_q",
            "parse_failures",
            "f1",
        )
    )
    _, cells = paper_table(name)
    comparisons, standing = compare(cells, Inputs(frame))
    assert standing is None  # the jobs run the paper's own backbones
    # A cell split by a question field needs the runs' records: tests/report/test_paper_questions.py makes those.
    makes = {
        (c.group, c.row, c.column): c.selector != {}
        and c.backbone.split()[0] in KGX_BACKBONES
        and not any(k.startswith("question.") for k in c.selector)
        for c in cells
    }
    made = {(c.published.group, c.published.row, c.published.column): c.state == "run" for c in comparisons}
    printed = {(c.group, c.row, c.column) for c in cells if c.value is not None}  # where the paper prints "-": either
    assert {k: made[k] for k in printed} == {k: makes[k] for k in printed}
    assert not [k for k in made if made[k] and not makes[k]]


def settings_file(job: dict[str, str]) -> Path | None:
    """The paper settings a job's cell should get: its backbone's file, else its dataset's."""
    method, dataset, llm = job["method.name"], job["dataset.name"], job["llm.name"]
    for path in (
        CONF_DIR / "paper_backbone" / f"{method}_{dataset}_{llm}.yaml",
        CONF_DIR / "paper_settings" / f"{method}_{dataset}.yaml",
    ):
        if path.is_file():
            return path
    return None


VARIANTS = {"+experiment": "experiment", "+paper/row": "paper/row", "+lmp_ablation": "lmp_ablation"}
# ToG has no published setting on MetaQA, CGPE's stand-in: its rows run it as CGPE did (+experiment=cgpe_tog).
UNSET = {"cgpe_table1": {"tog"}, "cgpe_table2": {"tog"}}


def variant_keys(overrides: tuple[str, ...]) -> set[str]:
    """The method settings a job's table sets on purpose: its row's, experiment's or ablation's."""
    keys = set()
    for override in overrides:
        group, _, option = override.partition("=")
        if group in VARIANTS:
            written = yaml.safe_load((CONF_DIR / VARIANTS[group] / f"{option}.yaml").read_text()) or {}
            keys |= set(written if group == "+lmp_ablation" else written.get("method") or {})
    return keys


@pytest.mark.parametrize("name", TABLES_BY_COST)
def test_every_cell_has_its_methods_published_settings(name):
    """A table sets only its own axes (a variant's switches): every other method setting of a cell
    is the paper's for its dataset and backbone (conf/paper_settings, conf/paper_backbone)."""
    checked = set()
    for overrides, job in composed(name):
        path = settings_file(job)
        if path is None:
            continue
        written = yaml.safe_load(path.read_text())["method"]
        published = {k: str(v) for k, v in written.items() if k not in variant_keys(overrides)}
        assert {k: job.get(f"method.{k}", "None") for k in published} == published, path
        checked.add(job["method.name"])
    kg_methods = {j["method.name"] for j in params(name)} - {"io", "cot", "sc"}
    # one cell per method that walks the KG, at least; io and cot have settings on the Freebase datasets
    assert checked - {"io", "cot"} == kg_methods - UNSET.get(name, set())


@pytest.mark.slow  # two of the largest tables
def test_the_paper_rows_pair_methods_with_their_backbones():
    rows = {(j["method.name"], j["llm.name"], j.get("llm_stages.answer.name")) for j in params("cgpe_table1")}
    assert ("cgpe", "chatglm3_6b", "gpt35") in rows and ("io", "gpt35", None) in rows
    assert {(j["method.name"], j["llm.name"]) for j in params("knowpath_table1")} == {
        *((m, "gpt35_1106") for m in ("io", "cot", "sc", "structgpt", "tog", "knowpath")),
        ("pog", "gpt35"),  # PoG's own figures, from gpt-3.5-turbo-0125
        *((m, "deepseek_v3_pinned") for m in ("tog", "pog", "knowpath")),
    }
    noise = {(j["method.name"], j["kg.noise.drop_relations"], j["kg.noise.drop_names"]) for j in params("lmp_table3")}
    assert ("lmp", "0.4", "0.4") in noise and ("cot", "0.0", "0.0") in noise and len(params("lmp_table3")) == 12


def test_an_unknown_table_is_listed_by_hydra_and_by_the_report(capsys):
    register_schemas()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        with pytest.raises(MissingConfigException) as exc:
            compose(config_name="config", overrides=["+paper=nosuch"])
    GlobalHydra.instance().clear()
    assert set(TABLES) <= set(exc.value.options)
    with pytest.raises(SystemExit) as stop:
        report_main(["paper", "nosuch"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "no paper table 'nosuch'" in err
    assert all(f"  {name} " in err for name in TABLES)


# --------------------------------------------------------------------------- the published figures


def test_the_published_files_hold_every_cell_of_every_table():
    published = load_published()
    assert {name: len(cells) for name, cells in published.items()} == COUNTS
    cell = {(c.table, c.group, c.row, c.column): c for cells in published.values() for c in cells}
    kp = cell["knowpath_table1", "Prompting KG Enhanced LLM with DeepSeek-V3", "KnowPath (Ours)", "CWQ"]
    assert (kp.value, kp.spread, kp.metric, kp.backbone, kp.rule) == (
        73.5,
        0.9,
        "hits1_tog",
        "deepseek_v3_pinned",
        "tog",
    )
    assert cell["lmp_table2", "with knowledge graph", "LMP", "o1-mini CWQ"].value == 83.8
    gain = cell["lmp_table2", "without knowledge graph", "LMP Gain", "Llama-2-70B WebQSP"]
    assert (gain.text, gain.value, gain.metric, gain.selector) == ("+46.9%", 46.9, "gain_pct", {})
    assert cell["knowpath_cost", "Table 4: WebQSP", "PoG", "LLM Call"].text == "9"
    assert cell["knowpath_cost", "Table 5: SimpleQuestions", "KnowPath", "Input Token"].value == 1064.44
    four = cell["cgpe_table4", "CE PE A", "G4 GLM CG", "1-Hop Query complete match"]
    assert (four.value, four.backbone) == (49.3, "chatglm3_6b clue_extraction=gpt4 answer=gpt35")
    assert cell["lmp_table1", "Fine-tuning", "RRA", "CWQ"].value is None  # printed "-"
    assert cell["lmp_table3", "with ChatGPT", "CWQ", "60%"].selector == {
        "dataset.name": "cwq",
        "method.name": "lmp",
        "kg.noise.drop_relations": "0.6",
        "kg.noise.drop_names": "0.6",
    }


HEADER = "table,group,row,column,value,metric,backbone,rule,kgx_row,kgx_column,provenance,quoted_from,figure_of,note"
GOOD = "knowpath_table2,,KnowPath,CWQ,73.5,hits1_tog,deepseek_v3,tog,method=knowpath,dataset=cwq,reproduced,,,"


@pytest.mark.parametrize(
    "line, says",
    [
        (
            "knowpath_table2,,Base,CWQ,39.2 percent,hits1_tog,deepseek_v3,tog,method=io,dataset=cwq,reproduced,,,",
            "value '39.2 percent'",
        ),
        ("knowpath_table2,,Base,CWQ,39.2,hits1_tog,deepseek_v3,tog,method=io", "9 fields, expected 14"),
        (
            "knowpath_table9,,Base,CWQ,39.2,hits1_tog,deepseek_v3,tog,method=io,dataset=cwq,reproduced,,,",
            "table 'knowpath_table9'",
        ),
        (
            "knowpath_table2,,Base,CWQ,39.2,hits1_tog,deepseek_v3,strict,method=io,dataset=cwq,reproduced,,,",
            "rule 'strict'",
        ),
        (
            "knowpath_table2,,Base,CWQ,39.2,accuracy,deepseek_v3,tog,method=io,dataset=cwq,reproduced,,,",
            "metric 'accuracy'",
        ),
        (
            "knowpath_table2,,Base,CWQ,39.2,hits1_tog,DeepSeek-V3,tog,method=io,dataset=cwq,reproduced,,,",
            "backbone 'DeepSeek-V3'",
        ),
        (
            "knowpath_table2,,Base,CWQ,39.2,hits1_tog,deepseek_v3,tog,method io,dataset=cwq,reproduced,,,",
            "'method' is not key=value",
        ),
        (
            "knowpath_table2,,Base,CWQ,39.2,hits1_tog,deepseek_v3,tog,method=io,dataset=cwq,copied,,,",
            "provenance 'copied' is none of reproduced, quoted, derived",
        ),
        (
            "knowpath_table2,,Base,CWQ,39.2,hits1_tog,deepseek_v3,tog,method=io,dataset=cwq,quoted,,,",
            "quoted_from '' goes with provenance 'quoted' only, which must name the paper it quotes",
        ),
        (
            "knowpath_table2,,Base,CWQ,39.2,hits1_tog,deepseek_v3,tog,method=io,dataset=cwq,derived,,,",
            "provenance 'derived' goes with rule 'gain' and only with it",
        ),
        (GOOD, "the cell knowpath_table2 /  / KnowPath / CWQ is given again (first at"),
    ],
)
def test_a_malformed_line_is_named_with_its_file_and_line(tmp_path, line, says):
    path = tmp_path / "knowpath.csv"
    path.write_text(f"{HEADER}\n{GOOD}\n{line}\n")
    with pytest.raises(PublishedError) as exc:
        read_file(path)
    assert str(exc.value).startswith(f"{path}:3: ") and says in str(exc.value)


def test_a_wrong_header_is_named(tmp_path):
    path = tmp_path / "lmp.csv"
    path.write_text("table,row,value\n")
    with pytest.raises(PublishedError, match=rf"{path}:1: the header must be table,group,row"):
        read_file(path)


def test_the_interval_of_one_run_of_a_rate_is_wilsons():
    low, high = wilson(50.0, 100)
    assert (round(low, 2), round(high, 2)) == (40.38, 59.62)


# --------------------------------------------------------------------------- kgx.report paper on a real sweep


@pytest.fixture(scope="module")
def swept(tmp_path_factory, _mlflow_template) -> tuple[Path, Done]:
    """One small real sweep of ToG Table 1: two of its rows on two CWQ questions, the scripted backbone."""
    cwd = tmp_path_factory.mktemp("paper-sweep")
    data = write_data(cwd / "data")
    # kg=demo: these rows read no KG, and CWQ's own (Freebase) needs a server this test does not have.
    rows = ("+paper/row=io_gpt35,cot_gpt35", "dataset=cwq", "kg=demo")
    done = kgx(cwd, data, "-m", "+paper=tog_table1", "llm=scripted", *rows)
    assert done.returncode == 0, done.stderr
    return cwd, done


def report(capsys, cwd: Path, *args: str) -> str:
    report_main(["paper", *args, "--tracking-uri", f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}"])
    return capsys.readouterr().out


def test_the_sweep_is_named_and_tabled_by_its_table_and_rows(swept):
    cwd, done = swept
    assert re.search(r"^sweep tog_table1: paper/row [0-9a-f]{6}: 2 finished, 0 failed", done.stdout, re.M)
    assert "| cot_gpt35 | 1 |" in done.stdout and "| io_gpt35 | 1 |" in done.stdout
    client = MlflowClient(f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}")
    (parent,) = [r for r in client.search_runs(["1"]) if r.data.tags.get("sweep") == "tog_table1"]
    assert parent.data.tags["paper"] == "tog_table1"
    page = Path(client.download_artifacts(parent.info.run_id, "report/index.html", str(cwd))).read_text()
    assert "<h2>Paper table: tog_table1</h2>" in page and "<caption>tog_table1: ToG (Sun et al.)" in page
    # Every note of the table is on the sweep's own page too: the rules, each cell's notes, the stand-in.
    assert '<p class="note">Rules: tog: ToG&#x27;s exact match' in page
    assert "backbone scripted stands in for the paper&#x27;s" in page and "as LMP Table 1 quotes it</p>" in page


def test_the_report_lays_the_sweep_out_as_the_paper_with_every_published_figure(swept, capsys):
    cwd, _ = swept
    text = report(capsys, cwd, "tog_table1", "--parent", "tog_table1", "--format", "markdown")
    rows = markdown_rows(text)
    _, cells = paper_table("tog_table1")
    assert rows[0][2:] == ["CWQ", "WebQSP", "GrailQA", "Simple Questions", "WebQuestions"]
    shown = [value for row in rows[2:] if row[1] == "paper" for value in row[2:]]
    assert shown == [paper_text(c) for c in cells]  # the published column complete, in the paper's order
    kgx_lines = [row[2:] for row in rows if row[1] == "kgx"]
    assert kgx_lines[0] == ["0.0 [0.0, 65.8] 1×2q", "not run", "not run", "not run", "not run"]  # IO prompt
    assert kgx_lines[1][0] == "0.0 [0.0, 65.8] 1×2q" and kgx_lines[2] == ["not run"] * 5  # CoT ran, SC did not
    assert "backbone scripted stands in for the paper's (gpt35, gpt4, llama2_70b)" in text


def markdown_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_every_table_prints_its_layout_from_the_sweep_with_the_published_column_complete(swept, name):
    """The scripted sweep of two ToG Table 1 rows, laid out as every table: each published figure
    on its row's paper line, in the paper's order; the cells those runs make filled, no other."""
    cwd, _ = swept
    text = paper_report(name, fmt="markdown", uri=f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}")
    rows = markdown_rows(text)
    _, cells = paper_table(name)
    assert [value for row in rows[2:] if row[1] == "paper" for value in row[2:]] == [paper_text(c) for c in cells]
    kgx_cells = [value for row in rows[2:] if row[1] == "kgx" for value in row[2:]]
    made = [
        c
        for c in cells
        if c.selector.get("method.name") in ("io", "cot")
        and c.selector["dataset.name"] == "cwq"
        and not any(k.startswith("question.") for k in c.selector)  # these questions have no such field
    ]
    assert sum(v.startswith("0.0 ") and v.endswith(" 1×2q") for v in kgx_cells) == len(made)
    assert all(v in ("not run", "not in kgx") for v in kgx_cells if not v.startswith("0.0 ") and v != "-")
    derived = [v for row in rows[2:] if row[1] == "kgx" for v in row[2:] if v == "-"]
    assert len(derived) == sum(c.derived for c in cells)  # LMP's gains: LMP did not run, so none is derived


def test_the_sweeps_html_page_opens_with_its_table(swept):
    cwd, _ = swept
    page = html_report(uri=f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}", parent="tog_table1")
    assert page.index("<h2>Paper table: tog_table1</h2>") < page.index("<h2>Main table: hits1</h2>")


def test_the_report_in_csv_gives_each_cell_its_state(swept, capsys):
    cwd, _ = swept
    text = report(capsys, cwd, "tog_table1", "--parent", "tog_table1", "--format", "csv")
    frame = pl.read_csv(text.encode(), infer_schema_length=None)
    assert frame.height == COUNTS["tog_table1"]
    ran = frame.filter(pl.col("state") == "run")
    assert sorted(ran["row"].to_list()) == ["CoT", "IO prompt"] and set(ran["column"]) == {"CWQ"}
    assert ran["difference"].to_list() == [-37.6, -38.8] and ran["inside"].to_list() == [True, True]
    assert set(frame.filter(pl.col("state") != "run")["state"]) == {"not run"}


def test_the_report_prints_latex_and_html(swept, capsys):
    cwd, _ = swept
    latex = report(capsys, cwd, "tog_table1", "--parent", "tog_table1", "--format", "latex")
    assert r"57.1 $\pm$ 1.5" in latex and r"\begin{tabular}{llrrrrr}" in latex
    page = report(capsys, cwd, "tog_table1", "--parent", "tog_table1", "--format", "html")
    assert '<td class="num">57.1 ± 1.5</td>' in page and '<p class="note">kgx: the FINISHED runs of sweep' in page


def test_a_table_without_runs_shows_every_cell_not_run(tmp_path, capsys):
    text = paper_report("knowpath_table2", uri=f"sqlite:///{tmp_path / 'none.db'}")
    assert text.count("not run") == COUNTS["knowpath_table2"] and " 0.0" not in text
    assert "kgx: no runs to show (no MLflow store at" in text
    with pytest.raises(ReportError, match="no MLflow store"):
        paper_report("knowpath_table2", uri=f"sqlite:///{tmp_path / 'none.db'}", parent="knowpath_table2")


# --------------------------------------------------------------------------- released outputs


def test_released_outputs_fill_their_cells_with_a_note_where_the_rule_lacks_inputs(tmp_path, monkeypatch):
    monkeypatch.setenv("KGX_DATA_DIR", str(write_data(tmp_path)))
    lmp = paper_report("lmp_table1", fmt="csv", released=True)
    frame = pl.read_csv(lmp.encode(), infer_schema_length=None).filter(pl.col("state") == "run")
    assert frame.select("row", "column", "kgx_mean", "runs", "questions").rows() == [
        ("LMP + GPT-4", "WebQSP", 50.0, 1, 2)
    ]
    cost = " ".join(paper_report("knowpath_cost", released=True).split())  # the notes as one text, unwrapped
    assert "kgx: the authors' released outputs" in cost
    assert "9.0 1×2q" in cost and "900.0 1×2q" in cost  # PoG's calls and total tokens on WebQSP
    assert "PoG's own evaluation also reads WQSP_aliase_data.json" in cost
    assert "not scored: pog/PoG_cwq_gpt-3.5-turbo-0125.jsonl: not found: " in cost  # this data holds only WebQSP's


def shared_reference_outputs() -> Path:
    return Path(os.environ.get("KGX_DATA_DIR", "/nonexistent")) / "reference_outputs"


@pytest.mark.slow  # scores every released file twice (~16 s)
@pytest.mark.skipif(not shared_reference_outputs().is_dir(), reason="needs $KGX_DATA_DIR/reference_outputs")
def test_the_shared_released_outputs_fill_their_cells_of_every_table_with_the_published_column_complete():
    """The authors' real released files: every table in the paper's layout with each
    published figure on its paper line, the released runs' cells filled as the guide quotes them
    (PoG's CWQ 59.8 against 63.2, without the alias files PoG's own evaluation reads), no other."""
    filled = {}
    for name in sorted(COUNTS):
        text = paper_report(name, fmt="markdown", released=True)
        rows = markdown_rows(text)
        _, cells = paper_table(name)
        assert [value for row in rows[2:] if row[1] == "paper" for value in row[2:]] == [
            paper_text(c) for c in cells
        ], name
        frame = pl.read_csv(paper_report(name, fmt="csv", released=True).encode(), infer_schema_length=None)
        ran = frame.filter(pl.col("state") == "run").select("group", "row", "column", "kgx_mean", "questions")
        filled[name] = {(group, row, column): (round(mean, 1), n) for group, row, column, mean, n in ran.rows()}
        if name == "knowpath_table1":
            assert "which kgx's data does not have: kgx scores with the dataset's own answer names" in text
    gpt35 = "Prompting KG Enhanced LLM with GPT3.5"
    assert filled["knowpath_table1"] == {(gpt35, "PoG", "CWQ"): (59.8, 3531), (gpt35, "PoG", "WebQSP"): (76.5, 1639)}
    assert filled["lmp_table2"] == {
        ("with knowledge graph", "LMP", "GPT-4 WebQSP"): (87.5, 1639),
        ("with knowledge graph", "LMP", "ChatGPT WebQSP"): (86.1, 1639),
        ("with knowledge graph", "LMP", "Llama-3-70B WebQSP"): (87.6, 1639),
    }
    assert len(filled["lmp_table1"]) == 6
    assert filled["lmp_table1"]["Prompting", "LMP + GPT-4", "Simple Questions"] == (86.7, 1000)
    cost = filled["knowpath_cost"]
    assert (cost["Table 3: CWQ", "PoG", "LLM Call"], cost["Table 4: WebQSP", "PoG", "LLM Call"]) == (
        (13.8, 3531),
        (9.0, 1639),
    )
    assert len(cost) == 8  # calls, total and input tokens, seconds: PoG's rows of Tables 3 and 4
    assert not {name: cells for name, cells in filled.items() if cells and name not in RELEASED_TABLES}


def test_a_table_stops_before_anything_runs_when_its_data_is_missing(tmp_path):
    done = kgx(tmp_path, tmp_path / "nodata", "-m", "+paper=tog_table1", "llm=scripted", "+paper/row=io_gpt35")
    assert done.returncode != 0
    assert "kgx: error: paper table tog_table1 needs data this machine lacks" in done.stderr
    assert "file not found: freebase_qa/cwq.json" in done.stderr and "To get it: ComplexWebQuestions" in done.stderr
    assert "freebase_qa/WebQuestions.json" in done.stderr
    assert not (tmp_path / "mlruns").exists()


def test_a_table_without_multirun_is_refused(tmp_path):
    done = kgx(tmp_path, tmp_path, "+paper=tog_table1", "llm=scripted")
    assert done.returncode != 0 and "+paper=tog_table1 is the grid of a paper's table: run it with -m" in done.stderr


def test_provenance_is_data_and_the_papers_own_figures_bear_it_out():
    """Each quoted or borrowed figure the guide names, as the files record it, and the figure itself
    equal to the one it is said to be (LMP Table 1 quotes ToG's and ToG-R's)."""
    published = load_published()
    cell = {(c.table, c.group, c.row, c.column): c for cells in published.values() for c in cells}
    lmp1 = {(c.row, c.column): c.value for c in published["lmp_table1"]}
    kp = {(c.group, c.row, c.column): c for c in published["knowpath_table1"]}
    columns = {"CWQ": "CWQ", "WebQSP": "WebQSP", "Simple Questions": "Simple Questions", "WebQuestions": "WebQuestions"}
    for row, theirs in (("IO prompt", "IO + ChatGPT"), ("SC", "SC + ChatGPT"), ("COT", "CoT + ChatGPT")):
        for column in columns if row != "COT" else ("CWQ", "WebQSP"):
            c = kp["LLM only", row, column]
            assert (c.provenance, c.quoted_from, c.value) == ("quoted", "ToG (Sun et al., 2024)", lmp1[theirs, column])
    assert kp["LLM only", "COT", "WebQuestions"].provenance == "reproduced"  # 49.1, ToG's is 48.5
    for column in columns:
        tog = kp["Prompting KG Enhanced LLM with GPT3.5", "ToG", column]
        assert (tog.provenance, tog.quoted_from) == ("quoted", "ToG (Sun et al., 2024)")
    for column in ("CWQ", "WebQSP"):
        assert kp["Prompting KG Enhanced LLM with GPT3.5", "PoG", column].quoted_from == "PoG (Chen et al., 2024)"
    for column in ("WebQSP", "WebQuestions"):
        ds = kp["Prompting KG Enhanced LLM with DeepSeek-V3", "ToG", column]
        assert ds.figure_of.startswith("ToG + GPT-4") and ds.value == lmp1["ToG + GPT-4", column]
    gpt4 = cell["lmp_table2", "with knowledge graph", "ToG", "GPT-4 CWQ"]
    assert gpt4.figure_of.startswith("ToG-R + GPT-4") and gpt4.value == lmp1["ToG-R + GPT-4", "CWQ"] == 72.5
    baselines = [c for c in published["lmp_table1"] if not c.row.startswith("LMP")]
    assert {c.provenance for c in baselines} == {"quoted"} and all(c.quoted_from for c in baselines)
    assert {c.provenance for c in published["lmp_table1"] if c.row.startswith("LMP")} == {"reproduced"}
    assert {c.provenance for cells in published.values() for c in cells if c.derived} == {"derived"}


def test_the_report_marks_provenance_in_every_format(tmp_path):
    uri = f"sqlite:///{tmp_path / 'none.db'}"
    text = paper_report("lmp_table2", uri=uri)
    assert " 72.5*† " in text and "*: quoted from another paper (named below)" in text
    assert "ToG (GPT-4 CWQ): the figure printed is another row's: ToG-R + GPT-4 (LMP Table 1" in text
    page = paper_report("lmp_table2", fmt="html", uri=uri)
    assert '<td class="num">72.5*†</td>' in page
    frame = pl.read_csv(paper_report("lmp_table2", fmt="csv", uri=uri).encode(), infer_schema_length=None)
    tog = frame.filter((pl.col("row") == "ToG") & (pl.col("column") == "GPT-4 CWQ")).to_dicts()[0]
    assert (tog["provenance"], tog["quoted_from"]) == ("quoted", "ToG (Sun et al., 2024)")
    assert tog["figure_of"].startswith("ToG-R + GPT-4") and "quoted from ToG (Sun et al., 2024)" in tog["notes"]
