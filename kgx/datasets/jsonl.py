"""kgx's own question format (the bundled demo): one JSON object per line."""
from __future__ import annotations

from pathlib import Path

from kgx.config import DatasetConfig
from kgx.datasets.fields import field
from kgx.datasets.files import DataError, json_lines
from kgx.types import Question


def read_jsonl(path: Path, cfg: DatasetConfig) -> list[Question]:
    """Lines of ``{id, question, topic_entities, answers, answer_ids, meta}``; ``answers`` holds
    one alias list per gold answer, and ``answer_ids`` moves into meta."""
    questions = []
    for where, row in json_lines(path):
        answers = field(row, "answers", list, where)
        if not all(isinstance(a, list) and a for a in answers):
            raise DataError(f"{where}: field 'answers' must be a list of alias lists")
        questions.append(Question(
            id=str(field(row, "id", (str, int), where)), text=field(row, "question", str, where),
            topic_entities=dict(row.get("topic_entities", {})),
            answers=[[str(x) for x in a] for a in answers],
            meta=dict(row.get("meta", {}), answer_ids=row.get("answer_ids", [])),
        ))
    return questions
