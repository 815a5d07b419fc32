"""Checked access to record fields, and the question parts several formats share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kgx.datasets.files import DataError


def field(record: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``record[key]`` when present and of type ``kind``; otherwise a DataError naming the record."""
    if key not in record:
        raise DataError(f"{where}: missing field '{key}'")
    value = record[key]
    if not isinstance(value, kind):
        raise DataError(f"{where}: field '{key}' must be {_type_names(kind)}, found {type(value).__name__}")
    return value


def _type_names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def topic_entities(record: dict[str, Any], where: str, key: str = "topic_entity") -> dict[str, str]:
    """The ``{id: name}`` mapping of ToG-format records; an empty mapping is kept as it is."""
    value = field(record, key, dict, where)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise DataError(f"{where}: field '{key}' must map entity ids to names (strings)")
    return dict(value)


def one_alias_each(names: Iterable[Any]) -> list[list[str]]:
    """One single-alias gold answer per distinct non-empty name, in first-seen order.

    Formats that list answers as bare names write an unnamed entity as null or "" (WebQSP.json
    has both); such an entry cannot be matched by any rule, so it is not a gold answer.
    """
    seen: dict[str, None] = {}
    for name in names:
        if isinstance(name, str) and name.strip():
            seen.setdefault(name.strip())
    return [[name] for name in seen]


def position_id(prefix: str, position: int) -> str:
    """An id for formats without their own: the record index or line number, so that an id
    points back into the file."""
    return f"{prefix}-{position:05d}"
