"""Knowledge graphs behind one protocol; Freebase-shaped RDF in every backend."""
from __future__ import annotations

from pathlib import Path

from kgx.config import KGConfig
from kgx.kg.embedded import EmbeddedKG, build_store
from kgx.kg.freebase import NS, KG

BUNDLED_KG = Path(__file__).resolve().parent.parent / "datasets" / "demo" / "kg.nt"


def open_kg(cfg: KGConfig, cache_dir: Path) -> KG:
    """The run's KG; an embedded store is built on first use and reused after."""
    if cfg.backend != "embedded":
        raise ValueError(f"kg.backend='{cfg.backend}': only 'embedded' exists so far")
    source = Path(cfg.source) if cfg.source else BUNDLED_KG
    store = Path(cfg.store) if cfg.store else cache_dir / "kg" / cfg.name
    return EmbeddedKG(build_store(source, store))


__all__ = ["KG", "NS", "EmbeddedKG", "build_store", "open_kg"]
