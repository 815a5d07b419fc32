"""Released predictions of other systems, read and scored with the rules kgx's own runs use.

Each line of a predictions file is one JSON record; its format is recognised per record:

* kgx ``predictions.jsonl``: ``{id, question, prediction: {answer, answers, status}}``
* LMP: ``{question, result}``; the result is free text, usually a numbered list of answers
* PoG: ``{question | RawQuestion, results}``; results is JSON text with ``A.Answer`` (or ``Answer``)
* ToG: ``{question, results}``; results is free text with the answer in ``{...}``
* AoG: ``{question, Answer}``
* RoG and GNN-RAG: ``{id, prediction, ground_truth}`` (``predictions.jsonl``, the prediction a text
  of one answer per line; ``detailed_eval_result.jsonl``, a list, with the authors' ``hit``,
  ``hit1``, ``f1``). The record keeps the file's gold and those figures, which
  kgx.results.rog_eval scores under the authors' own rule.

A question id given by several records counts by its last one, as in a run's own log; the
report says how many were superseded. Every record becomes a Prediction (the text, and the
answers parsed from it) and is scored by kgx.core.metrics.score, the function runs use, so no
rule is defined twice. ``python -m kgx.score`` is the command line; ``kgx.report paper --released``
fills the papers' tables from the authors' released outputs through the same functions.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgx.core import metrics
from kgx.core.types import Prediction, Question
from kgx.datasets import DataError
from kgx.datasets.files import json_lines
from kgx.results import rog_eval

RULES = {"exact": "hits1", "tog": "hits1_tog", "lmp": "hit_any"}  # --rule -> metric of kgx.core.metrics
RULE_TEXT = {  # each rule in a few words, as kgx.score names it
    "exact": "Hits@1: the top answer is a gold answer",
    "tog": "ToG's exact match: a gold answer within the (braced) answer text, or it within a gold answer",
    "lmp": "LMP's hit: the output mentions a gold answer, or a listed answer lies within one",
}
FIGURES = (*RULES.values(), "f1")  # what kgx reports of a predictions file
OTHER_ANSWERS = ("result", "results", "Answer")  # LMP's, PoG's and ToG's, AoG's answer fields
ROG = "rog"  # the format of RoG's and GNN-RAG's records, which carry their authors' gold

LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+(.+?)\s*$")  # "1. x", "2) x", "- x", "* x"
BRACED = re.compile(r"\{([^{}]*)\}")
VERDICTS = {"yes", "no"}


@dataclass(frozen=True)
class PredictionRecord:
    """One prediction line: the question it answers and what was answered."""

    question: str  # "" where the file has none (GNN-RAG's evaluated lines)
    id: str | None
    prediction: Prediction
    format: str
    ground_truth: tuple[str, ...] = ()  # the gold the authors scored against (RoG, GNN-RAG)
    stated: dict[str, float] = field(default_factory=dict)  # the authors' own figures of this question


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Predictions:
    """A predictions file as scored: the records that count, in file order, how many earlier
    records a later record of the same question id replaced, and those ids with their counts."""

    records: list[PredictionRecord]
    superseded: int
    repeated: dict[str, int] = field(default_factory=dict)


def read_predictions(path: Path) -> Predictions:
    """The records of a predictions file; a line that is not a known record stops with file:line.

    Of several records with one question id the last counts, as in a run: kgx's own log appends
    a question again when a rerun computes it again (an error retried). The earlier ones are
    counted, never scored, so that no question counts twice and the report says how many there
    were. Lone surrogates are not refused here as in question files: this file is only read, and
    kgx's log writes a model's lone surrogate as a JSON escape.
    """
    if not path.is_file():
        raise DataError(f"predictions file not found: {path}")
    records, unanswered = [], []
    for where, row in json_lines(path, check_strings=False):
        if is_rog(row) and "prediction" not in row:
            unanswered.append(where.rsplit(":", 1)[1])
        else:
            records.append(to_record(row, where))
    if unanswered:
        shown = ", ".join(unanswered[:5]) + (f" and {len(unanswered) - 5} more" if len(unanswered) > 5 else "")
        raise DataError(
            f"{path}: {len(unanswered):,} of {len(records) + len(unanswered):,} records "
            f"{'has' if len(unanswered) == 1 else 'have'} no 'prediction' (line{'s' * (len(unanswered) > 1)} "
            f"{shown}); a RoG/GNN-RAG record is {{id, prediction, ground_truth}}"
        )
    last = {record.id: index for index, record in enumerate(records) if record.id is not None}
    kept = [record for index, record in enumerate(records) if record.id is None or last[record.id] == index]
    counts = Counter(record.id for record in records if record.id is not None)
    repeated = {qid: n for qid, n in counts.items() if n > 1}
    return Predictions(kept, len(records) - len(kept), repeated)


def to_record(row: dict[str, Any], where: str) -> PredictionRecord:
    """The record in kgx terms, whichever system wrote it."""
    if is_rog(row):
        return rog_record(row, where)
    question = row.get("question", row.get("RawQuestion"))
    if not isinstance(question, str):
        raise DataError(f"{where}: no 'question' (or 'RawQuestion') text")
    qid = str(row["id"]) if "id" in row else None
    if isinstance(row.get("prediction"), dict):
        return PredictionRecord(question, qid, kgx_prediction(row["prediction"], where), "kgx")
    if isinstance(row.get("result"), str):
        return PredictionRecord(question, qid, from_list_text(row["result"]), "lmp")
    if isinstance(row.get("results"), str):
        pog = from_json_text(row["results"])
        if pog is not None:
            return PredictionRecord(question, qid, pog, "pog")
        return PredictionRecord(question, qid, from_braced_text(row["results"]), "tog")
    if "Answer" in row:
        return PredictionRecord(question, qid, from_answer_value(row["Answer"]), "aog")
    raise DataError(
        f"{where}: not a known prediction format (keys: {sorted(row)}); expected kgx "
        "'prediction', LMP 'result', PoG/ToG 'results' or AoG 'Answer'"
    )


def is_rog(row: dict[str, Any]) -> bool:
    """A RoG or GNN-RAG line: the gold beside the prediction, and no other system's answer field
    (AoG's lines carry a ``ground_truth`` too, beside their ``Answer``)."""
    return (
        "ground_truth" in row
        and not any(key in row for key in OTHER_ANSWERS)
        and not isinstance(row.get("prediction"), dict)
    )


def rog_record(row: dict[str, Any], where: str) -> PredictionRecord:
    """A RoG or GNN-RAG line: its outputs as the authors' evaluation reads them (rog_eval.outputs),
    the first being the top answer, with the file's gold and the line's own figures."""
    prediction, gold = row["prediction"], row["ground_truth"]
    if not isinstance(prediction, (str, list)) or not all(isinstance(p, str) for p in prediction):
        raise DataError(f"{where}: 'prediction' must be a text or a list of texts (RoG/GNN-RAG)")
    if not isinstance(gold, list) or not all(isinstance(g, str) for g in gold):
        raise DataError(f"{where}: 'ground_truth' must be a list of answer names (RoG/GNN-RAG)")
    if "id" not in row:
        raise DataError(f"{where}: no 'id' (a RoG/GNN-RAG record is {{id, prediction, ground_truth}})")
    stated = rog_eval.stated_per_question(row)
    items = rog_eval.outputs(prediction, evaluated=bool(stated))
    question = row.get("question")
    return PredictionRecord(
        question if isinstance(question, str) else "",
        str(row["id"]),
        Prediction(answer="\n".join(items), answers=items),
        ROG,
        tuple(gold),
        stated,
    )


def kgx_prediction(value: dict[str, Any], where: str) -> Prediction:
    """A kgx run's own prediction, taken as the run scored it (errors included)."""
    answer, answers = value.get("answer", ""), value.get("answers", [])
    if not (isinstance(answer, str) and isinstance(answers, list) and all(isinstance(a, str) for a in answers)):
        raise DataError(f"{where}: 'prediction' needs 'answer' text and an 'answers' list of strings")
    return Prediction(answer=answer, answers=answers, status=value.get("status", "ok"))


def from_list_text(text: str) -> Prediction:
    """LMP's answer text: the items of its list are the answers; text without a list is one answer."""
    items = [m.group(1) for m in map(LIST_ITEM.match, text.splitlines()) if m]
    return Prediction(answer=text, answers=items or _whole(text))


def from_json_text(text: str) -> Prediction | None:
    """PoG's answer text, a JSON object with ``A.Answer`` (or ``Answer``); None for any other
    text, which PoG's own evaluation then reads whole, as ToG's does."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        data = json.loads(text[start:])
    except json.JSONDecodeError:
        return None
    if isinstance(data, dict) and isinstance(data.get("A"), dict) and "Answer" in data["A"]:
        return from_answer_value(data["A"]["Answer"])
    if isinstance(data, dict) and "Answer" in data:
        return from_answer_value(data["Answer"])
    return None


def from_braced_text(text: str) -> Prediction:
    """ToG's answer text: each ``{...}`` that is not a yes/no verdict is an answer."""
    items = [g.strip() for g in BRACED.findall(text) if g.strip() and g.strip().lower() not in VERDICTS]
    return Prediction(answer=text, answers=items or _whole(text))


def from_answer_value(value: Any) -> Prediction:
    """An ``Answer`` field: a string is one answer, a list several, null none."""
    if isinstance(value, list):
        answers = [str(v) for v in value if v is not None]
        return Prediction(answer=", ".join(answers), answers=answers)
    text = "" if value is None else str(value)
    return Prediction(answer=text, answers=_whole(text))


def _whole(text: str) -> list[str]:
    return [text.strip()] if text.strip() else []


# --------------------------------------------------------------------------- matching and scoring


def match(
    records: list[PredictionRecord], questions: list[Question]
) -> tuple[list[tuple[Question, PredictionRecord]], int]:
    """Pair records with gold questions; returns the pairs and the count of unmatched records.

    A record carrying a known question id (kgx's own) takes that question. Otherwise it takes
    the first question, in file order, with the same normalised text that no earlier record
    took: a dataset that repeats a question text (PathQuestion does) then pairs its copies in
    order, and a record beyond the copies counts as unmatched rather than scoring twice.
    """
    by_id = {q.id: q for q in questions}
    by_text: dict[str, deque[Question]] = defaultdict(deque)
    for q in questions:
        by_text[metrics.normalize(q.text)].append(q)
    taken: set[str] = set()
    pairs = []
    for record in records:
        question = by_id.get(record.id) if record.id is not None else None
        if question is None or question.id in taken:
            question = _next_free(by_text[metrics.normalize(record.question)], taken)
        if question is not None:
            taken.add(question.id)
            pairs.append((question, record))
    return pairs, len(records) - len(pairs)


def _next_free(candidates: deque[Question], taken: set[str]) -> Question | None:
    while candidates and candidates[0].id in taken:
        candidates.popleft()
    return candidates.popleft() if candidates else None


def figures(pairs: list[tuple[Question, PredictionRecord]]) -> dict[str, float]:
    """Every rule's figure (:data:`FIGURES`: its metric, and mean F1), as percentages of the
    matched questions; 0 for each when nothing matched."""
    if not pairs:
        return {name: 0.0 for name in FIGURES}
    scores = [metrics.score(q, r.prediction) for q, r in pairs]
    return {name: 100 * sum(s[name] for s in scores) / len(scores) for name in FIGURES}


def summary(pairs: list[tuple[Question, PredictionRecord]], rule: str) -> tuple[float, float]:
    """(hits@1 under ``rule``, mean F1), as percentages of the matched questions."""
    found = figures(pairs)
    return found[RULES[rule]], found["f1"]


def authors_figures(records: list[PredictionRecord]) -> list[dict[str, float]]:
    """Each record's figures under the authors' own rule against the file's gold (RoG and
    GNN-RAG records: kgx.results.rog_eval), in file order."""
    return [rog_eval.question_figures(r.prediction.answers, r.ground_truth) for r in records]
