"""``python -m kgx.score`` on RoG's and GNN-RAG's files: their records read, the authors' own rule
(kgx.results.rog_eval) pinned on hand-made lines and, with ``KGX_DATA_DIR``, GNN-RAG's published
Hit reproduced to the last digit; a file that matches no question, repeats ids or lacks a
prediction gets one line with its counts."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from kgx.core.types import Question
from kgx.datasets import DataError
from kgx.results import rog_eval
from kgx.results.released import authors_figures, figures, match, read_predictions
from kgx.score import main

GOLD = [
    Question(id="q1", text="What is the capital of Australia?", answers=[["Canberra"]]),
    Question(id="q2", text="Who wrote Hamlet?", answers=[["William Shakespeare", "Shakespeare"]]),
    Question(id="q3", text="Which rivers cross Paris?", answers=[["Seine"], ["Bièvre"]]),
]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_predictions_text_is_split_into_its_lines_the_first_being_the_top_answer(tmp_path):
    # RoG's predictions.jsonl: one answer per line, the question's gold beside it
    rows = [
        {
            "id": "q3",
            "question": "Which rivers cross Paris?",
            "prediction": "Marne\nSeine\n",
            "ground_truth": ["Seine", "Bièvre"],
        }
    ]
    (record,) = read_predictions(write_jsonl(tmp_path / "predictions.jsonl", rows)).records
    assert (record.format, record.prediction.answers, record.ground_truth) == (
        "rog",
        ["Marne", "Seine"],
        ("Seine", "Bièvre"),
    )
    # the authors: Seine is within the joined outputs (Hit), not the first (Hit1); 1 of 2 gold, 1 of 2 outputs
    (mine,) = authors_figures([record])
    assert mine == {"Accuracy": 0.5, "Hit": 1.0, "Hit1": 0.0, "F1": 0.5, "Precision": 0.5, "Recall": 0.5}
    # kgx's Hits@1 reads the top answer only; ToG's rule reads the text, without braces the whole of it
    assert figures(match([record], GOLD)[0]) == {"hits1": 0.0, "hits1_tog": 100.0, "hit_any": 100.0, "f1": 50.0}


def test_an_aog_line_with_its_own_ground_truth_is_read_as_aog(tmp_path):
    # AoG writes the gold beside its Answer: the record is AoG's, scored on the dataset's gold alone
    rows = [{"question": "What is the capital of Australia?", "ground_truth": "Sydney", "Answer": "Canberra"}]
    (record,) = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows)).records
    assert (record.format, record.prediction.answers, record.ground_truth) == ("aog", ["Canberra"], ())


def test_sampled_texts_are_ordered_by_frequency_and_an_evaluated_list_is_kept_as_it_stands():
    assert rog_eval.outputs(["Marne", "Seine", "Seine"], evaluated=False) == ["Seine", "Marne"]
    assert rog_eval.outputs(["Marne", "Seine", "Seine"], evaluated=True) == ["Marne", "Seine", "Seine"]


@pytest.mark.parametrize(
    "outputs, gold, hit, hit1",
    [
        (["The Shakespeare"], ["shakespeare"], 1.0, 1.0),  # articles and case go
        (["U.S.A."], ["USA"], 1.0, 1.0),  # punctuation is deleted
        (["1.5"], ["15"], 1.0, 1.0),  # SQuAD's normalisation: no exception for numbers (kgx's keeps "1.5")
        (["Business"], ["US"], 1.0, 1.0),  # a substring: "us" lies in "business"
        (["Sydney", "Canberra city"], ["Canberra"], 1.0, 0.0),
    ],
)
def test_the_authors_hit_is_a_normalised_gold_answer_within_the_outputs(outputs, gold, hit, hit1):
    found = rog_eval.question_figures(outputs, gold)
    assert (found["Hit"], found["Hit1"]) == (hit, hit1)


def evaluated_line(qid: str, prediction: list[str], gold: list[str], hit: int) -> dict:
    return {"id": qid, "prediction": prediction, "ground_truth": gold, "hit": hit, "hit1": hit, "f1": float(hit)}


def test_the_authors_figures_are_compared_with_their_eval_result(tmp_path, capsys):
    rows = [
        evaluated_line("demo-001", ["Canberra"], ["Canberra"], 1),
        evaluated_line("demo-002", ["Sydney"], ["Canberra"], 1),  # the line's own hit is wrong
    ]
    path = write_jsonl(tmp_path / "demo.detailed_eval_result.jsonl", rows)
    (tmp_path / "demo.eval_result.txt").write_text(
        "Accuracy: 50.0 Hit: 50.0 Hit1: 50.0 F1: 40.0 Precision: 50.0 Recall: 50.0"
    )
    main(["--dataset", "demo", "--predictions", str(path)])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: 2 records (rog 2); dataset demo: 48 questions, 46 without a prediction"
    assert "  Accuracy 50.00  Hit 50.00  Hit1 50.00  F1 50.00  Precision 50.00  Recall 50.00" in out
    assert "  demo.eval_result.txt: kgx's figures differ from the authors': F1 50.00 against their 40.00" in out
    assert "  each line's own figures, recomputed by kgx equal on: hit 1 of 2, hit1 1 of 2, f1 1 of 2 questions" in out


@pytest.mark.parametrize("name", ["predictions.jsonl", "other.jsonl"])
def test_eval_result_is_found_where_the_authors_evaluation_writes_it(tmp_path, name):
    (tmp_path / "eval_result.txt").write_text("Accuracy: 1.0 Hit: 85.68796068796068 Hit1: 2")
    found = rog_eval.stated_totals(tmp_path / name)
    if name == "other.jsonl":
        assert found is None
    else:
        assert found.figures == {"Accuracy": 1.0, "Hit": 85.68796068796068, "Hit1": 2.0}


# --------------------------------------------------------------------------- bad input


def test_a_file_whose_ids_match_no_question_is_refused_with_its_count(tmp_path):
    rows = [evaluated_line(f"WebQTest-{i}", ["x"], ["x"], 1) for i in range(3)]
    path = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(SystemExit) as stop:
        main(["--dataset", "demo", "--predictions", str(path)])
    assert str(stop.value) == (
        f"kgx.score: error: {path}: none of its 3 records is a question of dataset demo (48 questions, ids "
        "demo-001, demo-002, ...) by id or by question text (its ids WebQTest-0, WebQTest-1, WebQTest-2, ...); "
        "is --dataset the file's?"
    )


def test_repeated_ids_are_scored_once_by_their_last_record_and_said_in_one_line(tmp_path, capsys):
    rows = [
        evaluated_line("demo-001", ["Sydney"], ["Canberra"], 0),
        evaluated_line("demo-001", ["Melbourne"], ["Canberra"], 0),
        evaluated_line("demo-002", ["x"], ["x"], 1),
        evaluated_line("demo-001", ["Canberra"], ["Canberra"], 1),
    ]
    main(["--dataset", "demo", "--predictions", str(write_jsonl(tmp_path / "p.jsonl", rows)), "--rule", "exact"])
    out = capsys.readouterr().out.splitlines()
    assert out[1] == (
        "warning: 1 ids occur more than once (3 records: demo-001 3x); each question is scored once, by its "
        "last record (2 earlier records left out)"
    )
    assert "  Accuracy 100.00  Hit 100.00  Hit1 100.00  F1 100.00  Precision 100.00  Recall 100.00" in out


def test_records_without_a_prediction_are_refused_with_their_count_and_lines(tmp_path):
    rows = [evaluated_line("q1", ["Canberra"], ["Canberra"], 1)] + [
        {"id": f"q{i}", "ground_truth": ["x"]} for i in (2, 3)
    ]
    with pytest.raises(
        DataError,
        match=r"p\.jsonl: 2 of 3 records have no 'prediction' \(lines 2, 3\); a RoG/GNN-RAG record is \{id, prediction, ground_truth\}$",
    ):
        read_predictions(write_jsonl(tmp_path / "p.jsonl", rows))


@pytest.mark.parametrize(
    "row, message",
    [
        ({"id": "q1", "prediction": 3, "ground_truth": ["x"]}, "'prediction' must be a text or a list of texts"),
        ({"id": "q1", "prediction": "x", "ground_truth": "x"}, "'ground_truth' must be a list of answer names"),
        ({"prediction": "x", "ground_truth": ["x"]}, "no 'id'"),
    ],
)
def test_a_malformed_rog_line_names_the_file_line_and_field(tmp_path, row, message):
    with pytest.raises(DataError, match=rf"p\.jsonl:1: {re.escape(message)}"):
        read_predictions(write_jsonl(tmp_path / "p.jsonl", [row]))


# --------------------------------------------------------------------------- GNN-RAG's released files

GNN_RAG = {"webqsp": (1628, 11, 85.68796068796068, 79.1), "cwq": (3531, 0, 66.80826961200793, 63.5)}


@pytest.mark.skipif(
    not os.environ.get("KGX_DATA_DIR"), reason="KGX_DATA_DIR is unset: GNN-RAG's outputs are shared data"
)
@pytest.mark.parametrize("dataset", sorted(GNN_RAG))
def test_gnn_rag_hit_is_reproduced_exactly_under_the_authors_rule(dataset, capsys):
    n, missing, hit, hits1 = GNN_RAG[dataset]
    path = Path(os.environ["KGX_DATA_DIR"]) / f"reference_outputs/gnn_rag/gnn-rag-{dataset}.detailed_eval_result.jsonl"
    records = read_predictions(path).records
    assert rog_eval.totals(authors_figures(records))["Hit"] == hit  # the very float of eval_result.txt
    main(["--dataset", dataset, "--predictions", str(path)])
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(
        f"{n:,} records (rog {n:,}); dataset {dataset}: {n + missing:,} questions, {missing} without a prediction"
    )
    assert f"  exact  hits1       {hits1}  Hits@1: the top answer is a gold answer" in out
    assert any(
        line.startswith(f"  gnn-rag-{dataset}.eval_result.txt: the authors state")
        and f"Hit {hit:.2f}," in line
        and line.endswith("kgx's figures are exactly theirs (6 of 6)")
        for line in out
    )
    assert (
        f"  each line's own figures, recomputed by kgx equal on: hit {n:,} of {n:,}, hit1 {n:,} of {n:,}, f1 {n:,} of {n:,} questions"
        in out
    )
    assert re.fullmatch(rf"n={n} hits1={hits1} hits1_tog=[\d.]+ hit_any=[\d.]+ f1=[\d.]+ unmatched=0", out[-1])
