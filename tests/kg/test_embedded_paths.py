"""The embedded store's index lookups answer exactly as its SPARQL queries do.

``EmbeddedKG`` reads neighbours, relations and names straight from the store's index; a handle whose
``_graph_name`` is None runs the SPARQL of ``SparqlKG`` on the same store. Every entity and relation of a KG with
literals, blank nodes, names in several languages and several relations per pair is asked both
ways, with and without noise.
"""

from __future__ import annotations

import pytest

from kgx.kg import BUNDLED_KG, EmbeddedKG, build_store
from kgx.kg.embedded import SMALL_DEGREE
from kgx.kg.freebase import NS, is_literal
from kgx.kg.sparql import Noise

EXTRA = f"""
<{NS}m.a> <{NS}film.film.directed_by> <{NS}m.b> .
<{NS}m.a> <{NS}film.film.directed_by> <{NS}m.c> .
<{NS}m.a> <{NS}film.film.written_by> <{NS}m.c> .
<{NS}m.a> <{NS}film.film.release_year> "1999"^^<http://www.w3.org/2001/XMLSchema#gYear> .
<{NS}m.a> <{NS}film.film.release_year> "1999" .
<{NS}m.a> <{NS}film.film.tagline> "Zed"@en .
<{NS}m.a> <{NS}film.film.tagline> "Alpha"@fr .
<{NS}m.a> <{NS}film.film.note> _:n1 .
<{NS}m.a> <{NS}film.film.note> <{NS}m.b> .
<{NS}m.a> <http://example.org/other> <{NS}m.b> .
<{NS}m.a> <{NS}film.film.sequel> <http://example.org/elsewhere> .
<{NS}m.a> <{NS}type.object.name> "Film"@fr .
<{NS}m.a> <{NS}type.object.name> "Film A"@en .
<{NS}m.a> <{NS}type.object.name> "A film" .
<{NS}m.b> <{NS}type.object.name> "B" .
<{NS}m.b> <{NS}type.object.name> "Bé"@de .
<{NS}m.c> <{NS}type.object.name> "C"@en-GB .
<{NS}m.c> <{NS}type.object.name> "Sea"@en .
"""
# A hub past SMALL_DEGREE both ways (read by SPARQL), with a literal among its out-edges.
HUB = (
    "".join(
        f"<{NS}m.film{i}> <{NS}film.film.genre> <{NS}m.hub> .\n<{NS}m.hub> <{NS}film.genre.films> <{NS}m.film{i}> .\n"
        for i in range(SMALL_DEGREE + 6)
    )
    + f'<{NS}m.hub> <{NS}film.genre.note> "many" .\n<{NS}m.hub> <{NS}type.object.name> "Hub"@en .\n'
)


class SparqlOnly(EmbeddedKG):
    """The same store, every call through SPARQL."""

    def _graph_name(self):
        return None


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    where = tmp_path_factory.mktemp("paths")
    source = where / "kg.nt"
    source.write_text(BUNDLED_KG.read_text() + EXTRA + HUB)
    return build_store([source], "nt", where / "store")


def ids(kg: EmbeddedKG) -> list[str]:
    """Every id in the namespace that is a subject or an object."""
    found = set()
    for quad in kg.store.quads_for_pattern(None, None, None, None):
        for term in (quad.subject, quad.object):
            if term.value.startswith(NS) and not hasattr(term, "language"):
                found.add(term.value[len(NS) :])
    return sorted(found)


def outcome(call, *args):
    """What a call returns, or the error it raises (a relation outside the namespace is refused)."""
    try:
        return call(*args)
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize("noise", [Noise(), Noise(drop_relations=0.3, drop_names=0.3, seed=5)], ids=["clean", "noisy"])
def test_index_lookups_answer_as_sparql(store, noise):
    fast, slow = EmbeddedKG(store, noise=noise), SparqlOnly(store, noise=noise)
    entities = [x for x in ids(fast) if not is_literal(x)]
    assert len(entities) > 50 and "m.hub" in entities
    asked = 0
    for entity in entities:
        for direction in ("out", "in"):
            relations = fast.relations(entity, direction)
            assert relations == slow.relations(entity, direction), (entity, direction)
            for relation in relations:
                got = outcome(fast.neighbors, entity, relation, direction)
                assert got == outcome(slow.neighbors, entity, relation, direction), (entity, relation, direction)
                assert outcome(fast.neighbors, entity, relation, direction) == got  # from the cache alike
                asked += 1
    assert asked > 100
    for _ in range(2):  # looked up, then from the cache: the same names in the same order
        assert list(fast.names(entities).items()) == list(slow.names(entities).items())
        assert fast.names(entities[::-1]) == slow.names(entities[::-1])
    assert fast.labels(entities + ['"1999"']) == slow.labels(entities + ['"1999"'])


def test_literals_and_blank_nodes_keep_sparqls_order_and_english_names_win(store):
    kg = EmbeddedKG(store)
    assert kg.neighbors("m.a", "film.film.directed_by", "out") == ["m.b", "m.c"]
    assert kg.neighbors("m.a", "film.film.tagline", "out") == SparqlOnly(store).neighbors(
        "m.a", "film.film.tagline", "out"
    )
    assert kg.names(["m.a", "m.b", "m.c"]) == {"m.a": "Film A", "m.b": "B", "m.c": "C"}


class Counting:
    """A store that counts the reads it is asked for."""

    def __init__(self, store):
        self.store, self.reads = store, 0

    def quads_for_pattern(self, *args):
        self.reads += 1
        return self.store.quads_for_pattern(*args)

    def query(self, *args, **kwargs):
        self.reads += 1
        return self.store.query(*args, **kwargs)


def test_names_are_kept_per_entity(store):
    kg = EmbeddedKG(store)
    kg.store = counting = Counting(kg.store)
    assert kg.names(["m.a", "m.b"]) == {"m.a": "Film A", "m.b": "B"}
    assert counting.reads == 2
    assert kg.names(["m.b", "m.c", "m.a"]) == {"m.b": "B", "m.c": "C", "m.a": "Film A"}
    assert counting.reads == 3  # m.c only: the other two were named before, in another list


def test_an_entitys_edges_one_way_are_one_read_and_a_hubs_go_through_sparql(store):
    kg = EmbeddedKG(store)
    kg.store = counting = Counting(kg.store)
    assert kg.relations("m.a", "out")[:2] == ["film.film.directed_by", "film.film.note"]
    assert counting.reads == 1
    assert kg.neighbors("m.a", "film.film.directed_by", "out") == ["m.b", "m.c"]
    assert kg.neighbors("m.a", "film.film.written_by", "out") == ["m.c"]
    assert kg.neighbors("m.a", "film.film.cast", "out") == []
    assert counting.reads == 1  # the relations' one index pass answered them all
    assert kg.neighbors("m.c", "film.film.written_by", "in") == ["m.a"]  # neighbours first: one pass too
    assert kg.relations("m.c", "in") == ["film.film.directed_by", "film.film.written_by"]
    assert counting.reads == 2
    films = kg.neighbors("m.hub", "film.film.genre", "in")
    assert len(films) == SMALL_DEGREE + 6 and films == sorted(films)
    reads = counting.reads
    assert kg.relations("m.hub", "in") == ["film.film.genre"]
    assert counting.reads == reads + 1  # its relations: one SPARQL query, not another pass
