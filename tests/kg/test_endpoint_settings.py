"""Endpoint settings, transport and cut results, against a scripted SPARQL server on loopback.

The fake server answers what each test scripts (statuses, Virtuoso's ``X-SPARQL-MaxRows`` and
``X-SQL-State`` headers) and records every request: method, parameters, headers and the client
port, one per TCP connection.
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Union

import pytest

from kgx.core.config import ConfigError, KGConfig
from kgx.core.trace_store import readable
from kgx.kg import BUNDLED_KG, build_store
from kgx.kg.endpoint import GET_LIMIT, EndpointKG, KGUnavailable, connect
from kgx.kg.freebase import NS, KGError
from kgx.kg.serve import OxigraphServer
from kgx.run.execute import execute
from kgx.run.spec import to_run_spec
from kgx.track.tracker import flatten

Reply = tuple[int, dict[str, str], bytes]
GRAPH = "http://rdf.freebase.com"
QUERY = "SELECT ?x WHERE { ?x ?p ?o }"


@dataclass
class Seen:
    method: str
    path: str
    params: dict[str, list[str]]
    headers: dict[str, str]
    port: int


def results(*ids: str) -> bytes:
    rows = [{"x": {"type": "uri", "value": NS + i}} for i in ids]
    return json.dumps({"head": {"vars": ["x"]}, "results": {"bindings": rows}}).encode()


class FakeSparql:
    """Replies in order (the last one repeats), or from a function of the request."""

    def __init__(self, *replies: Union[Reply, Callable[[Seen], Reply]]):
        self.replies = list(replies)
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints
            disable_nagle_algorithm = True  # headers and body go out in two writes

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                fake.answer(self, urllib.parse.urlsplit(self.path).query)

            def do_POST(self) -> None:
                fake.answer(self, self.rfile.read(int(self.headers["Content-Length"])).decode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/sparql"

    def __enter__(self) -> FakeSparql:
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, handler: BaseHTTPRequestHandler, form: str) -> None:
        seen = Seen(
            handler.command,
            urllib.parse.urlsplit(handler.path).path,
            urllib.parse.parse_qs(form),
            dict(handler.headers.items()),
            handler.client_address[1],
        )
        with self._lock:
            self.seen.append(seen)
            reply = self.replies[min(len(self.seen), len(self.replies)) - 1]
        status, headers, body = reply(seen) if callable(reply) else reply
        handler.send_response(status)
        for name, value in {"Content-Type": "application/sparql-results+json", **headers}.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


def endpoint(url: str, **kw) -> EndpointKG:
    sleeps: list[float] = []
    kg = EndpointKG(url, timeout_s=5, sleep=sleeps.append, **kw)
    kg.sleeps = sleeps  # type: ignore[attr-defined]
    return kg


# --- settings -------------------------------------------------------------------------------


def test_default_graph_goes_as_a_parameter_by_get_and_by_post():
    with FakeSparql((200, {}, results("m.a"))) as fake:
        kg = endpoint(fake.url, default_graph=GRAPH)
        assert kg.select(QUERY)[0]["x"].value == NS + "m.a"
        long_query = QUERY + " #" + "x" * GET_LIMIT
        kg.select(long_query)
    short, long = fake.seen
    assert (short.method, short.path, short.params) == (
        "GET",
        "/sparql",
        {"query": [QUERY], "default-graph-uri": [GRAPH]},
    )
    assert (long.method, long.params) == ("POST", {"query": [long_query], "default-graph-uri": [GRAPH]})
    assert long.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert short.headers["Accept"] == "application/sparql-results+json"


def test_headers_and_basic_auth_come_from_the_environment_at_open_time():
    environ = {"FB_KEY": "key-9d2e", "FB_USER": "alice", "FB_PASSWORD": "pw-51c0"}
    with FakeSparql((200, {}, results("m.a"))) as fake:
        cfg = KGConfig(
            backend="endpoint",
            endpoint=fake.url,
            headers_env={"X-Api-Key": "FB_KEY"},
            user_env="FB_USER",
            password_env="FB_PASSWORD",
        )
        kg = connect(cfg, environ)
        kg.select(QUERY)
    assert len(fake.seen) == 2  # the ping, then the query
    for seen in fake.seen:
        assert seen.headers["X-Api-Key"] == "key-9d2e"
        assert seen.headers["Authorization"] == "Basic " + base64.b64encode(b"alice:pw-51c0").decode()
    assert "pw-51c0" not in repr(kg) and "key-9d2e" not in repr(kg)


@pytest.mark.parametrize(
    "environ, missing",
    [
        ({"FB_USER": "alice"}, "FB_PASSWORD"),
        ({"FB_USER": "alice", "FB_PASSWORD": ""}, "FB_PASSWORD"),
        ({"FB_PASSWORD": "pw"}, "FB_USER"),
    ],
)
def test_a_missing_variable_fails_before_any_request_naming_it(environ, missing):
    with FakeSparql((200, {}, results("m.a"))) as fake:
        cfg = KGConfig(backend="endpoint", endpoint=fake.url, user_env="FB_USER", password_env="FB_PASSWORD")
        with pytest.raises(KGUnavailable, match=f"the environment variable {missing} is not set") as caught:
            connect(cfg, environ)
    assert caught.value.kind == "kg.auth" and fake.seen == []


@pytest.mark.parametrize(
    "override, message",
    [
        ("kg.endpoint=http://bob:pw-77aa@host:8890/sparql", "kg.endpoint: credentials in the URL"),
        (
            "kg.endpoint='http://host:8890/sparql?key=k-3f9a'",
            r"kg.endpoint=http://host:8890/sparql\?\.\.\.: remove the "
            r"query string; .* kg.default_graph=IRI",
        ),
        ("kg.endpoint=ftp://host/sparql", "kg.endpoint=ftp://host/sparql: must be an http:// or https:// URL"),
        ("kg.default_graph='freebase graph'", "kg.default_graph=freebase graph: must be an absolute IRI"),
        ("+kg.headers_env.X-Api-Key='Bearer k-3f9a'", "kg.headers_env.X-Api-Key: must be the NAME of an environment"),
        ("+kg.headers_env.Accept=FB_ACCEPT", "kg.headers_env.Accept: kgx sets this header itself"),
        ("kg.user_env=FB_USER", "kg.user_env, kg.password_env: basic auth needs both"),
        ("kg.password_env=pw-77aa", "kg.password_env: must be the NAME of an environment variable"),
        ("kg.retries=-1", "kg.retries=-1: must be >= 0"),
    ],
)
def test_settings_are_checked_without_echoing_secrets(compose_cfg, override, message):
    base = ["kg=sparql", "kg.endpoint=http://host:8890/sparql"]
    with pytest.raises(ConfigError, match=message) as caught:
        to_run_spec(compose_cfg(*base, override))
    assert "pw-77aa" not in str(caught.value) and "k-3f9a" not in str(caught.value)


def test_the_config_holds_variable_names_only(compose_cfg):
    spec = to_run_spec(
        compose_cfg(
            "kg=sparql",
            "kg.endpoint=http://host:8890/sparql",
            f"kg.default_graph={GRAPH}",
            "+kg.headers_env.X-Api-Key=FB_KEY",
            "kg.user_env=FB_USER",
            "kg.password_env=FB_PASSWORD",
        )
    )
    params = flatten(spec.resolved())  # what MLflow logs
    assert params["kg.headers_env.X-Api-Key"] == "FB_KEY" and params["kg.password_env"] == "FB_PASSWORD"
    assert params["kg.default_graph"] == GRAPH


@pytest.mark.parametrize("echo", [False, True], ids=["quiet", "echoing"])
def test_no_secret_reaches_any_file_of_a_whole_run(tmp_path_factory, compose_cfg, in_tmp, monkeypatch, echo):
    """ToG against an authenticated proxy in front of ``oxigraph serve``: every request carries
    the secrets, and no file the run writes (log, traces, config, MLflow database) holds them.
    ``echoing``: the proxy answers every query about Australia (demo-001's topic entity) with a 500
    whose body echoes the headers it was sent, user and password (issue 33): that question is a
    ``kg.server`` error whose recorded message names the variables instead."""
    secrets = {"KGX_T_USER": "user-2b7d", "KGX_T_PASSWORD": "pw-e41a", "KGX_T_KEY": "key-90cf"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    basic = base64.b64encode(b"user-2b7d:pw-e41a").decode()
    store = build_store([BUNDLED_KG], "nt", tmp_path_factory.mktemp("kg") / "demo")
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with OxigraphServer(store) as oxigraph:

        def forward(seen: Seen) -> Reply:
            if seen.headers.get("Authorization") != f"Basic {basic}" or seen.headers.get("X-Api-Key") != "key-90cf":
                return 401, {}, b"unauthorized"
            asked = seen.params["query"][0]
            if echo and "m.0_kk" in asked and "m.0waln" not in asked:  # demo-001's own, not the start's check
                told = f"denied: Authorization: {seen.headers['Authorization']} X-Api-Key: {seen.headers['X-Api-Key']}"
                return 500, {}, f"{told} user=user-2b7d password=pw-e41a".encode()
            query = urllib.parse.urlencode({k: v[0] for k, v in seen.params.items()})
            request = urllib.request.Request(
                oxigraph.url,
                data=query.encode(),
                headers={
                    "Accept": "application/sparql-results+json",
                    "Content-Type": "application/x-www-form-urlencoded",
                },
            )
            with direct.open(request, timeout=10) as response:
                return 200, {}, response.read()

        with FakeSparql(forward) as fake:
            spec = to_run_spec(
                compose_cfg(
                    "method=tog",
                    "llm=scripted",
                    "run.progress=false",
                    "dataset.limit=3",
                    "kg=sparql",
                    f"kg.endpoint={fake.url}",
                    "kg.user_env=KGX_T_USER",
                    "kg.password_env=KGX_T_PASSWORD",
                    "+kg.headers_env.X-Api-Key=KGX_T_KEY",
                    "kg.retries=0",
                )
            )
            outcome = execute(spec, in_tmp)
    if echo:
        failed = [(r.id, r.failure.kind) for r in outcome.records if r.failure]
        assert outcome.status == "FAILED" and failed == [("demo-001", "kg.server")]
        told = (outcome.out_dir / "predictions.jsonl").read_text()
        assert "Basic [secret KGX_T_USER:KGX_T_PASSWORD] X-Api-Key: [secret KGX_T_KEY]" in told
        assert "user=[secret KGX_T_USER] password=[secret KGX_T_PASSWORD]" in told
    else:
        assert outcome.status == "FINISHED" and outcome.summary["errors"] == 0
    assert len(fake.seen) > 10 and all(s.headers["X-Api-Key"] == "key-90cf" for s in fake.seen)
    written = [p for p in in_tmp.rglob("*") if p.is_file()]
    assert any(p.name == "predictions.jsonl" for p in written) and any(p.suffix == ".db" for p in written)
    for path in written:
        data = readable(path)
        assert not any(s.encode() in data for s in [*secrets.values(), basic]), path


# --- transport ------------------------------------------------------------------------------


def test_queries_share_one_kept_alive_connection():
    with FakeSparql((200, {}, results("m.a"))) as fake:
        kg = endpoint(fake.url)
        for i in range(30):
            kg.select(f"{QUERY} LIMIT {i + 1}")
    assert len(fake.seen) == 30 and len({s.port for s in fake.seen}) == 1


def test_threads_share_the_pool_safely():
    with FakeSparql(lambda seen: (200, {}, results(seen.params["query"][0].split("#")[1]))) as fake:
        kg = endpoint(fake.url)
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda i: kg.select(f"{QUERY} #m.q{i}")[0]["x"].value, range(200)))
    assert answers == [f"{NS}m.q{i}" for i in range(200)]
    assert len(fake.seen) == 200 and len({s.port for s in fake.seen}) <= 8


def test_a_redirect_is_followed():
    with FakeSparql((301, {"Location": "/moved"}, b""), (200, {}, results("m.a"))) as fake:
        assert endpoint(fake.url).select(QUERY)[0]["x"].value == NS + "m.a"
    assert [s.path for s in fake.seen] == ["/sparql", "/moved"]


@pytest.mark.parametrize(
    "status, kind, tries",
    [
        (404, "kg.not_found", 1),
        (401, "kg.auth", 1),
        (403, "kg.auth", 1),
        (503, "kg.server", 3),
        (429, "kg.server", 3),
        (405, "kg.server", 1),
    ],
)
def test_http_failures_have_their_kinds(status, kind, tries):
    with FakeSparql((status, {}, b"nope")) as fake:
        kg = endpoint(fake.url, retries=2)
        with pytest.raises(KGUnavailable) as caught:
            kg.select(QUERY)
    assert caught.value.kind == kind and len(fake.seen) == tries and len(kg.sleeps) == tries - 1


def test_a_bad_query_is_a_plain_kg_error_at_once():
    with FakeSparql((400, {}, b"Virtuoso 37000 Error SP030: SPARQL compiler, line 1: syntax error")) as fake:
        with pytest.raises(KGError, match="rejected a query \\(HTTP 400\\): Virtuoso 37000") as caught:
            endpoint(fake.url).select(QUERY)
    assert not isinstance(caught.value, KGUnavailable) and len(fake.seen) == 1


def test_a_transient_failure_is_retried_with_backoff():
    with FakeSparql((502, {}, b"bad gateway"), (200, {}, results("m.a"))) as fake:
        kg = endpoint(fake.url, retries=3, backoff_s=0.5)
        assert [r["x"].value for r in kg.select(QUERY)] == [NS + "m.a"]
    assert len(fake.seen) == 2 and len(kg.sleeps) == 1 and 0.25 <= kg.sleeps[0] <= 0.75


def test_a_page_that_is_not_sparql_results_is_a_server_failure():
    with FakeSparql((200, {"Content-Type": "text/html"}, b"<html>Sign in</html>")) as fake:
        with pytest.raises(KGUnavailable, match=r"without SPARQL JSON results \(text/html\): <html>Sign in") as caught:
            endpoint(fake.url).select(QUERY)
    assert caught.value.kind == "kg.server" and len(fake.seen) == 1


def test_an_empty_graph_fails_the_ping():
    with FakeSparql((200, {}, results())) as fake:
        with pytest.raises(KGUnavailable, match=f"holds no triple in default graph {GRAPH}") as caught:
            endpoint(fake.url, default_graph=GRAPH).ping()
    assert caught.value.kind == "kg.not_found"


# --- results a server cut -------------------------------------------------------------------


def test_a_result_cut_at_max_rows_fails_at_once():
    with FakeSparql((200, {"X-SPARQL-MaxRows": "3"}, results("m.a", "m.b", "m.c"))) as fake:
        kg = endpoint(fake.url, retries=3)
        with pytest.raises(KGUnavailable) as caught:
            kg.neighbors("m.0_kk", "film.film.directed_by", "out")  # no LIMIT of kgx's own
    assert caught.value.kind == "kg.truncated" and len(fake.seen) == 1 and kg.sleeps == []
    assert "cut a result at 3 rows (X-SPARQL-MaxRows, 3 returned)" in str(caught.value)
    assert "Raise ResultSetMaxRows ([SPARQL] section of virtuoso.ini) or lower kgx's caps below 3" in str(caught.value)


@pytest.mark.parametrize("limit, cut", [(3, False), (2, False), (4, True), (1000, True)])
def test_a_result_at_kgx_own_limit_stays_a_cap(limit, cut):
    with FakeSparql((200, {"X-SPARQL-MaxRows": "3"}, results("m.a", "m.b", "m.c"))) as fake:
        kg = endpoint(fake.url)
        if cut:
            with pytest.raises(KGUnavailable, match="X-SPARQL-MaxRows"):
                kg.select(f"{QUERY} LIMIT {limit}")
        else:
            assert len(kg.select(f"{QUERY} LIMIT {limit}")) == 3


def test_a_partial_anytime_result_is_retried_then_fails():
    partial = (200, {"X-SQL-State": "S1TAT", "X-SQL-Message": "RC...: Returning incomplete results"}, results("m.a"))
    with FakeSparql(partial) as fake:
        kg = endpoint(fake.url, retries=2)
        with pytest.raises(KGUnavailable) as caught:
            kg.select(QUERY)
    assert caught.value.kind == "kg.partial" and len(fake.seen) == 3 and len(kg.sleeps) == 2
    assert "returned partial results after 3 tries: X-SQL-State S1TAT (RC...: Returning incomplete" in str(caught.value)


def test_a_partial_result_then_a_full_one_is_the_full_one():
    partial = (200, {"X-SQL-State": "S1TAT"}, results("m.a"))
    with FakeSparql(partial, (200, {}, results("m.a", "m.b"))) as fake:
        kg = endpoint(fake.url, retries=2)
        assert [r["x"].value for r in kg.select(QUERY)] == [NS + "m.a", NS + "m.b"]
    assert len(fake.seen) == 2 and len(kg.sleeps) == 1
