"""RoG's per-question subgraph datasets (HF ``rmanluo/RoG-webqsp``, ``rmanluo/RoG-cwq``) as questions.

A row holds ``id``, ``question``, ``answer`` (names), ``q_entity`` (topic entity names),
``a_entity`` (the answers that are entities of its subgraph) and ``graph``. The KG built from the
same files (``kg=subgraph``, :mod:`kgx.kg.pipelines.rog_subgraphs`) names every entity by
:func:`kgx.core.sources.name_id`, so topic entities and answer entities get their KG ids here,
without the KG (a mid stays itself). ``a_entity`` becomes ``meta.answer_ids``: what reachability
and the failure breakdown look for in the subgraph. The ``graph`` column, most of a file, is not
read here: the KG build reads it once and caches its store.

``path`` is one parquet file or a folder of the hub's shards, of which ``dataset.split``'s are
read in name order (``kgx.core.rog_files``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgx.core.config import DatasetConfig
from kgx.core.rog_files import rog_files, rows
from kgx.core.sources import SourceError, name_id
from kgx.core.types import Question
from kgx.datasets.fields import one_alias_each
from kgx.datasets.files import DataError
from kgx.datasets.formats import dataset_format

COLUMNS = ("id", "question", "answer", "q_entity", "a_entity")


@dataset_format("rog", folders=True)
def rog(path: Path, cfg: DatasetConfig) -> list[Question]:
    """Every question of the RoG file(s) at ``path``; a bad row stops the load naming file and row."""
    try:
        files = rog_files(path, cfg.split)
        found = list(rows(files, COLUMNS))
    except SourceError as exc:
        raise DataError(str(exc)) from None
    return [_question(f"{file}: row {index}", values) for file, index, values in found]


def _question(where: str, values: tuple[Any, ...]) -> Question:
    qid, text, answer, q_entity, a_entity = values
    if not isinstance(qid, str) or not qid:
        raise DataError(f"{where}: column id must be a non-empty string, found {qid!r}")
    if not isinstance(text, str):
        raise DataError(f"{where} (question {qid}): column question must be a string, found {text!r}")
    return Question(
        id=qid,
        text=text,
        topic_entities={name_id(n): n for n in _names(q_entity, "q_entity", where)},
        answers=one_alias_each(_names(answer, "answer", where)),
        meta={"answer_ids": [name_id(n) for n in dict.fromkeys(_names(a_entity, "a_entity", where))]},
    )


def _names(value: Any, column: str, where: str) -> list[str]:
    """A list column's non-empty names (null is an empty list)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(n, str) or n is None for n in value):
        raise DataError(f"{where}: column {column} must be a list of strings, found {value!r}")
    return [n.strip() for n in value if n and n.strip()]
