"""Search that an engine with tens of millions of names can answer, in one order on every
engine; CVT descriptions in English with translations dropped (kgx.kg.sparql)."""

from __future__ import annotations

import pytest

from kgx.kg import EmbeddedKG, build_store
from kgx.kg.sparql import SEARCH_POOL

NS = "http://rdf.freebase.com/ns/"
NAME = f"<{NS}type.object.name>"

TRIPLES = f"""
<{NS}m.au> {NAME} "Australien"@de .
<{NS}m.au> {NAME} "Australia"@en .
<{NS}m.au> {NAME} "Australie"@fr .
<{NS}m.pos> <{NS}government.position_held.jurisdiction> <{NS}m.au> .
<{NS}m.pos> <{NS}government.position_held.from> "1961-01-21" .
<{NS}m.pos> <{NS}government.position_held.office_holder> <{NS}m.pm> .
<{NS}m.pm> {NAME} "Robert Menzies"@en .
<{NS}m.pm> {NAME} "Robert Menzies"@de .
<{NS}m.pos2> <{NS}government.position_held.jurisdiction> <{NS}m.de> .
<{NS}m.de> {NAME} "Deutschland"@de .
<{NS}m.b> {NAME} "Paris"@en .
<{NS}m.a> {NAME} "paris"@en .
<{NS}m.c> {NAME} "Paris Hilton"@en .
<{NS}m.d> {NAME} "Paris, Texas"@en .
"""


class Recording(EmbeddedKG):
    """The embedded store, keeping the query strings it was sent."""

    def __init__(self, store):
        super().__init__(store)
        self.queries: list[str] = []

    def _select(self, query):
        self.queries.append(query)
        return super()._select(query)


@pytest.fixture
def kg(tmp_path):
    source = tmp_path / "kg.nt"
    source.write_text(TRIPLES)
    return Recording(build_store([source], "nt", tmp_path / "store"))


def test_cvt_descriptions_name_each_neighbour_once_in_english(kg):
    assert kg.names(["m.pos"])["m.pos"] == "(from: 1961-01-21; jurisdiction: Australia; office_holder: Robert Menzies)"
    assert kg.names(["m.pos2"])["m.pos2"] == "(jurisdiction: Deutschland)"  # no English name: the one it has


def test_exact_search_is_an_indexable_lookup_with_the_exact_casing_first(kg):
    assert kg.search("Paris") == ["m.b", "m.a"]
    assert kg.search("PARIS") == ["m.a", "m.b"]  # another casing: both, in id order
    (query,) = kg.queries[:1]
    assert "FILTER" not in query and '"Paris"@en' in query and "ORDER BY ?e" in query


def test_fuzzy_search_is_ordered_and_bounded(kg):
    assert kg.search("hilton paris texas") == ["m.c", "m.d", "m.a", "m.b"]  # overlap, then id
    assert f"ORDER BY ?e ?n LIMIT {SEARCH_POOL}" in kg.queries[-1]


def test_search_text_is_only_ever_a_literal(kg):
    found = kg.search('Paris" } ; DROP ALL ; { "')  # searched for as words, never run as SPARQL
    assert found == ["m.a", "m.b", "m.c", "m.d"] and kg.search("Paris") == ["m.b", "m.a"]
