"""Which config fields make a run's identity, the config hash a rerun resumes by.

A field made with :func:`execution` says where or how a run executes (a timeout, a rate limit,
a folder), not what it computes: it is logged but left out of the run's identity, so changing it
resumes the same run instead of starting a new one.
"""

from __future__ import annotations

from dataclasses import field, fields, is_dataclass
from typing import Any


def execution(default: Any = None, default_factory: Any = None) -> Any:
    """A field that changes how a run executes, not its results (left out of the config hash)."""
    if default_factory is not None:
        return field(default_factory=default_factory, metadata={"result": False})
    return field(default=default, metadata={"result": False})


def identity(obj: Any) -> Any:
    """A schema instance as plain data without its execution fields: what a run's results depend on."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: identity(getattr(obj, f.name)) for f in fields(obj) if f.metadata.get("result", True)}
    if isinstance(obj, dict):
        return {k: identity(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [identity(v) for v in obj]
    return obj
