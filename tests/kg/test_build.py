"""Building stores: name-level files become Freebase-shaped RDF with stable ids; bad lines fail
the build with file:line (or are counted under skip_bad); the CLI reports what it loaded."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgx.core.sources import SourceError, name_id
from kgx.kg import name_level
from kgx.kg.freebase import NAME, NS
from kgx.kg.name_level import relation_id
from kgx.kg.pipelines import build, build_store, fingerprint
from tests.helpers import kgx_env

CVT = "m.05kh7j4"


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def store_of(path: Path) -> ox.Store:
    return ox.Store.read_only(str(path))


def column(store: ox.Store, query: str) -> list[str]:
    return sorted(row[0].value for row in store.query(query))


def out_of(store: ox.Store, fb_id: str, relation: str) -> list[str]:
    return column(store, f"SELECT ?x WHERE {{ <{NS}{fb_id}> <{NS}{relation}> ?x }}")


def in_of(store: ox.Store, fb_id: str, relation: str) -> list[str]:
    return column(store, f"SELECT ?x WHERE {{ ?x <{NS}{relation}> <{NS}{fb_id}> }}")


def names_of(store: ox.Store, fb_id: str) -> list[tuple[str, str]]:
    rows = store.query(f"SELECT ?n WHERE {{ <{NS}{fb_id}> <{NAME}> ?n }}")
    return [(row[0].value, row[0].language) for row in rows]


def test_name_ids_are_stable_freebase_shaped_and_keep_raw_mids():
    # Pinned: every machine and every future kgx must give this id for this name.
    assert name_id("Jack Frost") == "m.kgxt3lt4q5eae3pzqm6"
    assert name_id("Jack Frost") != name_id("jack frost")
    assert re.fullmatch(r"m\.kgx[a-z2-7]{16}", name_id("Émile Zola|x\ty"))
    assert name_id(CVT) == CVT


def test_tsv_names_become_labelled_ids_and_raw_mids_unnamed_nodes(tmp_path):
    source = write(
        tmp_path / "kg.tsv",
        "Alice\tpeople.person.places_lived\tm.05kh7j4",
        "m.05kh7j4\tpeople.place_lived.location\tParis",
        'Alice\tpeople.person.nickname\tAl "the" \\ Ace',
    )
    store = store_of(build_store([source], "tsv", tmp_path / "store"))
    alice, paris = name_id("Alice"), name_id("Paris")
    assert names_of(store, alice) == [("Alice", "en")]
    assert names_of(store, paris) == [("Paris", "en")]
    assert names_of(store, CVT) == []
    assert out_of(store, alice, "people.person.places_lived") == [NS + CVT]
    assert in_of(store, CVT, "people.person.places_lived") == [NS + alice]
    assert out_of(store, CVT, "people.place_lived.location") == [NS + paris]
    assert in_of(store, paris, "people.place_lived.location") == [NS + CVT]
    nick = out_of(store, alice, "people.person.nickname")[0][len(NS) :]
    assert names_of(store, nick) == [('Al "the" \\ Ace', "en")]
    assert len(store) == 3 + 3  # three edges, three named entities


def test_metaqa_relations_map_to_dotted_ids(tmp_path):
    source = write(
        tmp_path / "kb.txt",
        "Jack Frost|starred_actors|Scott MacDonald",
        "Jack Frost|directed_by|Troy Miller",
        "Jack Frost|release_year|1998",
    )
    store = store_of(build_store([source], "metaqa", tmp_path / "store"))
    film = name_id("Jack Frost")
    assert out_of(store, film, "film.film.starring") == [NS + name_id("Scott MacDonald")]
    assert in_of(store, name_id("Troy Miller"), "film.film.directed_by") == [NS + film]
    assert names_of(store, name_id("1998")) == [("1998", "en")]
    assert len(store) == 3 + 4


def test_pathquestion_bare_and_pql_relations(tmp_path):
    pq = write(tmp_path / "2H-kb.txt", "ludwig_ii_of_bavaria\tparents\tmaximilian_ii_of_bavaria")
    pql = write(tmp_path / "PQL2-KB.txt", "Khanty_people\t__people__ethnicity__languages_spoken\tKhanty_Language")
    store = store_of(build_store([pq, pql], "pathquestion", tmp_path / "store"))
    assert out_of(store, name_id("ludwig_ii_of_bavaria"), "people.person.parents") == [
        NS + name_id("maximilian_ii_of_bavaria")
    ]
    assert in_of(store, name_id("Khanty_Language"), "people.ethnicity.languages_spoken") == [
        NS + name_id("Khanty_people")
    ]
    assert relation_id("pathquestion", "spouse") == "people.person.spouse_s"


@pytest.mark.parametrize(
    "fmt, lines, reason",
    [
        ("metaqa", ["A|directed_by|B", "A|directed_by"], "expected head|relation|tail"),
        ("metaqa", ["A|directed_by|B", "A|produced_by|B"], "unknown MetaQA relation 'produced_by'"),
        ("tsv", ["A\tx.y\tB", "A\tnot a relation\tB"], "relation 'not a relation' is not a dotted Freebase id"),
        ("tsv", ["A\tx.y\tB", "A\tparents\tB"], "relation 'parents' is not a dotted Freebase id"),
        ("tsv", ["A\tx.y\tB", "A\tx.y\t "], "expected head<TAB>relation<TAB>tail"),
        ("pathquestion", ["a\tgender\tb", "a\tfriends\tb"], "unknown PathQuestion relation 'friends'"),
        ("nt", [f"<{NS}a> <{NS}b> <{NS}c> .", f"<{NS}a> <{NS}b> c ."], ""),
    ],
)
def test_a_bad_line_fails_the_build_naming_file_and_line(tmp_path, fmt, lines, reason):
    source = write(tmp_path / "kg.src", *lines)
    with pytest.raises(SourceError, match=re.escape(f"{source}:2: {reason}")):
        build([source], fmt, tmp_path / "store")
    assert list(tmp_path.iterdir()) == [source], "no store and no leftovers after a failed build"


def test_skip_bad_drops_and_counts_bad_lines(tmp_path):
    source = write(tmp_path / "kb.txt", "A|directed_by|B", "broken", "A|written_by|C", "A||C")
    result = build([source], "metaqa", tmp_path / "store", skip_bad=True)
    assert (result.skipped, result.triples) == (2, 2 + 3)
    assert result.first_skipped.startswith(f"{source}:2: expected head|relation|tail")
    assert build([source], "metaqa", tmp_path / "store", skip_bad=True).reused


def test_skip_bad_nt_judges_each_line_alone(tmp_path):
    # The parser's own recovery after an unterminated IRI would swallow the good last line.
    source = write(
        tmp_path / "kg.nt", f"<{NS}a> <{NS}b> <{NS}c> .", f"<{NS}a> <{NS}b <{NS}c> .", f"<{NS}d> <{NS}b> <{NS}c> ."
    )
    result = build([source], "nt", tmp_path / "store", skip_bad=True)
    assert (result.skipped, result.triples) == (1, 2)


def test_turtle_cannot_skip_bad_lines(tmp_path):
    source = write(tmp_path / "kg.ttl", f"<{NS}a> <{NS}b> <{NS}c> .")
    with pytest.raises(SourceError, match="line-based"):
        build([source], "ttl", tmp_path / "store", skip_bad=True)
    assert build([source], "ttl", tmp_path / "store").triples == 1


def test_two_names_sharing_an_id_fail_the_build(tmp_path, monkeypatch):
    monkeypatch.setattr(name_level, "name_id", lambda name: "m.kgxsame")
    source = write(tmp_path / "kb.txt", "A|directed_by|B")
    with pytest.raises(SourceError, match="'A' and 'B' share the generated id m.kgxsame"):
        build([source], "metaqa", tmp_path / "store")


def test_two_builds_give_the_same_triples(tmp_path):
    source = write(
        tmp_path / "kb.txt",
        "Jack Frost|directed_by|Troy Miller",
        "Jack Frost|has_genre|Comedy",
        "Other|has_genre|Comedy",
    )
    first = store_of(build_store([source], "metaqa", tmp_path / "one"))
    second = store_of(build_store([source], "metaqa", tmp_path / "two"))
    assert sorted(map(str, first)) == sorted(map(str, second))
    assert len(first) == 3 + 4


def test_a_changed_format_or_skip_bad_rebuilds(tmp_path):
    source = write(tmp_path / "kb.tsv", "A\tx.y\tB")
    assert not build([source], "tsv", tmp_path / "store").reused
    assert build([source], "tsv", tmp_path / "store").reused
    assert not build([source], "tsv", tmp_path / "store", skip_bad=True).reused
    assert fingerprint([source], "tsv", False) != fingerprint([source], "pathquestion", False)


def kgx_kg(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgx.kg", *args], capture_output=True, text=True, env=kgx_env(), timeout=120
    )


def test_cli_load_prints_what_it_loaded(tmp_path):
    source = write(tmp_path / "kb.txt", "A|directed_by|B", "oops", "A|written_by|C")
    done = kgx_kg("load", str(source), "--format", "metaqa", "--store", str(tmp_path / "store"), "--skip-bad")
    assert done.returncode == 0, done.stderr
    assert "skipped=1 malformed lines" in done.stdout
    assert re.search(r"^triples=5 seconds=\d+\.\d+ triples_per_s=\d+$", done.stdout, re.M), done.stdout
    strict = kgx_kg("load", str(source), "--format", "metaqa", "--store", str(tmp_path / "strict"))
    assert strict.returncode == 1
    assert f"{source}:2: expected head|relation|tail" in strict.stderr
    assert "Traceback" not in strict.stderr


def test_metaqa_kb_loads_whole(tmp_path):
    if not os.environ.get("KGX_DATA_DIR"):
        pytest.skip("KGX_DATA_DIR is not set: the shared benchmark data is not available")
    kb = Path(os.environ["KGX_DATA_DIR"]) / "metaqa" / "kb.txt"
    if not kb.is_file():
        pytest.skip(f"{kb} not found under KGX_DATA_DIR")
    edges, names = 0, set()
    for line in kb.read_text(encoding="utf-8").splitlines():
        head, _, tail = line.split("|")
        names.update((head, tail))
        edges += 1
    assert edges == 129_413
    result = build([kb], "metaqa", tmp_path / "metaqa")
    assert (result.triples, result.skipped) == (edges + len(names), 0)
