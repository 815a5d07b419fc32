"""PathQuestion (IRN): ``question<TAB>answer(a1/a2/.../)<TAB>gold path`` per line.

The parenthesised list is the question's whole answer set (IRN's readme: "answer, answer set,
answer path"), so each of its names is a gold answer. The path is ``subject#r1#e1#...#answer``;
PQ files end it with ``#<end>#answer``, PQL files do not. Entity names are KB names with
underscores (``united_kingdom``), which :func:`kgx.metrics.normalize` would glue into one word,
so each answer also gets its spaced form as an alias (``united kingdom``).
"""
from __future__ import annotations

from pathlib import Path

from kgx.config import DatasetConfig
from kgx.datasets.fields import position_id
from kgx.datasets.files import DataError, text_lines
from kgx.kg.build import name_id
from kgx.types import Question

END = "<end>"


def pathquestion(path: Path, cfg: DatasetConfig) -> list[Question]:
    """Questions of one PathQuestion file; meta keeps the gold path and its hop count."""
    return [_question(cfg, f"{path}:{lineno}", lineno, line) for lineno, line in text_lines(path)]


def _question(cfg: DatasetConfig, where: str, lineno: int, line: str) -> Question:
    parts = line.split("\t")
    if len(parts) != 3:
        raise DataError(f"{where}: expected 'question<TAB>answers<TAB>path', "
                        f"found {len(parts)} tab-separated fields")
    text, answers, chain = parts
    gold_path = _path(chain, where)
    names = _answer_set(answers, gold_path[-1], where)
    return Question(
        id=position_id(cfg.name, lineno), text=text.strip(),
        topic_entities={name_id(gold_path[0]): gold_path[0]},
        answers=[_aliases(name) for name in names],
        meta={"path": gold_path, "hops": len(gold_path) // 2},
    )


def _path(chain: str, where: str) -> list[str]:
    """``[subject, r1, e1, ..., answer]``, without PQ's redundant ``<end>#answer`` tail."""
    steps = chain.strip().split("#")
    if END in steps:
        end = steps.index(END)
        if steps[end + 1:] != steps[end - 1:end]:
            raise DataError(f"{where}: the path must end in '...#answer#{END}#answer'")
        steps = steps[:end]
    if len(steps) < 3 or len(steps) % 2 == 0 or not all(steps):
        raise DataError(f"{where}: the path must alternate entity#relation#...#entity")
    return steps


def _answer_set(field: str, answer: str, where: str) -> list[str]:
    """The names of ``answer(a1/a2/.../)``, this line's answer (the path's end) first.

    The path's end tells where the set begins, because names may contain parentheses
    (``PG_(USA)(PG_(USA)/)``); names never contain ``/``.
    """
    opening = f"{answer}("
    if not (field.startswith(opening) and field.endswith(")")):
        raise DataError(f"{where}: expected the answer field as '{answer}(a1/a2/.../)', found {field!r}")
    names = [n for n in field[len(opening):-1].split("/") if n]
    return list(dict.fromkeys([answer, *names]))


def _aliases(name: str) -> list[str]:
    spaced = name.replace("_", " ")
    return [name, spaced] if spaced != name else [name]
