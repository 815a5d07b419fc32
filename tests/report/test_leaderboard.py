"""``python -m kgx.report leaderboard``: the papers' figures, released outputs and kgx's runs in one
table; one system and backbone together, a measurement printed twice marked, runs one row per
configuration, and the text, CSV, HTML and PNG outputs."""

from __future__ import annotations

import csv
import io
import os

import polars as pl
import pytest

import kgx.report.leaderboard as board_module
from kgx.report.leaderboard import build
from kgx.report.leaderboard_entries import Found, family, system_key
from kgx.report.leaderboard_render import csv_text, html_page, measurements, text, written
from kgx.report.runs import ReportError
from tests.inprocess import kgx_main


@pytest.fixture
def no_released(monkeypatch):
    """Boards of the published figures and runs only: released outputs are scored in their own test."""
    monkeypatch.setattr(board_module, "released_entries", lambda dataset, metrics: Found([], []))


def run(run_id: str, seed: str, hits: float, depth: str = "3", llm: str = "gpt35", model: str = "gpt-3.5-turbo-0125"):
    """A FINISHED ToG run on WebQSP over Freebase as kgx.report.runs reads it."""
    return {
        "run_id": run_id,
        "start_time": 1,
        "params.method.name": "tog",
        "params.method.depth": depth,
        "params.dataset.name": "webqsp",
        "params.dataset.kg": "freebase",
        "params.kg.name": "freebase",
        "params.kg.backend": "endpoint",
        "params.llm.name": llm,
        "params.llm.model": model,
        "params.run.seed": seed,
        "metrics.hits1_tog": hits,
        "metrics.hits1": hits - 10,
        "metrics.n_questions": 1639.0,
        "metrics.llm_calls_per_q": 14.0,
        "metrics.total_tokens_per_q": 6000.0,
    }


RUNS = pl.from_dicts(
    [
        run("aaaaaaaa1", "0", 74.0),
        run("bbbbbbbb2", "1", 76.0),  # a second seed of the same configuration
        run("cccccccc3", "0", 70.0, depth="2"),
        run("dddddddd4", "0", 95.0, llm="oracle", model="kgx-oracle/gold"),
    ]
)


def group(board, name: str) -> list[tuple]:
    return [
        (r.entry.metric, r.entry.value, r.entry.provenance, r.entry.source, r.entry.backbone, r.same_as)
        for r in board.rows
        if r.group == name
    ]


def test_tog_with_chatgpt_from_three_papers_and_kgx_sits_together_and_quotes_are_marked(no_released):
    board = build("webqsp", RUNS)
    rows = [r for r in board.rows if r.group == "tog / gpt35"]
    assert [r.number for r in rows] == list(range(rows[0].number, rows[0].number + len(rows)))  # together
    first = rows[0].number + 2  # the two kgx configurations' hits1 come first, by metric
    assert group(board, "tog / gpt35") == [
        ("hits1", 60.0, "kgx run", "kgx: 1 run (cccccccc)", "gpt35", ""),
        ("hits1", 65.0, "kgx run", "kgx: 2 runs (aaaaaaaa, bbbbbbbb)", "gpt35", ""),
        ("hits1_tog", 76.2, "reproduced", "ToG Table 1", "gpt35", ""),
        ("hits1_tog", 76.2, "quoted", "LMP Table 2, quoting ToG (Sun et al., 2024)", "gpt35", f"#{first}"),
        ("hits1_tog", 76.2, "quoted", "LMP Table 9, quoting ToG (Sun et al., 2024)", "gpt35", f"#{first}"),
        ("hits1_tog", 76.2, "quoted", "KnowPath Table 1, quoting ToG (Sun et al., 2024)", "gpt35_1106", f"#{first}"),
        ("hits1_tog", 58.7, "quoted", "LMP Table 9, quoting ToG (Sun et al., 2024)", "gpt35", ""),  # prune=bm25
        ("hits1_tog", 66.3, "quoted", "LMP Table 9, quoting ToG (Sun et al., 2024)", "gpt35", ""),  # prune=sbert
        ("hits1_tog", 70.0, "kgx run", "kgx: 1 run (cccccccc)", "gpt35", ""),
        ("hits1_tog", 75.0, "kgx run", "kgx: 2 runs (aaaaaaaa, bbbbbbbb)", "gpt35", ""),
        ("f1", 72.3, "reproduced", "LMP Table 8", "gpt35", ""),
    ]
    variants = [r.entry.variant for r in rows if r.entry.metric == "hits1_tog"]
    assert variants == ["", "", "", "", "method.prune=bm25", "method.prune=sbert", "method.depth=2", "method.depth=3"]
    kgx = next(r.entry for r in rows if r.entry.source.startswith("kgx: 2 runs") and r.entry.metric == "hits1_tog")
    assert (kgx.spread, kgx.questions, kgx.calls, kgx.tokens, kgx.kg) == (
        pytest.approx(2**0.5),
        1639,
        14.0,
        6000.0,
        "full Freebase",
    )
    # the paper's cost table gives LMP's quote of ToG its calls and tokens, KnowPath's its own
    costs = {
        (r.entry.source, r.entry.calls, r.entry.tokens)
        for r in rows
        if r.entry.provenance == "quoted" and r.entry.value == 76.2
    }
    assert costs == {
        ("LMP Table 2, quoting ToG (Sun et al., 2024)", 16.7, 6351.0),
        ("LMP Table 9, quoting ToG (Sun et al., 2024)", 16.7, 6351.0),
        ("KnowPath Table 1, quoting ToG (Sun et al., 2024)", 15.9, 7018.9),
    }


def test_the_oracle_is_listed_last_with_why_it_claims_nothing(no_released):
    board = build("webqsp", RUNS)
    last = board.rows[-1].entry
    assert (board.rows[-1].group, last.metric, last.value, last.stand_in) == ("tog / oracle", "hits1_tog", 95.0, True)
    assert last.note == "the oracle answers from the gold paths: a ceiling of the method's search, not an accuracy"


def test_a_figure_the_papers_repeat_counts_once(no_released):
    board = build("webqsp", None, "no kgx runs: none here")
    assert board.notes[0] == (
        "83 figures of 43 systems x backbone; 23 repeat a measurement listed above (marked #n: one origin, one "
        "figure) and are no further evidence"
    )
    assert board.notes[-1] == "no kgx runs: none here"
    # LMP's own 87.2 with ChatGPT, printed in its Tables 1, 2, 3 and 9: one measurement
    lmp = [(r.entry.source, r.same_as) for r in board.rows if r.group == "lmp / gpt35" and r.entry.value == 87.2]
    first = next(r.number for r in board.rows if r.entry.source == "LMP Table 1" and r.group == "lmp / gpt35")
    assert lmp == [
        ("LMP Table 1", ""),
        ("LMP Table 2", f"#{first}"),
        ("LMP Table 3", f"#{first}"),
        ("LMP Table 9", f"#{first}"),
    ]
    # KnowPath's DeepSeek-V3 ToG is, its data says, ToG + GPT-4's figure
    (deepseek,) = [r for r in board.rows if r.group == "tog / deepseek_v3"]
    assert deepseek.same_as.startswith("the figure of ToG + GPT-4 (LMP Table 1 quotes ToG with GPT-4")


def test_rows_over_some_questions_or_a_stand_in_dataset_are_left_out_and_said(no_released):
    webqsp = build("webqsp", None)
    assert "not listed: the figures of lmp_table11, lmp_table12 over some of webqsp's questions" in webqsp.notes
    assert not any(r.entry.source.startswith(("LMP Table 11", "LMP Table 12")) for r in webqsp.rows)
    metaqa = build("metaqa_1hop", None)
    assert metaqa.rows == []
    assert metaqa.notes == [
        "no figure of this dataset: no published table, released output or kgx run has one",
        "not listed: cgpe_table1, cgpe_table2, cgpe_table3, cgpe_table4 (the paper's dataset has no public copy; "
        "metaqa_1hop stands in)",
    ]


def test_names_and_backbones_that_make_one_group():
    assert [system_key(n) for n in ("FiDeLis + GPT-4", "FiDeLiS", "KnowPath (Ours)", "KG-CoT + GPT-4")] == [
        "fidelis",
        "fidelis",
        "knowpath",
        "kg_cot",
    ]
    assert [
        family(b) for b in ("gpt35_1106", "gpt35", "deepseek_v3_pinned", "llama3_70b", "chatglm3_6b answer=gpt35")
    ] == [
        "gpt35",
        "gpt35",
        "deepseek_v3",
        "llama3_70b",
        "chatglm3_6b",
    ]


def test_an_unknown_metric_is_refused_with_the_metrics(no_released):
    with pytest.raises(ReportError, match="no leaderboard metric nosuch; metrics: hits1, hits1_tog, hit_any, em, f1"):
        build("webqsp", None, metrics=["nosuch"])


def test_text_csv_and_html_show_every_row(no_released, tmp_path):
    board = build("webqsp", RUNS, metrics=["hits1_tog"])
    lines = text(board, None).splitlines()
    assert lines[0] == "Leaderboard: webqsp (hits1_tog)"
    assert lines[1].split() == ["#", "system", "backbone", "as", "named", "KG", "metric", "(rule)", "figure", "n"] + [
        "provenance",
        "source",
        "calls/q",
        "tokens/q",
        "same",
        "as",
    ]
    assert "" in lines[3 : 3 + len(board.rows) + 10]  # a blank line between groups
    rows = list(csv.DictReader(io.StringIO(csv_text(board, None))))
    assert len(rows) == len(board.rows)
    kgx = next(r for r in rows if r["source"] == "kgx: 2 runs (aaaaaaaa, bbbbbbbb)")
    assert (kgx["group"], kgx["value"], kgx["calls_per_q"], kgx["variant"]) == (
        "tog / gpt35",
        "75.0",
        "14.0",
        "method.depth=3",
    )
    page = html_page(board, None)
    assert page.count("<tr class=") == len(board.rows)
    assert '<td data-v="75.0">75.0 ± 1.4</td>' in page and "table.board th" in page and "<script>" in page


@pytest.mark.skipif(
    not os.environ.get("KGX_DATA_DIR"), reason="KGX_DATA_DIR is unset: the released outputs are shared data"
)
@pytest.mark.parametrize("dataset, hit, hits1", [("webqsp", 85.68796068796068, 79.1), ("cwq", 66.80826961200793, 63.5)])
def test_gnn_rag_released_outputs_sit_beside_the_authors_own_figure(dataset, hit, hits1):
    board = build(dataset, None)
    rows = {(r.entry.metric, r.entry.provenance): r.entry for r in board.rows if r.group == "gnn_rag / rog_7b"}
    assert rows["hit", "reproduced"].value == rows["hit", "released outputs"].value == hit  # stated, and kgx's
    assert rows["hit", "reproduced"].source == f"gnn-rag-{dataset}.eval_result.txt (the authors')"
    assert round(rows["hits1", "released outputs"].value, 1) == hits1
    assert {e.kg for e in rows.values()} == {"RoG subgraphs"}
    if dataset == "webqsp":  # PoG's file records its calls and tokens per question
        pog = next(r.entry for r in board.rows if r.entry.source == "pog/PoG_webqsp_gpt-3.5-turbo-0125.jsonl")
        assert (round(pog.calls, 1), round(pog.tokens)) == (9.0, 5518)


def test_the_figure_has_a_point_per_measurement_with_a_cost(no_released, tmp_path):
    board = build("webqsp", RUNS, metrics=["hits1_tog"])
    points = {(row.entry.source, calls, tokens) for row, calls, tokens in measurements(board)}
    # ToG's own figure takes the cost LMP's cost table gives it; the oracle is no point
    assert ("ToG Table 1", 16.7, 6351.0) in points and ("kgx: 2 runs (aaaaaaaa, bbbbbbbb)", 14.0, 6000.0) in points
    assert not any(source.endswith("(dddddddd)") for source, _, _ in points)
    assert written(board, tmp_path).read_bytes()[:4] == b"\x89PNG"
    assert written(build("webqsp", None, metrics=["hits1"]), tmp_path / "none") is None  # no figure has a cost


def test_the_command_lists_a_run_and_writes_its_page(tmp_path, no_released):
    done = kgx_main(tmp_path, "method=io", "llm=scripted", "dataset=demo", "dataset.limit=3")
    assert done.returncode == 0, done.stderr
    from kgx.report.__main__ import main

    page = tmp_path / "board.html"
    uri = f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}"
    main(["leaderboard", "--dataset", "demo", "--format", "html", "--out", str(page), "--tracking-uri", uri])
    html = page.read_text()
    assert html.count("<tr class=") == 1 and 'data-group="io / scripted"' in html
    assert "no KG (the question alone)" in html and "kgx-scripted/overlap is one of kgx&#x27;s test models" in html
    assert "1 figure of 1 system x backbone; 0 repeat" in html
