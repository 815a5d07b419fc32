"""RoG's and GNN-RAG's own evaluation, to reproduce the authors' figures from their released files.

RoG (Luo et al., ICLR 2024) and GNN-RAG (Mavromatis and Karypis, 2024) score their
``predictions.jsonl`` with ``src/qa_prediction/evaluate_results.py`` (RManLuo/reasoning-on-graphs;
cmavro/GNN-RAG ``llm/src/qa_prediction/``), which writes ``detailed_eval_result.jsonl`` (one line
per question with its ``hit``, ``hit1``, ``f1``) and ``eval_result.txt`` (the means). Their rule:

* a prediction text is split into its lines, the outputs (GNN-RAG strips the text first; a list
  of sampled texts is counted and ordered by frequency, duplicates merged);
* each text is normalised as SQuAD does: lower case, ASCII punctuation deleted, the articles
  a/an/the replaced by a space, whitespace collapsed (RoG's ``<pad>`` pattern is looked for after
  the punctuation is gone, so it never matches, and is left out here);
* **Hit**: some gold answer, normalised, is a substring of the outputs joined with spaces;
* **Hit1**: some gold answer is a substring of the first output;
* **F1**: ``matched`` is the number of gold answers within the joined outputs; precision is
  ``matched`` over the number of outputs, recall (also printed as Accuracy) ``matched`` over the
  number of gold answers.

The gold is the file's own ``ground_truth``, RoG's dataset answers (HF ``rmanluo/RoG-webqsp`` and
``RoG-cwq``). kgx's rules are other rules: kgx.core.metrics' Hits@1 needs the first output to
*be* a gold answer, and its ``hit_any`` also reads numbers and dates as values. This module is
the authors' rule only, so that their published figures can be checked to the last digit.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

FIGURES = ("Accuracy", "Hit", "Hit1", "F1", "Precision", "Recall")  # eval_result.txt's, in its order
PER_QUESTION = ("hit", "hit1", "f1")  # a detailed_eval_result.jsonl line's own figures that kgx checks
RULE = (
    "RoG's and GNN-RAG's evaluate_results.py: Hit when some gold answer lies within the outputs joined "
    "(Hit1: within the first output), after SQuAD normalisation, against the file's own ground_truth"
)

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_STATED = re.compile(r"(\w+): (-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def normalize(text: str) -> str:
    """The authors' ``normalize``: SQuAD's, with no exception for numbers (kgx's keeps ``1.5``)."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def outputs(prediction: str | list[str], evaluated: bool) -> list[str]:
    """The outputs the authors' evaluation scores: a text's lines; a list of sampled texts by
    frequency, or, in a file their evaluation wrote (``evaluated``), as it stands."""
    if isinstance(prediction, str):
        return prediction.strip().split("\n")
    if evaluated:
        return list(prediction)
    return [text for text, _ in Counter(prediction).most_common()]


def question_figures(items: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    """One question's figures under the authors' rule, as fractions (Hit and Hit1 are 0 or 1).
    Where their code would divide by zero (no outputs, no gold) the figures are 0."""
    joined = normalize(" ".join(items))
    matched = sum(normalize(answer) in joined for answer in gold)
    precision = matched / len(items) if items else 0.0
    recall = matched / len(gold) if gold else 0.0
    first = normalize(items[0]) if items else None
    return {
        "Accuracy": recall,
        "Hit": float(matched > 0),
        "Hit1": float(first is not None and any(normalize(a) in first for a in gold)),
        "F1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "Precision": precision,
        "Recall": recall,
    }


def totals(per_question: Sequence[dict[str, float]]) -> dict[str, float]:
    """The means in percent, summed in file order as the authors' code does: the same floats."""
    return {name: sum(q[name] for q in per_question) * 100 / len(per_question) for name in FIGURES}


@dataclass(frozen=True)
class Stated:
    """The authors' own figures: the means of ``eval_result.txt`` beside the file."""

    path: Path
    figures: dict[str, float]


def stated_totals(predictions: Path) -> Stated | None:
    """``eval_result.txt`` where the authors' evaluation writes it (``predictions.jsonl`` and
    ``detailed_eval_result.jsonl`` beside it; a copy prefixed as the file is, as in kgx's data);
    None when there is none or it holds none of :data:`FIGURES`."""
    for suffix in ("detailed_eval_result.jsonl", "predictions.jsonl"):
        if predictions.name.endswith(suffix):
            for name in (predictions.name[: -len(suffix)] + "eval_result.txt", "eval_result.txt"):
                path = predictions.with_name(name)
                if path.is_file():
                    found = {k: float(v) for k, v in _STATED.findall(path.read_text(encoding="utf-8"))}
                    figures = {k: found[k] for k in FIGURES if k in found}
                    return Stated(path, figures) if figures else None
    return None


def stated_per_question(row: dict[str, Any]) -> dict[str, float]:
    """A detailed_eval_result line's own figures (:data:`PER_QUESTION`) that are numbers."""
    return {k: float(row[k]) for k in PER_QUESTION if isinstance(row.get(k), (int, float))}


def agreement(computed: Sequence[dict[str, float]], stated: Sequence[dict[str, float]]) -> dict[str, tuple[int, int]]:
    """Per figure of :data:`PER_QUESTION`: (questions where kgx's recomputation equals the line's
    own figure, questions whose line states it)."""
    names = {"hit": "Hit", "hit1": "Hit1", "f1": "F1"}
    out = {}
    for field, name in names.items():
        pairs = [(c[name], s[field]) for c, s in zip(computed, stated) if field in s]
        if pairs:
            out[field] = (sum(abs(c - s) < 1e-9 for c, s in pairs), len(pairs))
    return out
