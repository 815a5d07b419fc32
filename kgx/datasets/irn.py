"""IRN's question files (Zhou et al. 2018): PathQuestion and WC2014, one question per line.

Tab-separated fields, the first three always there:

1. the question;
2. the answer: ``a``, or PathQuestion's ``a(a1/a2/.../)`` with the whole answer set;
3. the gold path ``subject#r1#e1#...#answer`` (PQ files end it ``#answer#<end>#answer``);
   WC2014's conjunctive questions (WC-C) join one path per topic entity with ``*``;
4. WC2014's answer set, ``a1/a2/.../``;
5. and 6. WC2014's context triples and its list of topic entities, not read: the topic entities
   are the paths' subjects, which the paths spell the same way.

The answer set holds every gold answer (IRN's readme: "answer, answer set, answer path"), the
line's own answer first. KB names use underscores (``Tigres_UANL``), which
:func:`kgx.core.metrics.normalize` would glue into one word, so each answer also gets its spaced
form as an alias. A malformed line stops the load naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kgx.core.config import DatasetConfig
from kgx.core.types import Question
from kgx.datasets.fields import position_id
from kgx.datasets.files import DataError, text_lines
from kgx.datasets.formats import dataset_format

END = "<end>"
PATHS = "*"  # joins the paths of a conjunctive question (WC-C)
TOPIC_NAMES = "topic_names"  # meta key: topic entities by name, for the KG to resolve (kgx.run.preflight)


@dataclass(frozen=True)
class Line:
    """One parsed question line."""

    text: str
    answers: list[str]  # the line's answer first, then the rest of its answer set
    paths: list[list[str]]  # [subject, r1, e1, ..., answer] per topic entity

    @property
    def topics(self) -> list[str]:
        return list(dict.fromkeys(path[0] for path in self.paths))

    @property
    def hops(self) -> int:
        """Relations on the longest path: how far the question reaches from a topic entity."""
        return max(len(path) // 2 for path in self.paths)

    def meta(self) -> dict:
        paths = {"path": self.paths[0]} if len(self.paths) == 1 else {"paths": self.paths}
        return {**paths, "hops": self.hops}


def parse(line: str, where: str) -> Line:
    """The fields of one line; a DataError names ``where`` (file:line) and the field."""
    fields = line.split("\t")
    if len(fields) < 3:
        raise DataError(
            f"{where}: expected at least 3 tab-separated fields (question, answer, path), found {len(fields)}"
        )
    text = fields[0].strip()
    if not text:
        raise DataError(f"{where}: field 1 (question) is empty")
    paths = [_path(chain, where) for chain in fields[2].split(PATHS)]
    answers = _answers(fields[1].strip(), paths[0][-1], where)
    if len(fields) > 3:
        listed = [name for name in fields[3].strip().split("/") if name]
        if not listed:
            raise DataError(f"{where}: field 4 (answer set) is empty; expected 'a1/a2/.../'")
        answers = list(dict.fromkeys([*answers, *listed]))
    return Line(text, answers, paths)


def _path(chain: str, where: str) -> list[str]:
    """``[subject, r1, e1, ..., answer]``, without PQ's redundant ``<end>#answer`` tail."""
    steps = chain.strip().split("#")
    if END in steps:
        end = steps.index(END)
        if steps[end + 1 :] != steps[end - 1 : end]:
            raise DataError(f"{where}: field 3 (path) must end in '...#answer#{END}#answer', found {chain!r}")
        steps = steps[:end]
    if len(steps) < 3 or len(steps) % 2 == 0 or not all(steps):
        raise DataError(f"{where}: field 3 (path) must alternate entity#relation#...#entity, found {chain!r}")
    return steps


def _answers(field: str, end: str, where: str) -> list[str]:
    """The answer field's names: ``a``, or ``a(a1/a2/.../)`` where ``a`` is the path's end.

    The path's end tells where a set begins, because names may contain parentheses
    (``PG_(USA)(PG_(USA)/)``); names never contain ``/``.
    """
    if not field:
        raise DataError(f"{where}: field 2 (answer) is empty")
    opening = f"{end}("
    if field.startswith(opening) and field.endswith(")"):
        return list(dict.fromkeys([end, *(n for n in field[len(opening) : -1].split("/") if n)]))
    if "(" in field and field.endswith("/)"):
        raise DataError(
            f"{where}: field 2 (answer) must be '{end}(a1/a2/.../)' with the path's end '{end}' first, found {field!r}"
        )
    return [field]


def aliases(name: str) -> list[str]:
    """A KB name and, when it has underscores, its spaced form."""
    spaced = name.replace("_", " ")
    return [name, spaced] if spaced != name else [name]


def lines(path: Path) -> Iterator[tuple[int, Line]]:
    """Each line parsed as it is read: a reader that stops early reads no further."""
    return ((lineno, parse(text, f"{path}:{lineno}")) for lineno, text in text_lines(path))


@dataset_format("irn")
def irn(path: Path, cfg: DatasetConfig) -> Iterator[Question]:
    """Questions whose topic entities are the paths' subjects, by name: the run resolves each name
    to the entity of that name in its KG, whatever ids the KG uses (kgx.run.preflight)."""
    for lineno, line in lines(path):
        yield Question(
            id=position_id(cfg.name, lineno),
            text=line.text,
            answers=[aliases(name) for name in line.answers],
            meta={**line.meta(), TOPIC_NAMES: line.topics},
        )
