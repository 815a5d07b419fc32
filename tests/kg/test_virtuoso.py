"""A real Virtuoso (the engine of the papers' Freebase endpoints) holding the demo KG: the KG
protocol and every KG method answer as on the embedded store, a MetaQA slice too, and Virtuoso's
silent cuts (row cap, anytime timeout) are observed on the raw HTTP response.

Skipped without ``virtuoso-t`` (``apt-get install virtuoso-opensource``), except in CI (the
environment variable ``CI`` set), where a missing Virtuoso fails: CI must run these.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from itertools import islice
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgx.core.sources import name_id
from kgx.kg import BUNDLED_KG, EmbeddedKG, EndpointKG, build_store
from kgx.kg.endpoint import KGUnavailable
from kgx.kg.freebase import NS, iri, is_literal
from kgx.kg.serve import ServerError, free_port
from kgx.kg.virtuoso import VirtuosoServer
from kgx.run.execute import execute
from kgx.run.spec import to_run_spec
from tests.helpers import kgx_env
from tests.kg.test_protocol import AUSTRALIA, CALLS, JFK, RFK

pytestmark = pytest.mark.slow

HUB, HUB_RELATION = "location.location", "type.object.type"  # 137 places have this type in the demo KG
MAX_ROWS = 100
MAX_EXECUTION_S = 1  # seconds: a heavy query runs past it
# ~17 million pairs, each compared as strings: seconds of work, under Virtuoso's cost estimate limit.
HEAVY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . FILTER(STR(?c) < STR(?f)) }"
METHODS = ["lmp", "knowpath", "tog", "tog_r", "cgpe"]
METAQA_LINES = 20_000
FB_ID = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")  # what kgx.kg.freebase.iri accepts
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def virtuoso_installed() -> None:
    if shutil.which("virtuoso-t") and shutil.which("isql-vt"):
        return
    message = "virtuoso-t/isql-vt not on PATH: apt-get install virtuoso-opensource"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the Virtuoso tests, but {message}")
    pytest.skip(message)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return build_store([BUNDLED_KG], "nt", tmp_path_factory.mktemp("kg") / "demo")


@pytest.fixture(scope="module")
def server(virtuoso_installed, store):
    """The demo KG, from its store, with Virtuoso's packaged limits."""
    with VirtuosoServer(store) as running:
        yield running


@pytest.fixture(scope="module")
def cutting(virtuoso_installed):
    """The demo KG, from its .nt file, with limits small enough to provoke Virtuoso's cuts."""
    with VirtuosoServer(BUNDLED_KG, max_rows=MAX_ROWS, max_execution_s=MAX_EXECUTION_S) as running:
        yield running


def raw(url: str, query: str, **params: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of a GET, error statuses included: what any client receives."""
    request = urllib.request.Request(
        url + "?" + urllib.parse.urlencode({"query": query, **params}),
        headers={"Accept": "application/sparql-results+json"},
    )
    try:
        with _DIRECT.open(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def refuses(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def entities(store: Path) -> list[str]:
    """Every Freebase id of the store, as subject or object."""
    found = set()
    for quad in ox.Store.read_only(str(store)):
        for term in (quad.subject, quad.object):
            if isinstance(term, ox.NamedNode) and term.value.startswith(NS):
                found.add(term.value[len(NS) :])
    return sorted(fb_id for fb_id in found if FB_ID.match(fb_id))


def same_number(embedded: str, virtuoso: str) -> bool:
    """Virtuoso stores xsd:float and xsd:gYear natively and prints them its own way
    (``"7692024"`` as ``"7.69202e+06"``, ``"-0455"`` as ``"-455"``): the same number to six digits."""
    try:
        a, b = float(embedded.strip('"')), float(virtuoso.strip('"'))
    except ValueError:
        return False
    return is_literal(embedded) and is_literal(virtuoso) and a == pytest.approx(b, rel=1e-5)


# -- the server itself --------------------------------------------------------------------------


def test_missing_binary_names_the_apt_package(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="apt-get install virtuoso-opensource"):
        VirtuosoServer(BUNDLED_KG).start()


def test_nt_files_load_into_the_graph_and_nothing_is_left_after_the_block(virtuoso_installed, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the instance's directory goes here
    source = tmp_path / "data" / "two.nt"
    source.parent.mkdir()
    source.write_text(f'<{NS}m.a> <{NS}x.y.z> <{NS}m.b> .\n<{NS}m.a> <{NS}type.object.name> "A"@en .\n')
    with VirtuosoServer(source, graph="http://kgx.test/two") as server:
        assert server.url == f"http://127.0.0.1:{server.http_port}/sparql"
        count = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{server.graph}> {{ ?s ?p ?o }} }}"
        assert EndpointKG(server.url).select(count)[0]["n"].value == "2"
        assert EndpointKG(server.url).neighbors("m.a", "x.y.z", "out") == ["m.b"]
        assert 0 < server.startup_s < 60 and 0 < server.load_s
    assert server.process.returncode is not None
    assert refuses(server.http_port) and refuses(server.isql_port)
    assert not list(tmp_path.glob("kgx-virtuoso-*"))


def test_a_file_virtuoso_cannot_parse_stops_it_with_the_loaders_error(virtuoso_installed, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    bad = tmp_path / "bad.nt"
    bad.write_text(f'<{NS}m.a> <{NS}x.y.z> "unterminated .\n')
    server = VirtuosoServer(bad)
    with pytest.raises(ServerError, match=r"could not load 1 file\(s\)[\s\S]*bad\.nt: .*TURTLE RDF loader"):
        server.start()
    assert server.process.returncode is not None and not list(tmp_path.glob("kgx-virtuoso-*"))


# -- the KG protocol: the same answers as the embedded store ------------------------------------

TYPES = [("types", ([JFK, RFK, AUSTRALIA, "m.0irs7", '"1961-01-21"'],))]


@pytest.mark.parametrize("operation, args", CALLS + TYPES, ids=[f"{op}{i}" for i, (op, _) in enumerate(CALLS + TYPES)])
def test_protocol_answers_as_the_embedded_store(server, store, operation, args):
    assert getattr(EndpointKG(server.url), operation)(*args) == getattr(EmbeddedKG(store), operation)(*args)


def test_every_entity_walks_alike_but_for_virtuosos_numbers(server, store):
    """Relations both ways and neighbours across each, names and types, for every entity: equal,
    except literals Virtuoso prints as its native numbers (tested below, so it stays known)."""
    embedded, virtuoso = EmbeddedKG(store), EndpointKG(server.url)
    ids = entities(store)
    assert embedded.names(ids) == virtuoso.names(ids) and embedded.types(ids) == virtuoso.types(ids)
    renumbered = 0
    for entity in ids:
        for direction in ("out", "in"):
            relations = embedded.relations(entity, direction)
            assert virtuoso.relations(entity, direction) == relations, (entity, direction)
            for relation in relations:
                ours = embedded.neighbors(entity, relation, direction)
                theirs = virtuoso.neighbors(entity, relation, direction)
                if ours != theirs:
                    assert len(ours) == len(theirs) and all(map(same_number, ours, theirs)), (entity, relation)
                    renumbered += 1
    assert renumbered  # the demo KG has areas and BC years: if none differed, the check above is untested


def test_virtuoso_prints_floats_to_six_digits_and_years_without_padding(server, store):
    virtuoso, embedded = EndpointKG(server.url), EmbeddedKG(store)
    assert embedded.neighbors(AUSTRALIA, "location.location.area", "out") == ['"7692024"']
    assert virtuoso.neighbors(AUSTRALIA, "location.location.area", "out") == ['"7.69202e+06"']
    assert embedded.neighbors("m.0tv2m2", "people.deceased_person.date_of_death", "out") == ['"-0455"']
    assert virtuoso.neighbors("m.0tv2m2", "people.deceased_person.date_of_death", "out") == ['"-455"']


# -- whole runs: every KG method predicts the same against Virtuoso -----------------------------


@pytest.mark.parametrize("method", METHODS)
def test_method_predicts_the_same_on_virtuoso(server, method, compose_cfg, in_tmp):
    def answers(name: str, *kg: str) -> dict[str, list[str]]:
        out = in_tmp / name
        outcome = execute(
            to_run_spec(
                compose_cfg(
                    f"method={method}",
                    "llm=scripted",
                    "run.progress=false",
                    "dataset.limit=8",
                    f"run.output_dir={out}",
                    f"run.tracking_uri=sqlite:///{out}/mlflow.db",
                    *kg,
                )
            ),
            in_tmp,
        )
        assert outcome.status == "FINISHED" and outcome.summary["errors"] == 0, (name, outcome.failures)
        return {r.id: r.prediction.answers for r in outcome.records}

    embedded = answers("embedded")
    assert len(embedded) == 8 and any(embedded.values())
    assert answers("virtuoso", "kg=sparql", f"kg.endpoint={server.url}") == embedded


# -- a MetaQA slice ------------------------------------------------------------------------------


def test_metaqa_two_hop_walks_alike(virtuoso_installed, tmp_path):
    data = os.environ.get("KGX_DATA_DIR")
    if not data or not (Path(data) / "metaqa" / "kb.txt").is_file():
        pytest.skip("needs $KGX_DATA_DIR/metaqa/kb.txt (MetaQA, see conf/dataset/metaqa_2hop.yaml)")
    kb, questions = Path(data) / "metaqa" / "kb.txt", Path(data) / "metaqa" / "2-hop" / "qa_test.txt"
    with kb.open(encoding="utf-8") as lines:
        (tmp_path / "kb.txt").write_text("".join(islice(lines, METAQA_LINES)), encoding="utf-8")
    store = build_store([tmp_path / "kb.txt"], "metaqa", tmp_path / "store")
    embedded = EmbeddedKG(store)
    topics = []
    with questions.open(encoding="utf-8") as lines:
        for line in lines:
            name = line.split("[", 1)[1].split("]", 1)[0]
            if embedded.relations(name_id(name), "out") and name not in topics:
                topics.append(name)
            if len(topics) == 5:
                break
    assert len(topics) == 5
    with VirtuosoServer(store) as server:
        virtuoso = EndpointKG(server.url)
        for name in topics:
            assert virtuoso.search(name) == embedded.search(name) == [name_id(name)]
            frontier = [name_id(name)]
            for _hop in range(2):
                reached = []
                for entity in frontier[:10]:
                    for direction in ("out", "in"):
                        relations = embedded.relations(entity, direction)
                        assert virtuoso.relations(entity, direction) == relations
                        for relation in relations:
                            found = embedded.neighbors(entity, relation, direction)
                            assert virtuoso.neighbors(entity, relation, direction) == found
                            reached += found
                assert reached and virtuoso.names(reached) == embedded.names(reached)
                frontier = sorted(set(reached))


# -- Virtuoso's silent cuts ----------------------------------------------------------------------


def test_a_result_past_max_rows_is_cut_with_http_200(cutting, store):
    query = f"SELECT DISTINCT ?x WHERE {{ ?x {iri(HUB_RELATION)} {iri(HUB)} }} ORDER BY ?x"
    status, headers, body = raw(cutting.url, query)
    assert status == 200 and headers.get("X-SPARQL-MaxRows") == str(MAX_ROWS)
    assert len(json.loads(body)["results"]["bindings"]) == MAX_ROWS < len(EmbeddedKG(store).select(query))


def test_an_anytime_query_past_its_time_returns_partial_results_with_http_200(cutting):
    status, headers, _ = raw(cutting.url, HEAVY, timeout="30000")  # capped by MaxQueryExecutionTime
    assert status == 200 and headers.get("X-SQL-State") == "S1TAT"
    assert "incomplete results" in headers.get("X-SQL-Message", "")


def test_a_plain_query_past_its_time_is_an_error_not_a_cut(cutting):
    """Without the request's ``timeout`` (what kgx sends), MaxQueryExecutionTime is a hard limit."""
    status, headers, body = raw(cutting.url, HEAVY)
    assert status == 500 and "X-SQL-State" not in headers and b"SR171: Transaction timed out" in body


def test_kgx_refuses_a_cut_result(cutting):
    with pytest.raises(KGUnavailable) as caught:
        EndpointKG(cutting.url, retries=0).neighbors(HUB, HUB_RELATION, "in")
    assert caught.value.kind == "kg.truncated"


def test_kgx_reports_a_query_past_the_time_limit_without_retrying_it(cutting):
    """kgx sends no ``timeout`` parameter, so Virtuoso never hands it a partial result: the limit
    is an error (kg.partial, for engines that do send partial rows, is tested on a fake server)."""
    start = time.perf_counter()
    with pytest.raises(KGUnavailable) as caught:
        EndpointKG(cutting.url, retries=3).select(HEAVY)
    assert caught.value.kind == "kg.timeout" and "MaxQueryExecutionTime" in str(caught.value)
    assert time.perf_counter() - start < 2 * MAX_EXECUTION_S + 1  # one try, not four


def test_the_cli_serves_a_store_on_virtuoso_for_users(virtuoso_installed, store):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgx.kg", "serve", "--engine", "virtuoso", "--store", str(store), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=kgx_env(),
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"SPARQL query endpoint: http://127.0.0.1:{port}/sparql"), proc.stderr.read()
        kg = EndpointKG(f"http://127.0.0.1:{port}/sparql")
        assert kg.search("John F. Kennedy") == EmbeddedKG(store).search("John F. Kennedy")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert proc.returncode == 0
