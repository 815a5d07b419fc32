"""Where a KG's embedded store lives, so that two KGs of one's own never share a store.

A named KG (``demo``, ``metaqa``, ...) keeps ``<cache>/kg/<name>``: its sources are fixed by its
config, and benchmarks find the store there. A ``custom`` KG is defined by whatever files
``kg.sources`` names, so its store is keyed by their content: ``<cache>/kg/<name>-<hash>``.
Two custom KGs then get two stores, and a run never rebuilds over, or reuses, the store of
another KG that happens to carry the same ``kg.name``.
"""

from __future__ import annotations

from pathlib import Path

from kgx.core.kg_config import EmbeddedKGConfig
from kgx.kg.pipelines import check_sources, fingerprint

KEY_CHARS = 16  # of the sources' fingerprint in the folder name: 64 bits


def store_dir(cfg: EmbeddedKGConfig, sources: list[Path], cache_dir: Path) -> Path:
    """The store directory of an embedded KG: ``kg.store`` when set, else under ``cache_dir``."""
    if cfg.store:
        return Path(cfg.store)
    if cfg.format != "custom":
        return cache_dir / "kg" / cfg.name
    check_sources(sources, cfg.format, drop_inverse=cfg.drop_inverse)
    return cache_dir / "kg" / f"{cfg.name}-{fingerprint(sources, cfg.format, False, cfg.drop_inverse)[:KEY_CHARS]}"
