"""Benchmark questions as ``Question`` objects, whatever file format they come in.

``load(cfg)`` reads the file a ``DatasetConfig`` names with the reader its ``loader`` names
(``FORMATS``: registered with ``dataset_format``, found through the entry-point group
``kgx.datasets``), then applies the config's selection. Every reader yields the questions of a
file in order or raises ``DataError`` naming the file and the line or record: never a silently
shortened load. Only ``dataset.limit`` (without ``ids`` or ``sample``) stops a line-based reader
early: the lines after the limit are not read, so not checked either.
"""

from kgx.datasets.files import DataError
from kgx.datasets.formats import FORMATS, DatasetFormat, dataset_format
from kgx.datasets.loaders import (
    dataset_config,
    dataset_file,
    dataset_names,
    load,
)

__all__ = [
    "FORMATS",
    "DataError",
    "DatasetFormat",
    "dataset_config",
    "dataset_file",
    "dataset_format",
    "dataset_names",
    "load",
]
