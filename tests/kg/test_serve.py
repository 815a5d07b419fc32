"""A real ``oxigraph serve-read-only`` on the demo store: it answers over HTTP with the same data
as the embedded store, shares the directory with embedded readers, and is gone after the block;
``bench`` and ``check`` work against it with no local copy of the data; a query naming ``SERVICE``
is refused and reaches no other host."""

from __future__ import annotations

import http.server
import json
import re
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

import pyoxigraph as ox
import pytest

from kgx.kg import BUNDLED_KG, EmbeddedKG, build_store
from kgx.kg.bench import bench, candidate_entities
from kgx.kg.endpoint import EndpointKG, KGUnavailable
from kgx.kg.freebase import KGError
from kgx.kg.serve import OxigraphServer, ServerError
from kgx.kg.serve_front import REFUSAL
from tests.helpers import kgx_env

pytestmark = pytest.mark.slow

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
GRAPH = "http://rdf.freebase.com"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store([BUNDLED_KG], "nt", tmp_path_factory.mktemp("kg") / "demo")


def http_count(url: str) -> int:
    request = urllib.request.Request(
        url + "?" + urllib.parse.urlencode({"query": COUNT}), headers={"Accept": "application/sparql-results+json"}
    )
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10) as response:
        return int(json.load(response)["results"]["bindings"][0]["n"]["value"])


def refuses(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_served_store_answers_like_the_embedded_one_then_stops(store):
    with OxigraphServer(store) as server:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/query", server.url)
        embedded = ox.Store.read_only(str(store))  # read-only serving leaves the store open to others
        assert http_count(server.url) == len(embedded) == 3333
        port = server.port
    assert server.process.returncode is not None
    assert refuses(port)


def test_missing_binary_names_the_pip_package(store, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="pip install oxigraph"):
        OxigraphServer(store).start()


def test_a_server_that_dies_reports_its_stderr(tmp_path):
    with pytest.raises(ServerError, match=r"exited with code \d+ before answering:\n.+CURRENT"):
        OxigraphServer(tmp_path).start()  # no store there


def test_a_port_taken_is_named(store):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ServerError, match=rf"cannot listen on 127\.0\.0\.1:{port} \(.*\); choose another --port"):
            OxigraphServer(store, port=port).start()


def test_bench_times_both_backends(store):
    entities = candidate_entities(EmbeddedKG(store))
    assert "m.0_kk" in entities and all(not e.startswith("http") for e in entities)
    with OxigraphServer(store) as server:
        assert candidate_entities(EndpointKG(server.url)) == entities
        figures = bench(EndpointKG(server.url), entities, calls=20, seed=1)
    assert figures["relations_calls"] == 20 and figures["neighbors_calls"] > 0
    assert 0 < figures["relations_median_ms"] <= figures["relations_p95_ms"]


def test_cli_bench_against_a_served_store(store):
    done = subprocess.run(
        [sys.executable, "-m", "kgx.kg", "bench", "--store", str(store), "--endpoint", "serve", "--calls", "10"],
        capture_output=True,
        text=True,
        env=kgx_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert re.match(r"relations_median_ms=\d+\.\d+ neighbors_median_ms=\d+\.\d+ relations_p95_ms=", done.stdout)


def kg_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgx.kg", *args], capture_output=True, text=True, env=kgx_env(), timeout=120
    )


@pytest.fixture(scope="module")
def server(store):
    with OxigraphServer(store) as running:
        yield running


@pytest.fixture(scope="module")
def graph_store(tmp_path_factory):
    """The demo KG in a named graph, as Virtuoso holds Freebase; its default graph is empty."""
    path = tmp_path_factory.mktemp("kg") / "graph"
    built = ox.Store(str(path))
    built.load(path=str(BUNDLED_KG), format=ox.RdfFormat.N_TRIPLES, to_graph=ox.NamedNode(GRAPH))
    built.flush()
    del built
    return path


def test_cli_bench_draws_entities_from_the_endpoint(server):
    done = kg_cli("bench", "--endpoint", server.url, "--calls", "10")
    assert done.returncode == 0, done.stderr
    assert re.match(r"relations_median_ms=\d+\.\d+ .* relations_calls=10 neighbors_calls=\d+$", done.stdout.strip())


def test_cli_check_says_the_demo_looks_like_freebase(server):
    done = kg_cli("check", "--endpoint", server.url)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"endpoint {server.url}"
    assert lines[1] == "names    ok   431 type.object.name labels on 412 entities"
    assert lines[2] == 'english  ok   m.0t7whkt is named "A Doll\'s House"@en'
    assert lines[3] == "types    ok   261 entities with common.topic.notable_types, 520 with type.object.type"
    assert re.fullmatch(r"cvt      ok   m\.\w+ is unnamed, shown as \(\w+: .+\)", lines[4])
    assert re.fullmatch(
        r"sample   ok   m\.\w+ \(.+\): relations \d+ in [\d.]+ ms, neighbors via [\w.]+ [1-9]\d* in "
        r"[\d.]+ ms, names \d+ in [\d.]+ ms",
        lines[5],
    )
    assert re.fullmatch(r'search   ok   ".+" finds \d+ entities in [\d.]+ ms, including m\.\w+', lines[6])
    assert lines[7] == "verdict: looks like Freebase, usable with kg=sparql"


def test_check_and_queries_reach_a_named_graph_only_with_default_graph(graph_store):
    with OxigraphServer(graph_store) as served:
        assert EndpointKG(served.url, default_graph=GRAPH).names(["m.0_kk"])["m.0_kk"] == "Australia"
        with pytest.raises(
            KGUnavailable, match="holds no triple in its default graph; check kg.endpoint and kg.default_graph"
        ):
            EndpointKG(served.url).ping()
        found = kg_cli("check", "--endpoint", served.url, "--default-graph", GRAPH)
        missed = kg_cli("check", "--endpoint", served.url)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[0] == f"endpoint {served.url} (default graph {GRAPH})"
    assert "names    ok   431 type.object.name labels" in found.stdout
    assert missed.returncode == 1 and "holds no triple in its default graph" in missed.stderr


def test_check_fails_on_a_kg_that_is_not_freebase(tmp_path):
    path = tmp_path / "other"
    other = ox.Store(str(path))
    other.load(
        input="<http://example.org/a> <http://example.org/knows> <http://example.org/b> .\n",
        format=ox.RdfFormat.N_TRIPLES,
    )
    other.flush()
    del other
    with OxigraphServer(path) as served:
        done = kg_cli("check", "--endpoint", served.url)
    assert done.returncode == 1
    assert "names    fail 0 type.object.name labels on 0 entities" in done.stdout
    assert done.stdout.splitlines()[-1] == (
        "verdict: does not look like Freebase (failed: names, english, types, sample)"
    )


def test_check_refuses_credentials_in_the_url():
    done = kg_cli("check", "--endpoint", "http://bob:pw-77aa@127.0.0.1:9/sparql")
    assert done.returncode == 1 and "credentials in the URL" in done.stderr and "pw-77aa" not in done.stderr


class Elsewhere(http.server.ThreadingHTTPServer):
    """Another SPARQL endpoint, on loopback: it answers every request with one row and keeps the
    paths it was asked, so a test sees whether a query went out to it."""

    def __init__(self):
        asked: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                asked.append(self.path)
                body = b'{"head":{"vars":["o"]},"results":{"bindings":[{"o":{"type":"literal","value":"elsewhere"}}]}}'
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.asked = asked
        self.url = f"http://127.0.0.1:{self.server_port}/sparql"


@pytest.fixture
def elsewhere():
    other = Elsewhere()
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    yield other
    other.shutdown()
    other.server_close()


def ask(url: str, query: str, how: str) -> tuple[int, str]:
    """(status, body) of ``query`` sent as a GET parameter, a form or a SPARQL body."""
    accept = {"Accept": "application/sparql-results+json"}
    if how == "get":
        request = urllib.request.Request(url + "?" + urllib.parse.urlencode({"query": query}), headers=accept)
    elif how == "form":
        form = {**accept, "Content-Type": "application/x-www-form-urlencoded"}
        request = urllib.request.Request(url, urllib.parse.urlencode({"query": query}).encode(), form)
    else:
        body = {**accept, "Content-Type": "application/sparql-query; charset=utf-8"}
        request = urllib.request.Request(url, query.encode(), body)
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.parametrize("how", ["get", "form", "body"])
@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?o WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        "select ?o where {{ ?s ?p ?x .service silent <{url}>{{ ?s ?p ?o }} }}",
        # Oxigraph reads "service:x" as SERVICE followed by :x, the empty prefix's IRI.
        "PREFIX : <{url}#> SELECT ?o WHERE {{ service:x {{ ?s ?p ?o }} }}",
    ],
    ids=["plain", "lower-case-after-a-dot", "a-prefixed-name"],
)
def test_a_service_clause_is_refused_and_reaches_no_other_host(server, elsewhere, query, how):
    status, body = ask(server.url, query.format(url=elsewhere.url), how)
    assert (status, body) == (400, REFUSAL)
    assert elsewhere.asked == []


def test_a_run_on_the_served_kg_is_told_why(server, elsewhere):
    kg = EndpointKG(server.url)
    with pytest.raises(KGError, match=r"rejected a query \(HTTP 400\): SERVICE is refused by this endpoint"):
        kg.select(f"SELECT ?o WHERE {{ SERVICE <{elsewhere.url}> {{ ?s ?p ?o }} }}")
    assert kg.names(["m.0_kk"])["m.0_kk"] == "Australia"  # the same KG answers every other query
    assert ask(server.url, 'SELECT ?o WHERE { ?s ?p ?o FILTER(?o = "SERVICE") } LIMIT 1', "get")[0] == 200
    assert elsewhere.asked == []
