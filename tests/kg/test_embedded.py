"""The embedded store on the bundled demo KG: both edge directions, names, safe ids, reuse."""

from __future__ import annotations

import pytest

from kgx.core.kg_config import EmbeddedKGConfig
from kgx.kg import BUNDLED_KG, EmbeddedKG, build_store, open_kg
from kgx.kg.freebase import iri
from kgx.kg.pipelines import MANIFEST

AUSTRALIA, CANBERRA = "m.0_kk", "m.04k0"


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("cache"))


def test_bundled_kg_is_loaded_whole(kg):
    assert len(kg) == sum(1 for line in BUNDLED_KG.read_text().splitlines() if line.startswith("<"))


def test_outgoing_and_incoming_edges(kg):
    assert "location.country.capital" in kg.relations(AUSTRALIA, "out")
    assert "location.country.capital" in kg.relations(CANBERRA, "in")
    assert "location.country.capital" not in kg.relations(CANBERRA, "out")
    assert kg.neighbors(AUSTRALIA, "location.country.capital", "out") == [CANBERRA]
    assert kg.neighbors(CANBERRA, "location.country.capital", "in") == [AUSTRALIA]


def test_english_name_preferred(kg):
    assert kg.names([AUSTRALIA, CANBERRA]) == {AUSTRALIA: "Australia", CANBERRA: "Canberra"}


@pytest.mark.parametrize("bad", ["m.0_kk> ?p ?o } #", 'm.0"x', "m.0 kk", "m.0_kk}", "http://x/y", ""])
def test_ids_that_could_inject_sparql_are_refused(kg, bad):
    with pytest.raises(ValueError, match="not a Freebase id"):
        iri(bad)
    with pytest.raises(ValueError, match="not a Freebase id"):
        kg.relations(bad, "out")


def test_store_is_built_once_and_rebuilt_when_the_source_changes(tmp_path):
    source = tmp_path / "kg.nt"
    source.write_text('<http://rdf.freebase.com/ns/m.01> <http://rdf.freebase.com/ns/type.object.name> "A"@en .\n')
    store = build_store([source], "nt", tmp_path / "store")
    stamp = (store / MANIFEST).stat().st_mtime_ns
    assert build_store([source], "nt", tmp_path / "store") == store
    assert (store / MANIFEST).stat().st_mtime_ns == stamp
    source.write_text(
        source.read_text() + "<http://rdf.freebase.com/ns/m.02> "
        '<http://rdf.freebase.com/ns/type.object.name> "B"@en .\n'
    )
    assert len(EmbeddedKG(build_store([source], "nt", tmp_path / "store"))) == 2


def test_missing_source_names_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.nt"):
        build_store([tmp_path / "nowhere.nt"], "nt", tmp_path / "store")
