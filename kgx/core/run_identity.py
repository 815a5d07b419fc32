"""Which config fields make a run's identity, the config hash a rerun resumes by.

A field made with :func:`execution` says where or how a run executes (a timeout, a rate limit,
a folder), not what it computes: it is logged but left out of the run's identity, so changing it
resumes the same run instead of starting a new one.

A field made with :func:`added` came after runs were recorded: at its default it is left out of
the identity, so a config that keeps the default keeps its hash (and its finished runs) across the
kgx release that added the setting; a config that sets it is a new config.

A test double's behaviour version (:data:`BEHAVIOURS`) says what its replies are: a run on a double
whose replies changed while its config did not must be redone, not resumed or skipped. It enters
the identity of the runs that use that double only, so no other run's hash moves.
"""

from __future__ import annotations

from dataclasses import field, fields, is_dataclass
from typing import Any, Iterable

# Per litellm provider prefix: the version of a kgx double's replies. 2 = the oracle that follows
# the gold chain in order and matches CGPE's clues from the gold path (1, unrecorded: word overlap);
# 3 = a dataset's gold path that returns to an entity it passed is led without the round trip;
# 4 = it answers only from KG texts the method retrieved (values by the scorer's rules), never
# where no gold is within the method's depth, and writes CGPE's clues as the KG names them.
BEHAVIOURS = {"kgx-oracle/": 4}


def execution(default: Any = None, default_factory: Any = None) -> Any:
    """A field that changes how a run executes, not its results (left out of the config hash)."""
    if default_factory is not None:
        return field(default_factory=default_factory, metadata={"result": False})
    return field(default=default, metadata={"result": False})


def added(default: Any = None) -> Any:
    """A setting added after runs were recorded: left out of the identity while at ``default``
    (a default reproduces what runs did before the setting existed)."""
    return field(default=default, metadata={"added": True})


def identity(obj: Any) -> Any:
    """A schema instance as plain data without its execution fields, nor settings added later
    that keep their defaults: what a run's results depend on."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return {
            f.name: identity(getattr(obj, f.name))
            for f in fields(obj)
            if f.metadata.get("result", True) and not (f.metadata.get("added") and getattr(obj, f.name) == f.default)
        }
    if isinstance(obj, dict):
        return {k: identity(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [identity(v) for v in obj]
    return obj


def behaviours(models: Iterable[str]) -> dict[str, int]:
    """The behaviour versions of the doubles among ``models`` (litellm model strings), by provider
    prefix; empty when none is versioned (then a run's identity holds no such key)."""
    return {prefix: version for prefix, version in BEHAVIOURS.items() if any(m.startswith(prefix) for m in models)}
