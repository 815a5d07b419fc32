"""Knowledge graphs behind one protocol; Freebase-shaped RDF in every backend."""

from __future__ import annotations

from pathlib import Path

from kgx.core.config import KGConfig
from kgx.core.paths import resolve
from kgx.kg.build import build_store
from kgx.kg.custom import store_dir
from kgx.kg.embedded import EmbeddedKG
from kgx.kg.endpoint import EndpointKG, connect
from kgx.kg.freebase import KG, NS, KGError
from kgx.kg.name_level import NAME_LEVEL_FORMATS, names_a_mid
from kgx.kg.sparql import Noise, SparqlKG
from kgx.kg.subgraph import SubgraphKG, open_subgraphs

BUNDLED_KG = Path(__file__).resolve().parent.parent / "datasets" / "demo" / "kg.nt"


def open_kg(cfg: KGConfig, cache_dir: Path, reads: bool = True) -> SparqlKG:
    """The run's KG. An embedded store is built on first use and reused after; an endpoint is
    pinged with its graph and credentials, so that a wrong URL, graph or missing secret fails
    before any question runs, unless the run's method ``reads`` no KG (io, cot, sc: a dataset
    brings its KG, and ``dataset=cwq method=io`` must not need a Freebase server)."""
    options = dict(
        filters=tuple(cfg.filters), noise=Noise(cfg.noise.drop_relations, cfg.noise.drop_names, cfg.noise.seed)
    )
    if cfg.backend == "endpoint":
        return connect(cfg, ping=reads, **options)
    if cfg.format == "rog":
        return open_subgraphs(cfg, cache_dir, **options)
    sources = [resolve(s) for s in cfg.sources] if cfg.sources else [BUNDLED_KG]
    store = store_dir(cfg, sources, cache_dir)
    return EmbeddedKG(build_store(sources, cfg.format, store, drop_inverse=cfg.drop_inverse), **options)


def unnamed_possible(cfg: KGConfig) -> bool:
    """Whether the KG may hold entities without a name (CVTs). A KG built from names names every
    entity but one written as a mid, which its sources show; Freebase data, endpoints and dropped
    names (``kg.noise.drop_names``) may hold any number."""
    if cfg.backend != "embedded" or cfg.format not in NAME_LEVEL_FORMATS or cfg.noise.drop_names > 0:
        return True
    return not cfg.sources or any(names_a_mid(resolve(s), cfg.format) for s in cfg.sources)


__all__ = [
    "KG",
    "NS",
    "EmbeddedKG",
    "EndpointKG",
    "KGError",
    "SparqlKG",
    "SubgraphKG",
    "build_store",
    "open_kg",
    "unnamed_possible",
]
