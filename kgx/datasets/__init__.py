"""Benchmark questions as ``Question`` objects, whatever file format they come in."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from kgx.config import DatasetConfig
from kgx.types import Question

BUNDLED = Path(__file__).resolve().parent / "demo"


class DataError(ValueError):
    """A data file that is missing or malformed; the message names the file (and line)."""


def read_jsonl(path: Path) -> list[Question]:
    """kgx's own format, one question per line: id, question, topic_entities, answers, meta."""
    questions = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{where}: not JSON ({exc.msg})") from exc
            for key in ("id", "question", "answers"):
                if key not in row:
                    raise DataError(f"{where}: missing field '{key}'")
            answers = row["answers"]
            if not isinstance(answers, list) or not all(isinstance(a, list) and a for a in answers):
                raise DataError(f"{where}: field 'answers' must be a list of alias lists")
            questions.append(Question(
                id=str(row["id"]), text=row["question"],
                topic_entities=dict(row.get("topic_entities", {})),
                answers=[[str(x) for x in a] for a in answers],
                meta=dict(row.get("meta", {}), answer_ids=row.get("answer_ids", [])),
            ))
    return questions


LOADERS: dict[str, Callable[[Path], list[Question]]] = {"jsonl": read_jsonl}


def load(cfg: DatasetConfig) -> list[Question]:
    if cfg.loader not in LOADERS:
        raise DataError(f"dataset.loader='{cfg.loader}': known loaders are {sorted(LOADERS)}")
    path = Path(cfg.path) if cfg.path else BUNDLED / "questions.jsonl"
    if not path.is_file():
        how = cfg.source or "set dataset.path to a local copy of the file"
        raise DataError(f"dataset '{cfg.name}': file not found: {path}. To get it: {how}")
    questions = LOADERS[cfg.loader](path)
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise DataError(f"{path}: question id '{dup}' appears more than once")
    return questions if cfg.limit is None else questions[: cfg.limit]
