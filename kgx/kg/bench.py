"""Latency of the two calls every exploration method makes per hop, on a real store.

``relations(e, "out")`` then ``neighbors(e, r, "out")`` for one of its relations, for seeded
random entities, timed one call at a time. Entities are drawn without replacement so that the
KG's query cache never answers: the figures are query latency, not cache hits.
"""
from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Callable

import pyoxigraph as ox

from kgx.kg.freebase import KG, NAME, NS, iri


def candidate_entities(store_dir: Path) -> list[str]:
    """Entities with an outgoing edge besides their name, sorted: what a method walks from.

    Read from the store directly (read-only, so a running server does not mind) and sorted, so
    that a seed picks the same entities from the same store every time.
    """
    store = ox.Store.read_only(str(store_dir))
    rows = store.query(f"SELECT DISTINCT ?s WHERE {{ ?s ?p ?o FILTER(isIRI(?s) && ?p != <{NAME}>) }}")
    found = []
    for row in rows:
        value = row[0].value
        if value.startswith(NS):
            try:
                iri(value[len(NS):])
            except ValueError:
                continue
            found.append(value[len(NS):])
    return sorted(found)


def _timed(call: Callable[[], list[str]], samples: list[float]) -> list[str]:
    start = time.perf_counter()
    result = call()
    samples.append((time.perf_counter() - start) * 1000)
    return result


def _summary(prefix: str, samples: list[float]) -> dict[str, float]:
    if not samples:
        return {f"{prefix}_median_ms": float("nan"), f"{prefix}_p95_ms": float("nan")}
    p95 = statistics.quantiles(samples, n=20, method="inclusive")[-1] if len(samples) > 1 else samples[0]
    return {f"{prefix}_median_ms": statistics.median(samples), f"{prefix}_p95_ms": p95}


def bench(kg: KG, entities: list[str], calls: int = 200, seed: int = 0) -> dict[str, float]:
    """Median and p95 milliseconds of ``relations`` and ``neighbors`` over ``calls`` entities
    (fewer if the store has fewer); ``neighbors`` follows a random relation of each."""
    if not entities:
        raise ValueError("no entity to bench: the store has no entity with an outgoing edge")
    rng = random.Random(seed)
    picked = rng.sample(entities, min(calls, len(entities)))
    relation_ms: list[float] = []
    neighbor_ms: list[float] = []
    for entity in picked:
        relations = _timed(lambda: kg.relations(entity, "out"), relation_ms)
        if relations:
            relation = rng.choice(relations)
            _timed(lambda: kg.neighbors(entity, relation, "out"), neighbor_ms)
    return {**_summary("relations", relation_ms), **_summary("neighbors", neighbor_ms),
            "relations_calls": len(relation_ms), "neighbors_calls": len(neighbor_ms)}
