"""The KG in-process: a pyoxigraph store in a directory, bulk-loaded once, then opened read-only
so that any number of threads and worker processes can query it at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kgx.kg.sparql import SparqlKG, Term


def _term(value: ox.NamedNode | ox.Literal | ox.BlankNode) -> Term:
    if isinstance(value, ox.Literal):
        return Term("literal", value.value, value.language or "")
    return Term("iri" if isinstance(value, ox.NamedNode) else "bnode", value.value)


def solution_rows(solutions: ox.QuerySolutions) -> list[dict[str, Term]]:
    """A SELECT's solutions as rows of terms, unbound variables left out."""
    names = [v.value for v in solutions.variables]
    return [{n: _term(row[n]) for n in names if row[n] is not None} for row in solutions]


class EmbeddedKG(SparqlKG):
    """A read-only handle: any number of threads and processes may hold one at a time."""

    def __init__(self, store_dir: Path, **options: Any):
        super().__init__(**options)
        self.store = ox.Store.read_only(str(store_dir))

    def _select(self, query: str) -> list[dict[str, Term]]:
        return solution_rows(self.store.query(query))

    def __len__(self) -> int:
        return len(self.store)
