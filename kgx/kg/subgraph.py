"""``kg=subgraph``: RoG's per-question Freebase subgraphs as one embedded store, in two scopes.

The store (``kgx.kg.subgraph_build``) holds each question's subgraph in a named graph. A handle
on the whole store reads the union of all of them (``use_default_graph_as_union``): that is the
KG of ``kg.scope=union``, and what the run's pre-flight check and the benchmarks see in either
scope. Under ``kg.scope=question`` (the setting RoG, GNN-RAG and SubgraphRAG report) a question
sees only its own subgraph: ``for_question`` gives a view whose every query has that question's
graph as its default graph. A view shares the open store (no reopening, no copy per question)
and has its own result cache, since the same query means different rows in two views.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Optional

import pyoxigraph as ox

from kgx.core.config import KGConfig
from kgx.core.paths import resolve
from kgx.kg.build import fingerprint
from kgx.kg.custom import KEY_CHARS
from kgx.kg.embedded import EmbeddedKG, solution_rows
from kgx.kg.name_level import SourceError
from kgx.kg.rog_files import check_columns, rog_files
from kgx.kg.sparql import Term
from kgx.kg.subgraph_build import FORMAT, build_subgraphs, graph_iri

VIEW_CACHE = 10_000  # results kept per question view: one question's calls


class SubgraphKG(EmbeddedKG):
    """The whole store (the union of the subgraphs); ``for_question`` narrows it in question scope."""

    def __init__(self, store_dir: Path, scope: str = "question", **options: Any):
        super().__init__(store_dir, **options)
        self.scope = scope
        self._graph: Optional[ox.NamedNode] = None

    def _select(self, query: str) -> list[dict[str, Term]]:
        if self._graph is None:
            return solution_rows(self.store.query(query, use_default_graph_as_union=True))
        return solution_rows(self.store.query(query, default_graph=self._graph))

    def for_question(self, question_id: str) -> "SubgraphKG":
        """The KG ``question_id`` sees: its own subgraph in question scope, else the whole KG."""
        if self.scope != "question":
            return self
        view = copy.copy(self)
        view._graph = ox.NamedNode(graph_iri(question_id))
        view.view = view._graph.value
        view._cache, view._cache_size, view._lock = OrderedDict(), VIEW_CACHE, threading.Lock()
        return view


def open_subgraphs(cfg: KGConfig, cache_dir: Path, **options: Any) -> SubgraphKG:
    """The KG of ``kg=subgraph``: its sources' RoG files built (or found built) under
    ``<cache_dir>/kg/<name>-<hash of the files>``, so two datasets never share or rebuild one store."""
    if not cfg.sources:
        raise SourceError(
            f"kg '{cfg.name}' (format rog) has no sources: it builds from RoG parquet files, "
            f"by default the dataset's (dataset=webqsp_rog or cwq_rog), else kg.sources=[FILE or FOLDER]"
        )
    files = [f for source in cfg.sources for f in rog_files(resolve(source), cfg.split)]
    check_columns(files, ("id", "graph"))
    key = fingerprint(files, FORMAT, False)[:KEY_CHARS]
    store = Path(cfg.store) if cfg.store else cache_dir / "kg" / f"{cfg.name}-{key}"
    return SubgraphKG(build_subgraphs(files, store).store, cfg.scope, **options)
