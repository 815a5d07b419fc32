"""The papers' derived rows (LMP Table 2's gains): the rule reproduces every printed gain from the
printed inputs; kgx's gain is computed from kgx's cells (hand-computed figures here), printed
beside the published one, and is "-" with a note whenever an input did not run; a paper table run
end to end (``llm=scripted``) prints kgx's derived rows."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from kgx.report.__main__ import main as report_main
from kgx.report.paper_cells import Comparison, Inputs
from kgx.report.paper_derived import DERIVED, compare_all, derive, relative_gain
from kgx.report.paper_layout import render_paper
from kgx.report.paper_published import PublishedError, paper_table, read_file
from tests.inprocess import kgx_main

KG, NO_KG = "with knowledge graph", "without knowledge graph"


def test_the_rule_gives_every_gain_the_paper_prints_from_the_figures_it_prints():
    """LMP Table 2: relative, in percent, over CoT without a KG and over the best of ToG and
    EffiQA with one (GPT-4 WebQSP: over EffiQA's 82.9, not ToG's 82.6); "-" with no baseline."""
    _, cells = paper_table("lmp_table2")
    value = {(c.group, c.row, c.column): c.value for c in cells}
    gains = [c for c in cells if c.derived]
    assert len(gains) == 24 and {(c.table, c.group, c.row) for c in gains} == set(DERIVED)
    for cell in gains:
        rule = DERIVED[(cell.table, cell.group, cell.row)]
        baselines = [value[(*row, cell.column)] for row in rule.baselines if value[(*row, cell.column)] is not None]
        gain = relative_gain(value[(*rule.target, cell.column)], baselines) if baselines else None
        assert (f"{gain:+.1f}%" if gain is not None else "-") == cell.text, (cell.group, cell.column)
    assert round(relative_gain(90.0, [82.6, 82.9]), 2) == 8.56
    assert relative_gain(50.0, [0.0]) is None


def run(method: str, dataset: str, llm: str, metric: str, value: float, start: int) -> dict:
    params = {"params.method.name": method, "params.dataset.name": dataset, "params.llm.name": llm}
    return params | {"start_time": start, "metrics.n_questions": 200.0, f"metrics.{metric}": value}


# Hand-computed: ChatGPT WebQSP, (80 − 50) / 50 = +60.0% without a KG and (80 − 64) / 64 = +25.0%
# with one (EffiQA not in kgx); ChatGPT CWQ, (50 − 40) / 40 = +25.0% and ToG not run; GPT-4
# WebQSP, a CoT of 0: no relative gain.
RUNS = [
    run("cot", "webqsp", "gpt35", "hits1_tog", 50.0, 1),
    run("lmp", "webqsp", "gpt35", "hit_any", 80.0, 2),
    run("tog", "webqsp", "gpt35", "hits1_tog", 64.0, 3),
    run("cot", "cwq", "gpt35", "hits1_tog", 40.0, 4),
    run("lmp", "cwq", "gpt35", "hit_any", 50.0, 5),
    run("cot", "webqsp", "gpt4", "hits1_tog", 0.0, 6),
    run("lmp", "webqsp", "gpt4", "hit_any", 70.0, 7),
]


@pytest.fixture(scope="module")
def compared() -> dict[tuple[str, str, str], Comparison]:
    _, cells = paper_table("lmp_table2")
    comparisons, standing = compare_all(cells, Inputs(pl.from_dicts(RUNS, infer_schema_length=None)))
    assert standing is None
    return {(c.published.group, c.published.row, c.published.column): c for c in comparisons}


def test_kgx_computes_its_gains_from_its_own_cells(compared):
    gain = {(g, col): compared[g, "LMP Gain", col] for g in (NO_KG, KG) for col in ("ChatGPT WebQSP", "ChatGPT CWQ")}
    assert gain[NO_KG, "ChatGPT WebQSP"].mean == pytest.approx(60.0)
    assert gain[NO_KG, "ChatGPT WebQSP"].difference == pytest.approx(60.0 - 40.2)
    assert gain[KG, "ChatGPT WebQSP"].mean == pytest.approx(25.0)
    assert gain[KG, "ChatGPT WebQSP"].note == ""
    assert gain[NO_KG, "ChatGPT CWQ"].mean == pytest.approx(25.0) and gain[NO_KG, "ChatGPT CWQ"].state == "derived"
    assert gain[KG, "ChatGPT CWQ"].mean is None and gain[KG, "ChatGPT CWQ"].state == "not derived"
    assert gain[KG, "ChatGPT CWQ"].note == "ToG not run: no gain without all its inputs"
    zero = compared[NO_KG, "LMP Gain", "GPT-4 WebQSP"]
    assert (zero.mean, zero.note) == (None, "CoT scored 0: no gain")
    nothing = compared[NO_KG, "LMP Gain", "o1-mini CWQ"]
    assert (nothing.mean, nothing.note) == (None, "LMP and CoT not run: no gain without all its inputs")


def test_the_report_prints_kgx_gain_beside_the_published_one(compared):
    table, _ = paper_table("lmp_table2")
    text = render_paper(table, list(compared.values()), "hand-made runs", "markdown")
    rows = markdown_rows(text)
    columns = rows[0][2:]
    at = {name: columns.index(name) + 2 for name in ("ChatGPT WebQSP", "ChatGPT CWQ", "GPT-4 WebQSP")}
    gains = [i for i, row in enumerate(rows) if row[0] == "LMP Gain"]
    no_kg, kg = ([rows[i], rows[i + 1], rows[i + 2]] for i in gains)
    assert [no_kg[0][at["ChatGPT WebQSP"]], no_kg[1][at["ChatGPT WebQSP"]], no_kg[2][at["ChatGPT WebQSP"]]] == [
        "+40.2%",
        "+60.0%",
        "+19.8",
    ]
    assert [r[at["ChatGPT WebQSP"]] for r in kg] == ["+14.4%", "+25.0%", "+10.6"]
    assert kg[1][at["ChatGPT CWQ"]] == "-" and no_kg[1][at["GPT-4 WebQSP"]] == "-"
    assert "LMP Gain [without knowledge graph], kgx's: 100 × (LMP − CoT) / CoT, per column" in text
    assert "EffiQA there, from kgx's own cells (no interval; Δ in points); EffiQA not in kgx: kgx's is over" in text
    assert "LMP Gain [with knowledge graph] (ChatGPT CWQ, GPT-4 WebQSP): ToG not run: no gain without all" in text
    csv = pl.read_csv(render_paper(table, list(compared.values()), "", "csv").encode(), infer_schema_length=None)
    derived = csv.filter(pl.col("state") == "derived").sort("group", "column")
    assert derived.select("group", "column", "kgx_mean").rows() == [
        (KG, "ChatGPT WebQSP", 25.0),
        (NO_KG, "ChatGPT CWQ", 25.0),
        (NO_KG, "ChatGPT WebQSP", 60.0),
    ]


def markdown_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]


# Two WebQSP questions on the demo KG's entities. The scripted backbone's CoT answers with the
# question itself: it hits the second (its answer is in it), not the first; LMP and ToG read the
# demo KG and hit both. So kgx's gains: (100 − 50) / 50 = +100.0% without a KG, +0.0% with one.
WEBQSP = [
    {"QuestionId": "q1", "RawQuestion": "What is the capital of Australia?", "answer": ["Canberra"]}
    | {"topic_entity": {"m.0_kk": "Australia"}},
    {"QuestionId": "q2", "RawQuestion": "Did William Shakespeare or Marlowe write Hamlet?"}
    | {"answer": ["William Shakespeare"], "topic_entity": {"m.03u0": "Hamlet"}},
]


@pytest.fixture(scope="module")
def lmp_table2(tmp_path_factory, _mlflow_template) -> Path:
    """LMP Table 2 end to end: its CoT, ToG and LMP rows on WebQSP, two questions, llm=scripted."""
    cwd = tmp_path_factory.mktemp("lmp-table2")
    (cwd / "data" / "freebase_qa").mkdir(parents=True)
    (cwd / "data" / "freebase_qa" / "WebQSP.json").write_text(json.dumps(WEBQSP))
    rows = ("+paper/row=cot_gpt35,tog_gpt35,lmp_gpt35", "dataset=webqsp", "kg=demo", "dataset.limit=2")
    args = ("-m", "+paper=lmp_table2", "llm=scripted", *rows, "run.progress=false")
    done = kgx_main(cwd, *args, env={"KGX_DATA_DIR": str(cwd / "data")})
    assert done.returncode == 0, done.stderr
    assert "sweep lmp_table2: paper/row" in done.stdout and "3 finished, 0 failed" in done.stdout
    return cwd


def test_a_paper_table_run_end_to_end_prints_kgx_derived_rows(lmp_table2, capsys):
    """The demo KG serves no WebQSP question: its runs fill LMP's and ToG's cells only when the
    reader asks for them (--kg demo), and then each says so; CoT reads no KG and fills its cells."""
    uri = f"sqlite:///{lmp_table2 / 'mlruns' / 'mlflow.db'}"
    args = ["paper", "lmp_table2", "--parent", "lmp_table2", "--format", "markdown", "--tracking-uri", uri]
    report_main(args)
    rows = markdown_rows(capsys.readouterr().out)
    lmp = next(rows[i + 1] for i, row in enumerate(rows) if row[0] == "LMP")
    cot = next(rows[i + 1] for i, row in enumerate(rows) if row[0] == "CoT")
    assert lmp[rows[0].index("ChatGPT WebQSP")] == "not run" and cot[rows[0].index("ChatGPT WebQSP")] != "not run"
    report_main([*args, "--kg", "demo"])
    text = capsys.readouterr().out
    rows = markdown_rows(text)
    columns = rows[0][2:]
    at = [columns.index(f"{backbone} WebQSP") + 2 for backbone in ("ChatGPT", "GPT-4", "Llama-3-8B")]
    no_kg, kg = ([rows[i], rows[i + 1], rows[i + 2]] for i, row in enumerate(rows) if row[0] == "LMP Gain")
    # paper, kgx, Δ (kgx's gain minus the paper's, in points)
    assert [[line[i] for i in at] for line in no_kg] == [
        ["+40.2%", "+33.7%", "+31.6%"],
        ["+100.0%"] * 3,
        ["+59.8", "+66.3", "+68.4"],
    ]
    assert [[line[i] for i in at] for line in kg] == [
        ["+14.4%", "+8.6%", "+38.4%"],
        ["+0.0%"] * 3,
        ["-14.4", "-8.6", "-38.4"],
    ]
    assert {kg[1][columns.index("ChatGPT CWQ") + 2], no_kg[1][columns.index("o1-mini CWQ") + 2]} == {"-"}
    assert "LMP Gain [with knowledge graph] (Llama-2-70B CWQ, " in text
    assert ": LMP and ToG not run: no gain without all its inputs" in text
    assert "backbone scripted stands in for the paper's" in text
    assert "on kg demo, which does not serve webqsp (asked for with --kg demo): no accuracy claim" in text
    lmp = next(rows[i + 1] for i, row in enumerate(rows) if row[0] == "LMP")
    assert lmp[columns.index("ChatGPT WebQSP") + 2] == "100.0 [34.2, 100.0] 1×2q (kg demo)"


def test_a_derived_line_kgx_has_no_rule_for_is_named(tmp_path):
    path = tmp_path / "knowpath.csv"
    head = (
        "table,group,row,column,value,metric,backbone,rule,kgx_row,kgx_column,provenance,quoted_from,figure_of,note\n"
    )
    path.write_text(head + "knowpath_table2,,Average,CWQ,+5.0%,gain_pct,deepseek_v3,gain,,dataset=cwq,derived,,,\n")
    (cell,) = read_file(path)
    with pytest.raises(PublishedError, match=rf"^{path}:2: a derived cell \(Average\) kgx has no rule for"):
        derive([Comparison(cell)])
