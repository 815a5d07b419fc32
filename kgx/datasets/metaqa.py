"""MetaQA (vanilla): ``question with [topic entity]<TAB>answer1|answer2`` per line.

The KG is name-level (WikiMovies), so a topic entity's id is its name; the KG builder turns
names into stable ids later.
"""

from __future__ import annotations

import re
from pathlib import Path

from kgx.core.config import DatasetConfig
from kgx.core.types import Question
from kgx.datasets.fields import one_alias_each, position_id
from kgx.datasets.files import DataError, locate, text_lines
from kgx.kg.name_level import name_id

TOPIC = re.compile(r"\[([^\[\]]+)\]")


def metaqa(path: Path, cfg: DatasetConfig) -> list[Question]:
    """Questions of one MetaQA file; with ``cfg.qtype``, meta gets each line's question type
    (``movie_to_director_to_movie``) and the hop count it spells out."""
    lines = list(text_lines(path))
    if not cfg.qtype:
        return [_question(cfg, path, lineno, line, None) for lineno, line in lines]
    qtypes = _qtypes(locate(cfg, cfg.qtype), path, len(lines))
    return [_question(cfg, path, lineno, line, qtype) for (lineno, line), qtype in zip(lines, qtypes)]


def _qtypes(path: Path, questions: Path, count: int) -> list[str]:
    """``qa_test_qtype.txt``: the type of the question on the same line of ``questions``."""
    qtypes = [line.strip() for _, line in text_lines(path)]
    if len(qtypes) != count:
        raise DataError(
            f"{path}: {len(qtypes)} question types for the {count} questions of "
            f"{questions}; the files must align line by line"
        )
    return qtypes


def _question(cfg: DatasetConfig, path: Path, lineno: int, line: str, qtype: str | None) -> Question:
    where = f"{path}:{lineno}"
    parts = line.split("\t")
    if len(parts) != 2:
        raise DataError(f"{where}: expected 'question<TAB>answers', found {len(parts)} tab-separated fields")
    text, answers = parts
    topics = TOPIC.findall(text)
    if len(topics) != 1:
        raise DataError(f"{where}: expected one [topic entity] in the question, found {len(topics)}")
    gold = one_alias_each(answers.split("|"))
    if not gold:
        raise DataError(f"{where}: no answers after the tab")
    name = topics[0].strip()
    meta = {} if qtype is None else {"qtype": qtype, "hops": qtype.count("_to_")}
    return Question(
        id=position_id(cfg.name, lineno),
        text=text.replace(f"[{topics[0]}]", topics[0]).strip(),
        topic_entities={name_id(name): name},
        answers=gold,
        meta=meta,
    )
