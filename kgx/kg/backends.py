"""KG backends: each a config schema and an opener, registered where they are defined and found
through the entry-point group ``kgx.kg_backends`` (kgx's own in its pyproject.toml, a plugin's in
its own).

An opener turns its schema into a KG that answers kgx's queries (a :class:`kgx.kg.sparql.SparqlKG`:
an embedded Oxigraph store, an endpoint, or anything that speaks the same protocol), given the run's
cache folder, whether the run's method reads the KG at all (``reads``: an endpoint is pinged only
then), and the query-time options every backend applies (relation filters, noise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgx.core.kg_config import KGConfig
from kgx.core.registry import Registry

Opener = Callable[[Any, Path, bool, dict[str, Any]], Any]  # (its schema, cache folder, reads, options) -> a KG


@dataclass(frozen=True)
class KGBackend:
    name: str
    config: type[KGConfig]
    open: Opener


KG_BACKENDS: Registry[KGBackend] = Registry("KG backend", "kgx.kg_backends")


def kg_backend(name: str, config: type[KGConfig]) -> Callable[[Opener], Opener]:
    """Register ``open`` as backend ``name`` with its schema: ``kg=<name>`` composes the schema
    (or a conf/kg file that extends ``base_<name>``), and the run opens its KG with ``open``."""

    def add(open_: Opener) -> Opener:
        KG_BACKENDS.register(name, KGBackend(name, config, open_), open_.__module__)
        return open_

    return add
