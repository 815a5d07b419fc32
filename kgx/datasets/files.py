"""Finding and reading dataset files, so that every failure names the file and the line or record.

A loader either returns every question of a file or raises :class:`DataError`; nothing here
skips a record it cannot read, because a silently shortened test set changes every figure.
The JSON readers also reject text that could not be written back as UTF-8 (see
:func:`check_text`), so that such a question fails at load instead of in the middle of a run.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgx.core import paths
from kgx.core.config import DatasetConfig

# A surrogate code point (U+D800-U+DFFF) as JSON text spells it. Text decoded from UTF-8 holds
# none, so only a parsed value whose text has this escape needs the walk of check_text.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# JSON has no NaN or Infinity, but Python's parser reads them as floats: a gold answer NaN would
# become the alias "nan". Only text holding one needs the walk of check_text.
NON_FINITE = re.compile(r"NaN|Infinity")
BOM = "\ufeff"  # what some editors put first in a UTF-8 file; accepted and dropped


class DataError(ValueError):
    """A data file that is missing or malformed; the message names the file (and line)."""


class MissingFile(DataError):
    """A data file that is not there; ``path`` is where kgx looked and ``how`` where to get it."""

    def __init__(self, message: str, path: Path, how: str):
        super().__init__(message)
        self.path = path
        self.how = how


def locate(cfg: DatasetConfig, path: str, folder: bool = False) -> Path:
    """The file ``path`` names (or, with ``folder``, the folder), relative paths taken under the
    data directory.

    A missing file is a DataError that says where kgx looked, why there (the environment
    variable), and where to get the file (the dataset's ``source``).
    """
    found = paths.resolve(path)
    if found.is_file() or (folder and found.is_dir()):
        return found
    looked = "" if str(found) == path else f" (looked for {found})"
    env = os.environ.get(paths.ENV)
    base = f"${paths.ENV}={env}" if env else f"${paths.ENV} if set, else {paths.data_dir()}"
    how = cfg.source or "set dataset.path to a local copy of the file"
    raise MissingFile(
        f"dataset '{cfg.name}': file not found: {path}{looked}; relative paths resolve under {base}. To get it: {how}",
        found,
        how,
    )


def read_json(path: Path) -> Any:
    """The parsed file; a syntax error is reported with its line, as an editor would show it.

    Text that cannot be written as UTF-8 is reported with the record it is in when the file is
    an array, since a line number says little in a one-line JSON file.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")  # a leading BOM is dropped
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    data = parse(text, str(path))
    if not (SURROGATE_ESCAPE.search(text) or NON_FINITE.search(text)):
        return data
    if isinstance(data, list):
        for index, record in enumerate(data):
            check_text(record, f"{path}: record {index}")
    else:
        check_text(data, str(path))
    return data


def parse(text: str, where: str) -> Any:
    """``json.loads``, its failures a DataError at ``where`` (with the line of a multi-line text):
    a syntax error, or nesting deeper than Python's parser can follow."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = f":{exc.lineno}" if "\n" in text.strip() else ""
        raise DataError(f"{where}{line}: not JSON ({exc.msg}, column {exc.colno})") from exc
    except RecursionError as exc:
        raise DataError(
            f"{where}: JSON nested too deeply to read (arrays or objects inside each other beyond "
            f"Python's recursion limit of {sys.getrecursionlimit()}); a question needs only a few levels"
        ) from exc


def check_text(value: Any, where: str, name: str = "") -> None:
    """A DataError unless every string in a parsed JSON value, keys included, can be written as
    UTF-8, and every number is finite (JSON has no NaN or Infinity; Python's parser reads them).

    A JSON escape of half a UTF-16 surrogate pair (``"\\ud800"``) parses into a Python string
    that no UTF-8 writer accepts: the question would load, and the run would crash when its
    record is written. ``name`` is the path to ``value`` inside the record, for the message.
    """
    if isinstance(value, str):
        _check_string(value, where, f"field {name!r}" if name else "the text")
    elif isinstance(value, float) and not math.isfinite(value):
        raise DataError(
            f"{where}: field {name!r} is {value!r}, which JSON does not have (Python's parser reads "
            f"NaN and Infinity); write the value as a string, or leave the field out"
        )
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_string(key, where, f"a key of field {name!r}" if name else "a field name")
            check_text(item, where, f"{name}.{key}" if name else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_text(item, where, f"{name}[{index}]")


def _check_string(text: str, where: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        escape = f"\\u{ord(text[exc.start]):04x}"
        excerpt = text[max(0, exc.start - 40) : exc.start + 40]
        raise DataError(
            f"{where}: {what} holds a lone surrogate {escape} (half of a UTF-16 pair, "
            f"from a JSON escape) at character {exc.start}, which cannot be written as "
            f"UTF-8: {excerpt!r}"
        ) from exc


def json_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each object of a JSON array, with ``"<file>: record <index>"`` to name it in errors."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON array of questions, found a {type(data).__name__}")
    for index, record in enumerate(data):
        where = f"{path}: record {index}"
        if not isinstance(record, dict):
            raise DataError(f"{where}: expected a JSON object, found a {type(record).__name__}")
        yield where, record


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line, without its line ending.

    Lines are decoded one at a time so that bad bytes are reported with their line number.
    """
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not UTF-8 text ({exc.reason})") from exc
            if lineno == 1:
                line = line.removeprefix(BOM)
            if line.strip():
                yield lineno, line


def json_lines(path: Path, check_strings: bool = True) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(file:line, object)`` of each line of a JSON-lines file; anything else stops there, and
    so does text that cannot be written as UTF-8 (:func:`check_text`) unless ``check_strings``
    is off, for files that are only read."""
    for lineno, line in text_lines(path):
        where = f"{path}:{lineno}"
        row = parse(line, where)
        if not isinstance(row, dict):
            raise DataError(f"{where}: expected a JSON object")
        if check_strings and (SURROGATE_ESCAPE.search(line) or NON_FINITE.search(line)):
            check_text(row, where)
        yield where, row
