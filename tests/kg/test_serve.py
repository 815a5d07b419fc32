"""A real ``oxigraph serve-read-only`` on the demo store: it answers over HTTP with the same data
as the embedded store, shares the directory with embedded readers, and is gone after the block."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import urllib.parse
import urllib.request

import pyoxigraph as ox
import pytest

from kgx.kg import BUNDLED_KG, build_store
from kgx.kg.bench import bench, candidate_entities
from kgx.kg.endpoint import EndpointKG
from kgx.kg.serve import OxigraphServer, ServerError
from tests.helpers import kgx_env

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store([BUNDLED_KG], "nt", tmp_path_factory.mktemp("kg") / "demo")


def http_count(url: str) -> int:
    request = urllib.request.Request(url + "?" + urllib.parse.urlencode({"query": COUNT}),
                                     headers={"Accept": "application/sparql-results+json"})
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


def test_a_server_that_dies_reports_its_stderr(store):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(ServerError, match=r"exited with code \d+ before answering:\n.+"):
            OxigraphServer(store, port=taken.getsockname()[1]).start()


def test_bench_times_both_backends(store):
    entities = candidate_entities(store)
    assert "m.0_kk" in entities and all(not e.startswith("http") for e in entities)
    with OxigraphServer(store) as server:
        figures = bench(EndpointKG(server.url), entities, calls=20, seed=1)
    assert figures["relations_calls"] == 20 and figures["neighbors_calls"] > 0
    assert 0 < figures["relations_median_ms"] <= figures["relations_p95_ms"]


def test_cli_bench_against_a_served_store(store):
    done = subprocess.run([sys.executable, "-m", "kgx.kg", "bench", "--store", str(store), "--endpoint", "serve",
                           "--calls", "10"], capture_output=True, text=True, env=kgx_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.match(r"relations_median_ms=\d+\.\d+ neighbors_median_ms=\d+\.\d+ relations_p95_ms=", done.stdout)
