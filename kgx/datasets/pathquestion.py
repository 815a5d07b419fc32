"""PathQuestion (IRN): ``question<TAB>answer(a1/a2/.../)<TAB>gold path`` per line.

The line format is IRN's (:mod:`kgx.datasets.irn`, which also reads WC2014's longer lines). The
KG is name-level, so each topic entity gets the id the KG builder gives its name
(:func:`kgx.core.sources.name_id`): the questions know their KG ids without the KG at hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kgx.core.config import DatasetConfig
from kgx.core.sources import name_id
from kgx.core.types import Question
from kgx.datasets.fields import position_id
from kgx.datasets.formats import dataset_format
from kgx.datasets.irn import aliases, lines


@dataset_format("pathquestion")
def pathquestion(path: Path, cfg: DatasetConfig) -> Iterator[Question]:
    """Questions of one PathQuestion file, read as they are asked for; meta keeps the gold path
    and its hop count."""
    for lineno, line in lines(path):
        yield Question(
            id=position_id(cfg.name, lineno),
            text=line.text,
            topic_entities={name_id(name): name for name in line.topics},
            answers=[aliases(name) for name in line.answers],
            meta=line.meta(),
        )
