"""``python -m kgx.score``: each prediction format read, each rule pinned on hand-made records,
matching by question text, and (with ``KGX_DATA_DIR``) LMP's published WebQSP figure."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from kgx.core.types import Question
from kgx.datasets import DataError
from kgx.results.released import match, read_predictions, summary
from kgx.score import main

GOLD = [
    Question(id="q1", text="What is the capital of Australia?", answers=[["Canberra"]]),
    Question(id="q2", text="Who wrote Hamlet?", answers=[["William Shakespeare", "Shakespeare"]]),
    Question(id="q3", text="Which rivers cross Paris?", answers=[["Seine"], ["Bièvre"]]),
]

# One record per format; the comments give (exact, tog, lmp) as scored below.
RECORDS = [
    # kgx: top answer right under every rule
    {
        "id": "q1",
        "question": "What is the capital of Australia?",
        "prediction": {"answer": "{Canberra}", "answers": ["Canberra"], "status": "ok"},
    },
    # LMP: numbered list, right answer second -> exact misses; the text contains it
    {"question": "who wrote hamlet", "result": "Here are the answers:\n\n1. Christopher Marlowe\n2. Shakespeare"},
    # PoG: JSON answer "Seine, France" -> not an exact alias, but contains one
    {
        "RawQuestion": "Which rivers cross Paris?",
        "results": json.dumps({"A": {"Sufficient": "Yes", "Answer": "Seine, France"}, "R": "..."}),
    },
]
EXPECTED = {"exact": 100 / 3, "tog": 100.0, "lmp": 100.0}


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def scores(tmp_path, rows, gold=GOLD, rule="exact"):
    """((hits, f1), unmatched) of ``rows`` written as a predictions file and scored against ``gold``."""
    pairs, unmatched = match(read_predictions(write_jsonl(tmp_path / "p.jsonl", rows)).records, gold)
    return summary(pairs, rule), unmatched


@pytest.mark.parametrize("rule", sorted(EXPECTED))
def test_each_rule_on_kgx_lmp_and_pog_records(tmp_path, rule):
    (hits, f1), unmatched = scores(tmp_path, RECORDS, rule=rule)
    assert hits == pytest.approx(EXPECTED[rule]) and unmatched == 0
    # F1 over parsed answers: {Canberra} 1.0; {Marlowe, Shakespeare} 2/3; {"Seine, France"} vs 2 gold 0.0
    assert f1 == pytest.approx(100 * (1 + 2 / 3 + 0) / 3)


@pytest.mark.parametrize(
    "results, exact, tog",
    [
        ("{Yes}. Based on the triplets, the answer is {Canberra}.", 100.0, 100.0),  # the verdict is skipped
        ("I think it is {Sydney}, not Canberra.", 0.0, 0.0),  # ToG reads the first braces only
        ("The capital is Canberra.", 0.0, 100.0),  # no braces: the whole text, by containment
        ('{"A": {"Sufficient": "Yes", "Answer": ["Canberra", "Syd', 0.0, 100.0),  # PoG JSON cut short: read whole
    ],
)
def test_tog_records_are_read_through_their_braces(tmp_path, results, exact, tog):
    rows = [{"question": "What is the capital of Australia?", "results": results}]
    assert scores(tmp_path, rows, rule="exact")[0][0] == exact
    assert scores(tmp_path, rows, rule="tog")[0][0] == tog


@pytest.mark.parametrize(
    "answer, exact, tog, lmp",
    [
        ("Canberra", 100.0, 100.0, 100.0),
        ("Canberra, ACT", 0.0, 100.0, 100.0),
        (["Sydney", "Canberra"], 0.0, 100.0, 100.0),  # a list: the first is the top answer
        (None, 0.0, 0.0, 0.0),
    ],
)
def test_aog_answer_fields(tmp_path, answer, exact, tog, lmp):
    rows = [{"question": "What is the capital of Australia?", "Answer": answer, "correct": True}]
    got = {rule: scores(tmp_path, rows, rule=rule)[0][0] for rule in ("exact", "tog", "lmp")}
    assert got == {"exact": exact, "tog": tog, "lmp": lmp}


def test_list_items_are_answers_and_lmp_matches_them_inside_gold_aliases(tmp_path):
    gold = [Question(id="h", text="Who wrote Hamlet?", answers=[["William Shakespeare"]])]
    rows = [
        {"question": "Who wrote Hamlet?", "result": "Candidates:\n\n1. Shakespeare\n2) Marlowe\n\nBoth wrote plays."}
    ]
    assert read_predictions(write_jsonl(tmp_path / "p.jsonl", rows)).records[0].prediction.answers == [
        "Shakespeare",
        "Marlowe",
    ]
    got = {rule: scores(tmp_path, rows, gold, rule)[0][0] for rule in ("exact", "tog", "lmp")}
    assert got == {"exact": 0.0, "tog": 0.0, "lmp": 100.0}


def test_a_kgx_error_record_scores_zero_as_in_runs(tmp_path):
    rows = [
        {
            "id": "q1",
            "question": "What is the capital of Australia?",
            "prediction": {"answer": "Canberra", "answers": ["Canberra"], "status": "error"},
        }
    ]
    assert scores(tmp_path, rows, rule="lmp")[0] == (0.0, 0.0)


def test_unmatched_records_are_counted_not_scored(tmp_path):
    rows = [
        *RECORDS,
        {"question": "What is the capital of France?", "result": "1. Paris"},
        {"question": "Who wrote Hamlet?", "result": "1. Shakespeare"},
    ]  # a second answer to q2
    (hits, _), unmatched = scores(tmp_path, rows, rule="tog")
    assert unmatched == 2 and hits == 100.0


def test_repeated_question_texts_pair_in_order_and_ids_win(tmp_path):
    gold = [Question(id="a", text="Who?", answers=[["X"]]), Question(id="b", text="who", answers=[["Y"]])]
    rows = [{"question": "Who?", "result": "1. X"}, {"question": "WHO", "result": "1. Y"}]
    assert scores(tmp_path, rows, gold)[0][0] == 100.0
    by_id = [
        {"id": "b", "question": "Who?", "prediction": {"answer": "Y", "answers": ["Y"]}},
        {"question": "Who?", "result": "1. X"},
    ]
    assert scores(tmp_path, by_id, gold) == ((100.0, 100.0), 0)


def kgx_record(qid: str, answer: str, status: str = "ok") -> dict:
    return {"id": qid, "question": "?", "prediction": {"answer": answer, "answers": [answer], "status": status}}


def test_a_repeated_id_counts_once_by_its_last_record_as_in_a_run(tmp_path):
    # kgx's log as a rerun leaves it: q1 failed, then was computed again and appended
    rows = [
        kgx_record("q1", "", "error"),
        kgx_record("q2", "Hamlet"),
        kgx_record("q1", "Canberra"),
        kgx_record("q3", "Seine"),
        kgx_record("q2", "William Shakespeare"),
    ]
    predictions = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows))
    assert predictions.superseded == 2
    assert [(r.id, r.prediction.answer) for r in predictions.records] == [
        ("q1", "Canberra"),
        ("q3", "Seine"),
        ("q2", "William Shakespeare"),
    ]
    pairs, unmatched = match(predictions.records, GOLD)
    assert summary(pairs, "exact") == (100.0, pytest.approx(100 * (1 + 1 + 2 / 3) / 3)) and unmatched == 0


def test_the_report_counts_superseded_records(tmp_path, capsys):
    rows = [kgx_record("demo-001", "Sydney"), kgx_record("demo-003", "Shakespeare"), kgx_record("demo-001", "Canberra")]
    main(["--dataset", "demo", "--predictions", str(write_jsonl(tmp_path / "p.jsonl", rows)), "--rule", "exact"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        f"{tmp_path / 'p.jsonl'}: 2 records (kgx 2), and 1 superseded by a later record of the "
        "same id; dataset demo: 48 questions, 46 without a prediction"
    )
    assert lines[-1] == "n=2 hits1=100.0 f1=100.0 unmatched=0"


def test_a_lone_surrogate_in_an_answer_is_scored_not_refused(tmp_path):
    # kgx's log writes a model's lone surrogate as a JSON escape; the scorer only reads it
    rows = [{"id": "q1", "question": "?", "prediction": {"answer": "{Canberra} \ud83c", "answers": ["Canberra"]}}]
    assert "\\ud83c" in write_jsonl(tmp_path / "p.jsonl", rows).read_text()
    assert scores(tmp_path, rows, rule="exact") == ((100.0, 100.0), 0)


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", r"p\.jsonl:2: not JSON"),
        ('{"answer": "x"}', r"p\.jsonl:2: no 'question'"),
        (
            '{"question": "Who?", "output": "x"}',
            r"p\.jsonl:2: not a known prediction format \(keys: \['output', 'question'\]\)",
        ),
        ('{"question": "Who?", "prediction": {"answer": "x", "answers": "x"}}', r"p\.jsonl:2: 'prediction' needs"),
    ],
)
def test_bad_lines_name_the_file_and_line(tmp_path, line, message):
    path = tmp_path / "p.jsonl"
    path.write_text('{"question": "Who?", "result": "1. X"}\n' + line + "\n")
    with pytest.raises(DataError, match=message):
        read_predictions(path)


def test_command_line_prints_the_figures_last(tmp_path, capsys):
    rows = [
        {
            "id": "demo-001",
            "question": "What is the capital of Australia?",
            "prediction": {"answer": "Canberra", "answers": ["Canberra"]},
        },
        {"question": "what is the capital of australia", "result": "1. Canberra"},
        {"question": "Not a demo question?", "result": "1. x"},
    ]
    main(["--dataset", "demo", "--predictions", str(write_jsonl(tmp_path / "p.jsonl", rows)), "--rule", "exact"])
    lines = capsys.readouterr().out.splitlines()
    assert "3 records (lmp 2, kgx 1); dataset demo: 48 questions, 47 without a prediction" in lines[0]
    assert lines[-1] == "n=1 hits1=100.0 f1=100.0 unmatched=2"


def test_command_line_reports_a_bad_line_and_exits(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"question": "Who?", "result": "1. X"}\nnot json\n')
    with pytest.raises(SystemExit, match=rf"kgx.score: error: {re.escape(str(path))}:2: not JSON"):
        main(["--dataset", "demo", "--predictions", str(path), "--rule", "lmp"])


@pytest.mark.skipif(not os.environ.get("KGX_DATA_DIR"), reason="KGX_DATA_DIR is unset: the LMP outputs are shared data")
def test_lmp_webqsp_gpt4_outputs_score_as_published_with_webqsp_json_gold(capsys):
    path = os.path.join(os.environ["KGX_DATA_DIR"], "reference_outputs/lmp/lmp_webqsp_gpt-4_1hop.jsonl")
    main(["--dataset", "webqsp", "--predictions", path, "--rule", "lmp"])
    last = capsys.readouterr().out.splitlines()[-1]
    n, hits, unmatched = re.fullmatch(r"n=(\d+) hits1=([\d.]+) f1=[\d.]+ unmatched=(\d+)", last).groups()
    assert (int(n), int(unmatched)) == (1639, 0)
    assert float(hits) == pytest.approx(87.5, abs=0.3)
