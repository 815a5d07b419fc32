"""Entities of a KG looked up in batches: the ids carrying a name, and the ids a KG lacks.

Shared by the run's pre-flight check (``kgx.run.preflight``) and reachability
(``kgx.diagnose.reach``); every query is a bounded ``VALUES`` batch, so it runs on any endpoint."""

from __future__ import annotations

from kgx.kg.freebase import NAME, iri, literal
from kgx.kg.sparql import SparqlKG, node

BATCH = 100  # ids or names per query: bounded query text on any endpoint


def named(kg: SparqlKG, names: list[str]) -> dict[str, list[str]]:
    """Name -> ids of the entities carrying exactly that name (any language tag), sorted."""
    found: dict[str, set[str]] = {}
    for start in range(0, len(names), BATCH):
        values = " ".join(f"{literal(n)}@en {literal(n)}" for n in names[start : start + BATCH])
        for row in kg.select(f"SELECT DISTINCT ?n ?e WHERE {{ VALUES ?n {{ {values} }} ?e <{NAME}> ?n }}"):
            found.setdefault(row["n"].value, set()).add(node(row["e"]))
    return {name: sorted(ids) for name, ids in found.items()}


def missing(kg: SparqlKG, ids: list[str]) -> list[str]:
    """The ids with no edge in the KG besides a name: what a method finds no relation of. An id
    that is not a Freebase-style id cannot be in the KG at all."""
    valid = [i for i in ids if is_id(i)]
    present: set[str] = set()
    for start in range(0, len(valid), BATCH):
        values = " ".join(iri(i) for i in valid[start : start + BATCH])
        rows = kg.select(
            f"SELECT ?e WHERE {{ VALUES ?e {{ {values} }} "
            f"FILTER(EXISTS {{ ?e ?p ?o FILTER(?p != <{NAME}>) }} || EXISTS {{ ?s ?q ?e }}) }}"
        )
        present.update(node(row["e"]) for row in rows)
    return [i for i in ids if i not in present]


def is_id(value: str) -> bool:
    try:
        iri(value)
    except ValueError:
        return False
    return True


def near(kg: SparqlKG, name: str, limit: int) -> list[str]:
    found = kg.search(name, limit=limit)
    labels = kg.names(found) if found else {}
    return [labels.get(e, e) for e in found]
