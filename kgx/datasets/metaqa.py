"""MetaQA (vanilla): ``question with [topic entity]<TAB>answer1|answer2`` per line.

The KG is name-level (WikiMovies), so a topic entity's id is its name; the KG builder turns
names into stable ids later.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import zip_longest
from pathlib import Path

from kgx.core.config import DatasetConfig
from kgx.core.sources import name_id
from kgx.core.types import Question
from kgx.datasets.fields import one_alias_each, position_id
from kgx.datasets.files import DataError, locate, text_lines
from kgx.datasets.formats import dataset_format

TOPIC = re.compile(r"\[([^\[\]]+)\]")


@dataset_format("metaqa")
def metaqa(path: Path, cfg: DatasetConfig) -> Iterator[Question]:
    """Questions of one MetaQA file, read as they are asked for; with ``cfg.qtype``, meta gets
    each line's question type (``movie_to_director_to_movie``) and the hop count it spells out."""
    if not cfg.qtype:
        for lineno, line in text_lines(path):
            yield _question(cfg, path, lineno, line, None)
        return
    qtype_file = locate(cfg, cfg.qtype)
    lines, qtypes = text_lines(path), text_lines(qtype_file)
    paired = 0
    for (lineno, line), (_, qtype) in zip_longest(lines, qtypes, fillvalue=(0, None)):
        if line is None or qtype is None:  # one file ended first: count both to say so
            questions = paired + (line is not None) + sum(1 for _ in lines)
            types = paired + (qtype is not None) + sum(1 for _ in qtypes)
            raise DataError(
                f"{qtype_file}: {types} question types for the {questions} questions of "
                f"{path}; the files must align line by line"
            )
        paired += 1
        yield _question(cfg, path, lineno, line, qtype.strip())


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
