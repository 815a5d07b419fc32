"""``kg=subgraph``: RoG's per-question Freebase subgraphs as an embedded store, in two scopes.

Each scope has its own store (``kgx.kg.pipelines.rog_subgraphs``), and the handle reads the scope its store
was built for (its manifest says which). ``kg.scope=question`` (the setting RoG, GNN-RAG and
SubgraphRAG report): each question's subgraph is a named graph, and ``for_question`` gives a view
whose every query has that question's graph as its default graph; a handle on the whole store reads
the union of all of them (``use_default_graph_as_union``, which deduplicates at query time: fine
for a benchmark's look at it, too slow for a run's thousands of calls). A view shares the open
store (no reopening, no copy per question) and has its own result cache, since the same query means
different rows in two views. ``kg.scope=union``: every subgraph is in the default graph, each
triple once, read as any embedded KG is; ``for_question`` is the KG itself.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Optional

import pyoxigraph as ox

from kgx.core.kg_config import SubgraphKGConfig
from kgx.core.paths import resolve
from kgx.core.rog_files import check_columns, rog_files
from kgx.core.sources import SourceError
from kgx.kg.custom import KEY_CHARS
from kgx.kg.embedded import EmbeddedKG, solution_rows
from kgx.kg.pipelines import fingerprint
from kgx.kg.pipelines.rog_subgraphs import build_subgraphs, graph_iri, store_format
from kgx.kg.sparql import Term

VIEW_CACHE = 10_000  # results kept per question view: one question's calls


class SubgraphKG(EmbeddedKG):
    """The store of one scope (``kg.scope``, the one setting that says it: the store was built for
    it); in question scope, ``for_question`` narrows it to one subgraph."""

    def __init__(self, store_dir: Path, scope: str = "question", **options: Any):
        super().__init__(store_dir, **options)
        self.store_dir = Path(store_dir)
        self.scope = scope
        self._graph: Optional[ox.NamedNode] = None

    def _select(self, query: str) -> list[dict[str, Term]]:
        if self._graph is not None:
            return solution_rows(self.store.query(query, default_graph=self._graph))
        if self.scope == "question":  # the whole store of named graphs: their union
            return solution_rows(self.store.query(query, use_default_graph_as_union=True))
        return super()._select(query)

    def _graph_name(self) -> Optional[ox.NamedNode | ox.DefaultGraph]:
        if self._graph is not None:
            return self._graph
        return None if self.scope == "question" else ox.DefaultGraph()

    def for_question(self, question_id: str) -> "SubgraphKG":
        """The KG ``question_id`` sees: its own subgraph in question scope, else the whole KG."""
        if self.scope != "question":
            return self
        view = copy.copy(self)
        view._graph = ox.NamedNode(graph_iri(question_id))
        view.view = view._graph.value
        view._cache, view._cache_size, view._lock = OrderedDict(), VIEW_CACHE, threading.Lock()
        return view


def open_subgraphs(cfg: SubgraphKGConfig, cache_dir: Path, **options: Any) -> SubgraphKG:
    """The KG of ``kg=subgraph``: its sources' RoG files built (or found built) for ``kg.scope``
    under ``<cache_dir>/kg/<name>-<hash>`` (question) or ``<name>-union-<hash>`` (union; beside
    ``kg.store`` as ``<store>-union`` when that is set), so neither two datasets nor two scopes
    share or rebuild one store."""
    if not cfg.sources:
        raise SourceError(
            f"kg '{cfg.name}' (RoG subgraphs) has no sources: it builds from RoG parquet files, "
            f"by default the dataset's (dataset=webqsp_rog or cwq_rog), else kg.sources=[FILE or FOLDER]"
        )
    files = [f for source in cfg.sources for f in rog_files(resolve(source), cfg.split)]
    check_columns(files, ("id", "graph"))
    key = fingerprint(files, store_format(cfg.scope), False)[:KEY_CHARS]
    suffix = "" if cfg.scope == "question" else f"-{cfg.scope}"
    store = Path(cfg.store + suffix) if cfg.store else cache_dir / "kg" / f"{cfg.name}{suffix}-{key}"
    return SubgraphKG(build_subgraphs(files, store, scope=cfg.scope).store, cfg.scope, **options)
