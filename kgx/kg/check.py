"""Does an endpoint look like the Freebase kgx's methods expect? (``python -m kgx.kg check``)

A real endpoint can differ from a test store in ways no query reports as an error: the data in
another graph (every query answers nothing), names under another predicate or without language
tags, no types, no CVT nodes. Each check is one bounded query, so it answers in seconds on all
of Freebase; the sample lookups are the very calls methods make, timed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, TypeVar

from kgx.kg.bench import candidate_entities
from kgx.kg.freebase import NAME, NS
from kgx.kg.sparql import NOTABLE_TYPES, TYPE, SparqlKG, node

COUNT_BOUND = 100_000  # statements counted at most per predicate
CVT_POOL = 5000  # object nodes looked at for an unnamed one
SAMPLE_TRIES = 10  # candidate entities tried for one with relations, when none is typed and named
T = TypeVar("T")


@dataclass(frozen=True)
class Finding:
    what: str
    status: str  # "ok" | "warn" (works, but some questions may suffer) | "fail" (not usable)
    detail: str


def _timed(call: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = call()
    return result, (time.perf_counter() - start) * 1000


def _count(kg: SparqlKG, predicate: str) -> tuple[str, str]:
    """Statements of ``predicate`` and the entities they are about, among the first
    ``COUNT_BOUND`` statements (shown ``100000+`` when the bound was reached)."""
    rows = kg.select(
        f"SELECT (COUNT(*) AS ?n) (COUNT(DISTINCT ?e) AS ?e_n) WHERE {{ "
        f"SELECT ?e WHERE {{ ?e <{predicate}> ?o }} LIMIT {COUNT_BOUND} }}"
    )
    statements, entities = (int(rows[0]["n"].value), int(rows[0]["e_n"].value)) if rows else (0, 0)
    more = "+" if statements >= COUNT_BOUND else ""
    return f"{statements}{more}", f"{entities}{more}"


def _names(kg: SparqlKG) -> list[Finding]:
    labels, entities = _count(kg, NAME)
    found = [
        Finding("names", "ok" if labels != "0" else "fail", f"{labels} type.object.name labels on {entities} entities")
    ]
    rows = kg.select(f'SELECT ?e ?n WHERE {{ ?e <{NAME}> ?n FILTER(langMatches(lang(?n), "en")) }} LIMIT 1')
    found.append(
        Finding("english", "ok", f'{node(rows[0]["e"])} is named "{rows[0]["n"].value}"@en')
        if rows
        else Finding("english", "fail", "no name tagged @en: Freebase names are English-tagged")
    )
    return found


def _types(kg: SparqlKG) -> Finding:
    _, notable = _count(kg, NOTABLE_TYPES)
    _, typed = _count(kg, TYPE)
    status = "ok" if notable != "0" and typed != "0" else "warn" if notable != "0" or typed != "0" else "fail"
    return Finding(
        "types", status, f"{notable} entities with common.topic.notable_types, {typed} with type.object.type"
    )


def _cvt(kg: SparqlKG) -> Finding:
    rows = kg.select(
        f"SELECT ?c WHERE {{ {{ SELECT DISTINCT ?c WHERE {{ ?s ?p ?c FILTER(isIRI(?c) && "
        f'STRSTARTS(STR(?c), "{NS}")) }} LIMIT {CVT_POOL} }} FILTER NOT EXISTS {{ ?c <{NAME}> ?n }} '
        f"?c ?q ?o }} LIMIT 1"
    )
    if not rows:
        return Finding(
            "cvt",
            "warn",
            f"no unnamed node with attributes among {CVT_POOL} object nodes: "
            f"facts held by CVTs (a position with its dates) may be missing",
        )
    cvt = node(rows[0]["c"])
    return Finding("cvt", "ok", f"{cvt} is unnamed, shown as {kg.names([cvt])[cvt][:120]}")


def _sample_entity(kg: SparqlKG) -> tuple[str, list[str], float]:
    """A typed, English-named entity (what a question starts from), else any with relations."""
    rows = kg.select(
        f'SELECT ?e WHERE {{ ?e <{NOTABLE_TYPES}> ?t . ?e <{NAME}> ?n FILTER(langMatches(lang(?n), "en")) }} LIMIT 1'
    )
    picks = [node(rows[0]["e"])] if rows else candidate_entities(kg, SAMPLE_TRIES)
    relations, ms = [], 0.0
    for entity in picks:
        relations, ms = _timed(lambda: kg.relations(entity, "out"))
        if relations:
            return entity, relations, ms
    return (picks[0] if picks else ""), relations, ms


def _sample(kg: SparqlKG) -> list[Finding]:
    entity, relations, relations_ms = _sample_entity(kg)
    if not relations:
        return [Finding("sample", "fail", "no entity with a relation kgx keeps (after kg.filters)")]
    neighbors, neighbors_ms = _timed(lambda: kg.neighbors(entity, relations[0], "out"))
    names, names_ms = _timed(lambda: kg.names([entity, *neighbors[:5]]))
    found = [
        Finding(
            "sample",
            "ok" if neighbors else "fail",
            f"{entity} ({names.get(entity, 'unnamed')}): relations {len(relations)} in {relations_ms:.1f} ms, "
            f"neighbors via {relations[0]} {len(neighbors)} in {neighbors_ms:.1f} ms, "
            f"names {len(names)} in {names_ms:.1f} ms",
        )
    ]
    if entity in names and not names[entity].startswith("("):
        hits, search_ms = _timed(lambda: kg.search(names[entity]))
        found.append(
            Finding(
                "search",
                "ok" if entity in hits else "warn",
                f'"{names[entity]}" finds {len(hits)} entities in {search_ms:.1f} ms, '
                f"{'including' if entity in hits else 'not'} {entity}",
            )
        )
    return found


def check(kg: SparqlKG) -> list[Finding]:
    """Every finding, in the order shown; any ``fail`` means kgx's methods cannot work on it."""
    return [*_names(kg), _types(kg), _cvt(kg), *_sample(kg)]


def verdict(findings: list[Finding]) -> tuple[bool, str]:
    failed = [f.what for f in findings if f.status == "fail"]
    warned = [f.what for f in findings if f.status == "warn"]
    if failed:
        return False, f"verdict: does not look like Freebase (failed: {', '.join(failed)})"
    note = f" (warnings: {', '.join(warned)})" if warned else ""
    return True, f"verdict: looks like Freebase, usable with kg=sparql{note}"
