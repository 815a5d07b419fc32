"""A KB of one's own (``kg=custom``): any relation names, declared inverse lines folded into their
forward edge, and a store keyed by the sources' content."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgx.core.kg_config import EmbeddedKGConfig, KGConfig
from kgx.core.sources import SourceError, name_id
from kgx.kg import open_kg
from kgx.kg.name_level import custom_relation_id
from kgx.kg.pipelines import build
from tests import wc2014


def custom(*sources: Path, **settings) -> KGConfig:
    return EmbeddedKGConfig(name="custom", format="custom", sources=[str(s) for s in sources], **settings)


def test_any_relation_names_load_and_inverse_lines_fold(tmp_path):
    kb, _ = wc2014.write(tmp_path)
    result = build([kb], "custom", tmp_path / "store", drop_inverse="_inverse")
    assert result.folded == 6 and result.triples == wc2014.EDGES + wc2014.ENTITIES
    kg = open_kg(custom(kb, drop_inverse="_inverse"), tmp_path / "cache")
    ana, club = name_id("Ana_ROCHA"), name_id("Club_Norte")
    assert kg.relations(ana, "out") == ["is_aged", "plays_for_country", "plays_in_club", "plays_position"]
    assert kg.relations(club, "out") == ["is_in_country"]  # its inverse lines are gone
    assert sorted(kg.names(kg.neighbors(club, "plays_in_club", "in")).values()) == ["Ana_ROCHA", "Bo_LINDQVIST"]
    cy = name_id("Cy_OKAFOR")  # known only from an inverse line: kept, as its forward edge
    assert kg.names(kg.neighbors(cy, "plays_for_country", "out")) == {name_id("Lemuria"): "Lemuria"}


def test_without_drop_inverse_every_line_is_an_edge(tmp_path):
    kb, _ = wc2014.write(tmp_path)
    kg = open_kg(custom(kb), tmp_path / "cache")
    assert "plays_in_club_inverse" in kg.relations(name_id("Club_Norte"), "out")


def test_relation_names_become_ids_and_clashes_fail(tmp_path):
    assert custom_relation_id("plays_in_club") == "plays_in_club"
    assert custom_relation_id("film.film.directed_by") == "film.film.directed_by"
    assert custom_relation_id(" directed by (film) ") == "directed_by_film_"
    kb = tmp_path / "kb.tsv"
    kb.write_text("A\tdirected by\tB\nA\tdirected_by\tC\n")
    with pytest.raises(SourceError, match="relations 'directed by' and 'directed_by' both become the id directed_by"):
        build([kb], "custom", tmp_path / "store")
    kb.write_text("A\t--\tB\n")
    with pytest.raises(SourceError, match=r"kb\.tsv:1: relation '--' has no letter or digit"):
        build([kb], "custom", tmp_path / "store")


def test_two_custom_kbs_get_two_stores_keyed_by_content(tmp_path):
    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    first.write_text("A\tr\tB\n")
    second.write_text("A\tr\tC\n")
    cache = tmp_path / "cache"
    a, b = open_kg(custom(first), cache), open_kg(custom(second), cache)
    stores = sorted(p.name for p in (cache / "kg").iterdir())
    assert len(stores) == 2 and all(s.startswith("custom-") and len(s) == len("custom-") + 16 for s in stores)
    assert a.names(a.neighbors(name_id("A"), "r", "out")) == {name_id("B"): "B"}
    assert b.names(b.neighbors(name_id("A"), "r", "out")) == {name_id("C"): "C"}
    open_kg(custom(first, drop_inverse="_inv"), cache)  # folding makes another KG
    assert len(list((cache / "kg").iterdir())) == 3


def test_drop_inverse_needs_a_name_level_format(tmp_path):
    nt = tmp_path / "kg.nt"
    nt.write_text("")
    with pytest.raises(SourceError, match="kg.drop_inverse needs a name-level format"):
        build([nt], "nt", tmp_path / "store", drop_inverse="_inverse")
