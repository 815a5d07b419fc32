"""Knowledge graphs behind one protocol; Freebase-shaped RDF in every backend.

``open_kg(cfg, cache_dir)`` opens the run's KG with the backend its config names. kgx's own
backends are registered here; a plugin's with ``kg_backend`` and the entry-point group
``kgx.kg_backends`` (docs/contributing/extending.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgx.core.kg_config import EmbeddedKGConfig, EndpointKGConfig, KGConfig, SubgraphKGConfig
from kgx.core.paths import resolve
from kgx.core.registry import RegistryError
from kgx.kg.backends import KG_BACKENDS, KGBackend, kg_backend
from kgx.kg.custom import store_dir
from kgx.kg.embedded import EmbeddedKG
from kgx.kg.endpoint import EndpointKG, connect
from kgx.kg.freebase import KG, NS, KGError
from kgx.kg.name_level import NAME_LEVEL_FORMATS, names_a_mid
from kgx.kg.pipelines import build_store
from kgx.kg.sparql import Noise, SparqlKG
from kgx.kg.subgraph import SubgraphKG, open_subgraphs

BUNDLED_KG = Path(__file__).resolve().parent.parent / "datasets" / "demo" / "kg.nt"


def open_kg(cfg: KGConfig, cache_dir: Path, reads: bool = True) -> SparqlKG:
    """The run's KG, opened by its backend (``KG_BACKENDS``: kgx's embedded, subgraph and endpoint
    backends, and any a plugin registers). An embedded store is built on first use and reused
    after; an endpoint is pinged with its graph and credentials, so that a wrong URL, graph or
    missing secret fails before any question runs, unless the run's method ``reads`` no KG (io,
    cot, sc: a dataset brings its KG, and ``dataset=cwq method=io`` must not need a Freebase server)."""
    try:
        backend = KG_BACKENDS.named(cfg.backend)
    except RegistryError as exc:
        raise KGError(f"kg.backend={cfg.backend}: {exc}") from None
    options = dict(
        filters=tuple(cfg.filters), noise=Noise(cfg.noise.drop_relations, cfg.noise.drop_names, cfg.noise.seed)
    )
    return backend.open(cfg, cache_dir, reads, options)


@kg_backend("embedded", EmbeddedKGConfig)
def open_embedded(cfg: EmbeddedKGConfig, cache_dir: Path, reads: bool, options: dict[str, Any]) -> SparqlKG:
    """An Oxigraph store built from ``kg.sources`` (the bundled demo KG when none) on first use."""
    sources = [resolve(s) for s in cfg.sources] if cfg.sources else [BUNDLED_KG]
    store = store_dir(cfg, sources, cache_dir)
    return EmbeddedKG(build_store(sources, cfg.format, store, drop_inverse=cfg.drop_inverse), **options)


@kg_backend("subgraph", SubgraphKGConfig)
def open_subgraph(cfg: SubgraphKGConfig, cache_dir: Path, reads: bool, options: dict[str, Any]) -> SparqlKG:
    """RoG's per-question subgraphs, built from the dataset's files for ``kg.scope``."""
    return open_subgraphs(cfg, cache_dir, **options)


@kg_backend("endpoint", EndpointKGConfig)
def open_endpoint(cfg: EndpointKGConfig, cache_dir: Path, reads: bool, options: dict[str, Any]) -> SparqlKG:
    """A SPARQL endpoint, pinged when the run's method reads the KG."""
    return connect(cfg, ping=reads, **options)


def unnamed_possible(cfg: KGConfig) -> bool:
    """Whether the KG may hold entities without a name (CVTs). A KG built from names names every
    entity but one written as a mid, which its sources show; Freebase data, endpoints and dropped
    names (``kg.noise.drop_names``) may hold any number."""
    if not isinstance(cfg, EmbeddedKGConfig) or cfg.format not in NAME_LEVEL_FORMATS or cfg.noise.drop_names > 0:
        return True
    return not cfg.sources or any(names_a_mid(resolve(s), cfg.format) for s in cfg.sources)


__all__ = [
    "KG",
    "KG_BACKENDS",
    "NS",
    "EmbeddedKG",
    "EndpointKG",
    "KGBackend",
    "KGError",
    "SparqlKG",
    "SubgraphKG",
    "build_store",
    "kg_backend",
    "open_kg",
    "unnamed_possible",
]
