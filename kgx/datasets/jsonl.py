"""kgx's own question format (the bundled demo, and ``dataset=custom``): one JSON object per line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgx.core.config import DatasetConfig
from kgx.core.types import Question
from kgx.datasets.fields import field, topic_entities
from kgx.datasets.files import DataError, json_lines
from kgx.datasets.formats import dataset_format
from kgx.datasets.irn import TOPIC_NAMES


@dataset_format("jsonl")
def read_jsonl(path: Path, cfg: DatasetConfig) -> Iterator[Question]:
    """Lines of ``{id, question, topic_entities, answers, answer_ids, meta}``; ``answers`` holds
    one alias list per gold answer, and ``answer_ids`` moves into meta.

    ``topic_entities`` is ``{id: name}`` with the KG's ids, or a list of names that the run
    resolves to ids through its KG (kgx.run.preflight), for question files written without the
    KG's ids at hand. ``topic_entities``, ``answer_ids`` and ``meta`` may be left out, but when
    given they are checked here: a wrong shape would otherwise surface in the middle of a run,
    far from the line. Lines are read as questions are asked for, so a limit stops the reading.
    """
    for where, row in json_lines(path):
        answers = _answers(row, where)
        topics, names = _topics(row, where)
        answer_ids = field(row, "answer_ids", list, where) if "answer_ids" in row else []
        meta = field(row, "meta", dict, where) if "meta" in row else {}
        yield Question(
            id=_filled(str(field(row, "id", (str, int), where)), "id", where),
            text=_filled(field(row, "question", str, where), "question", where),
            topic_entities=topics,
            answers=answers,
            meta={**meta, "answer_ids": answer_ids, **({TOPIC_NAMES: names} if names else {})},
        )


def _answers(row: dict[str, Any], where: str) -> list[list[str]]:
    """``answers``: a list of non-empty alias lists of strings (an integer is read as its digits).
    A float, null or boolean is refused, not turned into the alias "nan", "None" or "True"."""
    answers = field(row, "answers", list, where)
    for i, aliases in enumerate(answers):
        if not (isinstance(aliases, list) and aliases):
            raise DataError(f"{where}: field 'answers' must be a list of alias lists; answers[{i}] is not one")
        for j, alias in enumerate(aliases):
            if isinstance(alias, bool) or not isinstance(alias, (str, int)):
                raise DataError(
                    f"{where}: field 'answers[{i}][{j}]' must be a string, found {type(alias).__name__} "
                    f'{alias!r}; write the answer as a string, as a reply would say it ("1.5", not 1.5)'
                )
    return [[str(alias) for alias in aliases] for aliases in answers]


def _filled(value: str, name: str, where: str) -> str:
    """A field that must say something: an empty id would name the trace file ``.json``."""
    if not value.strip():
        raise DataError(f"{where}: field '{name}' is empty")
    return value


def _topics(row: dict[str, Any], where: str) -> tuple[dict[str, str], list[str]]:
    """(``{id: name}``, names to resolve): one of the two is empty."""
    if "topic_entities" not in row:
        return {}, []
    if not isinstance(row["topic_entities"], list):
        return topic_entities(row, where, "topic_entities"), []
    names = row["topic_entities"]
    if not all(isinstance(n, str) and n.strip() for n in names):
        raise DataError(
            f"{where}: field 'topic_entities' must be an {{id: name}} object or a list of "
            f"entity names (non-empty strings)"
        )
    return {}, list(dict.fromkeys(n.strip() for n in names))
