"""Latency of the two calls every exploration method makes per hop, on a real store or endpoint.

``relations(e, "out")`` then ``neighbors(e, r, "out")`` for one of its relations, for seeded
random entities, timed one call at a time. Entities are drawn without replacement so that the
KG's query cache never answers: the figures are query latency, not cache hits.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Callable

from kgx.kg.freebase import KG, NAME, NS, iri
from kgx.kg.sparql import SparqlKG

ENTITY_POOL = 5000  # entities drawn from at most: bounded work on any KG, plenty for 200 calls


def candidate_entities(kg: SparqlKG, bound: int = ENTITY_POOL) -> list[str]:
    """Entities with an outgoing edge besides their name, sorted: what a method walks from.

    At most ``bound`` of them, asked of the KG itself (a store or an endpoint, so no local copy
    of a remote KG is needed), without ORDER BY: ordering all of Freebase's subjects would take
    the server minutes. Sorted here, so that a seed picks the same entities from the same KG.
    """
    rows = kg.select(
        f"SELECT DISTINCT ?s WHERE {{ ?s ?p ?o FILTER(isIRI(?s) && ?p != <{NAME}> "
        f'&& STRSTARTS(STR(?s), "{NS}")) }} LIMIT {bound}'
    )
    found = []
    for row in rows:
        try:
            iri(row["s"].value[len(NS) :])
        except ValueError:
            continue
        found.append(row["s"].value[len(NS) :])
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
        raise ValueError("no entity to bench: the KG has no Freebase entity with an outgoing edge")
    rng = random.Random(seed)
    picked = rng.sample(entities, min(calls, len(entities)))
    relation_ms: list[float] = []
    neighbor_ms: list[float] = []
    for entity in picked:
        relations = _timed(lambda: kg.relations(entity, "out"), relation_ms)
        if relations:
            relation = rng.choice(relations)
            _timed(lambda: kg.neighbors(entity, relation, "out"), neighbor_ms)
    return {
        **_summary("relations", relation_ms),
        **_summary("neighbors", neighbor_ms),
        "relations_calls": len(relation_ms),
        "neighbors_calls": len(neighbor_ms),
    }
