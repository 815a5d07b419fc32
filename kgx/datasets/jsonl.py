"""kgx's own question format (the bundled demo): one JSON object per line."""
from __future__ import annotations

from pathlib import Path

from kgx.config import DatasetConfig
from kgx.datasets.fields import field, topic_entities
from kgx.datasets.files import DataError, json_lines
from kgx.types import Question


def read_jsonl(path: Path, cfg: DatasetConfig) -> list[Question]:
    """Lines of ``{id, question, topic_entities, answers, answer_ids, meta}``; ``answers`` holds
    one alias list per gold answer, and ``answer_ids`` moves into meta.

    ``topic_entities``, ``answer_ids`` and ``meta`` may be left out, but when given they are
    checked here: a wrong shape would otherwise surface in the middle of a run, far from the line.
    """
    questions = []
    for where, row in json_lines(path):
        answers = field(row, "answers", list, where)
        if not all(isinstance(a, list) and a for a in answers):
            raise DataError(f"{where}: field 'answers' must be a list of alias lists")
        topics = topic_entities(row, where, "topic_entities") if "topic_entities" in row else {}
        answer_ids = field(row, "answer_ids", list, where) if "answer_ids" in row else []
        meta = field(row, "meta", dict, where) if "meta" in row else {}
        questions.append(Question(
            id=str(field(row, "id", (str, int), where)), text=field(row, "question", str, where),
            topic_entities=topics, answers=[[str(x) for x in a] for a in answers],
            meta={**meta, "answer_ids": answer_ids},
        ))
    return questions
