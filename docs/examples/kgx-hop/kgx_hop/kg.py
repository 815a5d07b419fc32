"""``kg=adjacency``: a KG written as JSON, ``{"entity": {"relation": ["entity", ...]}}``, loaded into
kgx's embedded store (names are the ids, as in kgx's own name-level KGs)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgx.core.kg_config import KGConfig
from kgx.core.paths import resolve
from kgx.kg import EmbeddedKG, build_store, kg_backend


@dataclass
class AdjacencyKGConfig(KGConfig):
    name: str = "adjacency"
    backend: str = "adjacency"
    path: str = ""  # the JSON file

    @property
    def data_format(self) -> str:
        return "custom"  # entities are named as the file writes them


@kg_backend("adjacency", AdjacencyKGConfig)
def open_adjacency(cfg: AdjacencyKGConfig, cache_dir: Path, reads: bool, options: dict[str, Any]) -> EmbeddedKG:
    source = resolve(cfg.path)
    graph = json.loads(source.read_text(encoding="utf-8"))
    lines = [
        f"{head}\t{relation}\t{tail}"
        for head, edges in graph.items()
        for relation, tails in edges.items()
        for tail in tails
    ]
    tsv = cache_dir / "kg" / f"{cfg.name}.tsv"
    tsv.parent.mkdir(parents=True, exist_ok=True)
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return EmbeddedKG(build_store([tsv], "custom", cache_dir / "kg" / cfg.name), **options)
