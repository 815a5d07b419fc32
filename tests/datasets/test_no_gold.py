"""Questions without a gold answer (empty or null answers in their file) are kept, told at load in
one warning line with how many and which, and counted in the run's figures as ``no_gold``; they
stay in every metric's denominator, scoring 0."""

from __future__ import annotations

import json

import polars as pl

from kgx.core.config import DatasetConfig
from kgx.datasets import load
from tests.datasets.test_rog import TWO, rog_frame


def test_rog_rows_with_null_or_empty_answers_are_kept_and_told(tmp_path, capsys):
    path = tmp_path / "three.parquet"
    frame = rog_frame({**TWO, "qC": TWO["qA"]})
    frame.with_columns(pl.Series("answer", [["France"], None, []], pl.List(pl.String))).write_parquet(path)
    questions = load(DatasetConfig(name="mine", loader="rog", path=str(path)))
    assert [(q.id, q.answers) for q in questions] == [("qA", [["France"]]), ("qB", []), ("qC", [])]
    assert capsys.readouterr().err == (
        f"kgx: warning: dataset 'mine' ({path}): 2 of 3 questions have no gold answer (qB, qC); they stay in "
        f"every figure's denominator and score 0 (the run's no_gold counts them)\n"
    )


def test_every_format_is_checked_after_the_selection(tmp_path, capsys):
    path = tmp_path / "q.jsonl"
    rows = [("a", [["x"]]), ("b", []), ("c", [["", " "]]), ("d", [["."]])]  # no alias that normalises to text
    path.write_text("".join(json.dumps({"id": i, "question": f"{i}?", "answers": a}) + "\n" for i, a in rows))
    assert len(load(DatasetConfig(name="mine", path=str(path)))) == 4
    assert "3 of 4 questions have no gold answer (b, c, d)" in capsys.readouterr().err
    load(DatasetConfig(name="mine", path=str(path), limit=1))
    assert capsys.readouterr().err == ""


def test_a_run_counts_them_as_no_gold_and_scores_them_0(run, in_tmp, capsys):
    """The scripted backbone answers a question with its text: the question with gold is right,
    the one without counts in hits@1's denominator."""
    path = in_tmp / "q.jsonl"
    path.write_text(
        json.dumps({"id": "a", "question": "Who wrote Hamlet?", "answers": [["Who wrote Hamlet?"]]})
        + "\n"
        + json.dumps({"id": "b", "question": "Who wrote Faust?", "answers": []})
        + "\n"
    )
    outcome = run("method=io", "dataset=custom", f"dataset.path={path}")
    assert [(r.id, r.scores["hits1"]) for r in sorted(outcome.records, key=lambda r: r.id)] == [("a", 1.0), ("b", 0.0)]
    assert (outcome.summary["no_gold"], outcome.summary["n_questions"], outcome.summary["hits1"]) == (1.0, 2.0, 50.0)
    assert "1 of 2 questions have no gold answer (b)" in capsys.readouterr().err
