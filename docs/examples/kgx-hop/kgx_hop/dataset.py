"""``dataset.loader=qa_lines``: one question a line, ``question | answer; answer | topic entity``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kgx.core.config import DatasetConfig
from kgx.core.types import Question
from kgx.datasets import DataError, dataset_format
from kgx.datasets.irn import TOPIC_NAMES


@dataset_format("qa_lines")
def read(path: Path, cfg: DatasetConfig) -> Iterator[Question]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 3:
            raise DataError(f"{path}:{number}: expected 'question | answers | topic entity', got {len(parts)} fields")
        text, answers, topic = parts
        yield Question(
            id=f"{path.stem}-{number}",
            text=text,
            topic_entities={},  # given by name: kgx finds the KG's entity of that name
            answers=[[a.strip()] for a in answers.split(";") if a.strip()],
            meta={TOPIC_NAMES: [topic]},
        )
