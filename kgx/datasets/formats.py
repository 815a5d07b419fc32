"""The readers of question files, registered where they are defined and found through the
entry-point group ``kgx.datasets`` (kgx's own in its pyproject.toml, a plugin's in its own).

A reader yields a file's questions in order, raising ``DataError`` naming the file and the line or
record; the line-based ones read only as far as they are asked. ``dataset.loader=<name>`` picks one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kgx.core.config import DatasetConfig
from kgx.core.registry import Registry
from kgx.core.types import Question

Reader = Callable[[Path, DatasetConfig], Iterable[Question]]


@dataclass(frozen=True)
class DatasetFormat:
    name: str
    read: Reader
    folders: bool = False  # whether ``dataset.path`` may be a folder (of parquet shards)


FORMATS: Registry[DatasetFormat] = Registry("dataset format", "kgx.datasets")


def dataset_format(name: str, folders: bool = False) -> Callable[[Reader], Reader]:
    """Register ``read`` as the reader of ``dataset.loader=<name>``."""

    def add(read: Reader) -> Reader:
        FORMATS.register(name, DatasetFormat(name, read, folders), read.__module__)
        return read

    return add
