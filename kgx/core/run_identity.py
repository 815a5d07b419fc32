"""Which config fields make a run's identity, the config hash a rerun resumes by.

A field made with :func:`execution` says where or how a run executes (a timeout, a rate limit,
a folder), not what it computes: it is logged but left out of the run's identity, so changing it
resumes the same run instead of starting a new one.

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


def unless_default(default: Any) -> Any:
    """A result field added after runs were logged: it enters the identity only when set to another
    value than ``default``, so that every run from before it (which computed with the default) keeps
    its config hash and is resumed or skipped as before."""
    return field(default=default, metadata={"unless_default": True})


def counts(obj: Any, f: Any) -> bool:
    """Whether field ``f`` of ``obj`` enters the identity."""
    if not f.metadata.get("result", True):
        return False
    return not (f.metadata.get("unless_default") and getattr(obj, f.name) == f.default)


def identity(obj: Any) -> Any:
    """A schema instance as plain data without its execution fields: what a run's results depend on."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: identity(getattr(obj, f.name)) for f in fields(obj) if counts(obj, f)}
    if isinstance(obj, dict):
        return {k: identity(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [identity(v) for v in obj]
    return obj


def behaviours(models: Iterable[str]) -> dict[str, int]:
    """The behaviour versions of the doubles among ``models`` (litellm model strings), by provider
    prefix; empty when none is versioned (then a run's identity holds no such key)."""
    return {prefix: version for prefix, version in BEHAVIOURS.items() if any(m.startswith(prefix) for m in models)}
