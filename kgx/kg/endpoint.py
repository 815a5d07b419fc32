"""The KG behind a SPARQL endpoint: a local ``oxigraph serve``, or Freebase on Virtuoso/QLever.

One pooled, thread-safe HTTP connection set per endpoint (keep-alive: a method makes thousands
of small queries, and a new connection for each adds a round trip, and over https a TLS
handshake, to every one). Long queries go
by POST (URLs have length limits), every query ends by ``kg.timeout_s`` however slowly the answer
comes (``kgx.kg.query_deadline``), transient failures are retried with backoff, and an endpoint
that stays unreachable is an error naming it.

A real Freebase endpoint also answers HTTP 200 when it did not answer in full: Virtuoso cuts a
result at ``ResultSetMaxRows`` (header ``X-SPARQL-MaxRows``) and returns what an "anytime" query
found before its time ran out (header ``X-SQL-State: S1TAT``). Either would be scored as if the
KG had no more answers, so neither is ever returned as a result.
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional
from urllib.parse import urlencode

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    MaxRetryError,
    NewConnectionError,
    ReadTimeoutError,
)

from kgx.core.boundary import SECRETS, clean_text, clean_value, needs_cleaning
from kgx.core.faults import InfraError
from kgx.kg.freebase import KGError
from kgx.kg.query_deadline import POOL_CLASSES, deadline
from kgx.kg.sparql import SparqlKG, Term

if TYPE_CHECKING:
    from kgx.core.kg_config import EndpointKGConfig

GET_LIMIT = 1500  # characters of query text sent in the URL; longer ones are POSTed
POOL_SIZE = 16  # kept-alive connections per endpoint; more threads than this open extra ones
RESULTS_JSON = "application/sparql-results+json"
_OWN_LIMIT = re.compile(r"\bLIMIT\s+(\d+)\s*(?:OFFSET\s+\d+\s*)?$", re.IGNORECASE)


class KGUnavailable(KGError, InfraError):
    """The endpoint did not answer (down, timing out, failing, refusing, cutting results) through
    every retry: the run's infrastructure failed, not the method, so the question is retried on
    the next run."""


class _Retry(Exception):
    """A failure that may pass: retried with backoff, then raised as KGUnavailable ``kind``."""

    def __init__(self, kind: str, what: str, detail: str):
        super().__init__(detail)
        self.kind = kind
        self.what = what


def _network_failure(exc: HTTPError, timeout_s: float, late: bool) -> _Retry:
    """``late``: the query's deadline cut its connection, whatever error that made urllib3 raise."""
    if late:
        return _Retry("kg.timeout", "timed out", f"no complete answer within kg.timeout_s={timeout_s:g} s")
    reason = exc.reason if isinstance(exc, MaxRetryError) and exc.reason is not None else exc
    # NewConnectionError (refused, no route) subclasses ConnectTimeoutError: test it first.
    if isinstance(reason, (ConnectTimeoutError, ReadTimeoutError)) and not isinstance(reason, NewConnectionError):
        return _Retry("kg.timeout", "timed out", str(reason))
    return _Retry("kg.unreachable", "unreachable", str(reason))


def _term(binding: dict[str, str]) -> Term:
    kind = {"uri": "iri", "literal": "literal", "typed-literal": "literal", "bnode": "bnode"}[binding["type"]]
    return Term(kind, binding["value"], binding.get("xml:lang", ""))


def _excerpt(body: bytes) -> str:
    """The start of an error body, as a message shows it: cleaned at the text boundary, since a
    server may echo the request's credentials (kgx.core.boundary)."""
    return clean_text(" ".join(body[:300].decode("utf-8", "replace").split()))


def _within_own_limit(query: str, max_rows: int) -> bool:
    """True when the query's own LIMIT is at most the server's row cap: the server's cut could
    not have removed anything, so a result at that size is kgx's cap, not the server's."""
    match = _OWN_LIMIT.search(query)
    return match is not None and int(match.group(1)) <= max_rows


class EndpointKG(SparqlKG):
    """``headers`` are sent with every request and may hold secrets: they appear in no message,
    repr or log (the URL does, and holds none: :class:`kgx.core.kg_config.EndpointKGConfig` refuses one that does)."""

    def __init__(
        self,
        url: str,
        timeout_s: float = 30.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        default_graph: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        **options: Any,
    ):
        super().__init__(**options)
        self.url = url
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.sleep = sleep
        self.default_graph = default_graph
        self._headers = {"Accept": RESULTS_JSON, **(headers or {})}
        # Retries are ours (with backoff and kinds); urllib3 only follows redirects, and drops
        # Authorization when one leads to another host. Timeouts are floats in seconds.
        self._pool = urllib3.PoolManager(
            maxsize=POOL_SIZE,
            block=False,
            retries=urllib3.Retry(total=None, connect=0, read=0, status=0, other=0, redirect=3),
            timeout=urllib3.Timeout(connect=timeout_s, read=timeout_s),
        )
        self._pool.pool_classes_by_scheme = POOL_CLASSES

    def _request(self, query: str) -> urllib3.BaseHTTPResponse:
        """The endpoint's response, its body read in full within ``timeout_s`` of sending."""
        params = {"query": query}
        if self.default_graph:
            params["default-graph-uri"] = self.default_graph
        body = urlencode(params)
        with deadline(self.timeout_s) as alarm:
            try:
                if len(query) > GET_LIMIT:
                    headers = {**self._headers, "Content-Type": "application/x-www-form-urlencoded"}
                    response = self._pool.request("POST", self.url, body=body, headers=headers, preload_content=False)
                else:
                    response = self._pool.request(
                        "GET", f"{self.url}?{body}", headers=self._headers, preload_content=False
                    )
                response.data  # noqa: B018 (read, and kept, before the alarm is off and the connection back in the pool)
            except HTTPError as exc:
                raise _network_failure(exc, self.timeout_s, alarm.fired) from exc
        response.release_conn()
        return response

    def _attempt(self, query: str) -> list[dict[str, Term]]:
        response = self._request(query)
        status, body = response.status, response.data
        if status == 400:
            raise KGError(f"SPARQL endpoint {self.url} rejected a query (HTTP 400): {_excerpt(body)}")
        if status == 404:
            raise KGUnavailable(f"SPARQL endpoint {self.url}: not found (404); check kg.endpoint", "kg.not_found")
        if status in (401, 403):
            raise KGUnavailable(
                f"SPARQL endpoint {self.url} refused access (HTTP {status}); check the "
                f"credentials named by kg.user_env/kg.password_env or kg.headers_env",
                "kg.auth",
            )
        if status >= 500 and b"Transaction timed out" in body:  # Virtuoso's SR171: the same query times out again
            raise KGUnavailable(
                f"SPARQL endpoint {self.url}: a query ran past the server's time limit (Virtuoso: "
                f"MaxQueryExecutionTime): {_excerpt(body)}; raise that limit",
                "kg.timeout",
            )
        if status == 429 or status >= 500:
            raise _Retry("kg.server", f"failing (HTTP {status})", _excerpt(body))
        if status != 200:
            raise KGUnavailable(f"SPARQL endpoint {self.url} answered HTTP {status}: {_excerpt(body)}", "kg.server")
        state = response.headers.get("X-SQL-State")
        if state and not state.startswith("00"):  # SQLSTATE class 00 is success
            raise _Retry(
                "kg.partial",
                "returned partial results",
                f"X-SQL-State {state} ({response.headers.get('X-SQL-Message', '')[:200]}): an anytime "
                f"query ran out of time; raise the server's query time limit (Virtuoso: "
                f"MaxQueryExecutionTime) or kg.timeout_s",
            )
        try:
            rows = json.loads(body)["results"]["bindings"]
        except (ValueError, KeyError, TypeError) as exc:
            raise KGUnavailable(
                f"SPARQL endpoint {self.url} answered HTTP 200 without SPARQL JSON results "
                f"({response.headers.get('Content-Type')}): {_excerpt(body)}",
                "kg.server",
            ) from exc
        max_rows = response.headers.get("X-SPARQL-MaxRows")
        if max_rows and max_rows.strip().isdigit() and not _within_own_limit(query, int(max_rows)):
            raise KGUnavailable(
                f"SPARQL endpoint {self.url} cut a result at {max_rows} rows (X-SPARQL-MaxRows, {len(rows)} "
                f"returned): the rest is missing, so kgx does not use it. Raise ResultSetMaxRows ([SPARQL] "
                f"section of virtuoso.ini) or lower kgx's caps below {max_rows}. Query: {query[:200]}",
                "kg.truncated",
            )
        if needs_cleaning(body):  # results are text from outside too: a JSON escape may be a lone surrogate
            rows = clean_value(rows)[0]
        return [{k: _term(v) for k, v in row.items()} for row in rows]

    def _select(self, query: str) -> list[dict[str, Term]]:
        attempt = 0
        while True:
            try:
                return self._attempt(query)
            except _Retry as exc:
                if attempt == self.retries:
                    raise KGUnavailable(
                        f"SPARQL endpoint {self.url} {exc.what} after {attempt + 1} tries: {exc}", exc.kind
                    ) from exc
                self.sleep(self.backoff_s * 2**attempt * (0.5 + random.random()))
                attempt += 1

    def ping(self) -> None:
        """Fail before any question runs when the endpoint cannot be reached, or holds nothing
        where kgx looks (a misspelt kg.default_graph is an empty graph, not an error, to SPARQL)."""
        if not self._select("SELECT * WHERE { ?s ?p ?o } LIMIT 1"):
            graph = f"default graph {self.default_graph}" if self.default_graph else "its default graph"
            raise KGUnavailable(
                f"SPARQL endpoint {self.url} holds no triple in {graph}; check kg.endpoint and kg.default_graph",
                "kg.not_found",
            )


def request_headers(cfg: EndpointKGConfig, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The headers ``cfg`` names, their values read from the environment now, when the KG opens
    (never from a config). A variable that is unset or empty fails here, before any question."""

    def value(field: str, variable: str) -> str:
        found = environ.get(variable, "")
        if not found:
            raise KGUnavailable(
                f"{field}: the environment variable {variable} is not set "
                f"(it must hold the value for SPARQL endpoint {cfg.endpoint})",
                "kg.auth",
            )
        if "\r" in found or "\n" in found:
            raise KGUnavailable(f"{field}: the environment variable {variable} holds a line break", "kg.auth")
        return found

    headers = {name: value(f"kg.headers_env.{name}", variable) for name, variable in cfg.headers_env.items()}
    for name, variable in cfg.headers_env.items():
        SECRETS.add(headers[name], variable)
    if cfg.user_env and cfg.password_env:
        user, password = value("kg.user_env", cfg.user_env), value("kg.password_env", cfg.password_env)
        SECRETS.add_pair(user, password, cfg.user_env, cfg.password_env)
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return headers


def connect(
    cfg: EndpointKGConfig, environ: Mapping[str, str] = os.environ, ping: bool = True, **options: Any
) -> EndpointKG:
    """The endpoint ``cfg`` describes, with its graph and headers, pinged: a wrong URL or graph, or
    a missing credential, fails before any question runs (``ping=False``: for a run that reads no KG)."""
    kg = EndpointKG(
        cfg.endpoint or "",
        timeout_s=cfg.timeout_s,
        retries=cfg.retries,
        default_graph=cfg.default_graph,
        headers=request_headers(cfg, environ),
        **options,
    )
    if ping:
        kg.ping()
    return kg
