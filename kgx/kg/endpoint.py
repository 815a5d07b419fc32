"""The KG behind a SPARQL endpoint: a local ``oxigraph serve``, or Freebase on Virtuoso/QLever.

Long queries go by POST (URLs have length limits), every request has a timeout, transient
failures are retried with backoff, and a URL that stays unreachable is an error naming it.
"""
from __future__ import annotations

import random
import socket
import time
import urllib.error
from typing import Any, Callable

from SPARQLWrapper import JSON, POST, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import EndPointInternalError, EndPointNotFound, QueryBadFormed

from kgx.failures import InfraError
from kgx.kg.freebase import KGError
from kgx.kg.sparql import SparqlKG, Term

GET_LIMIT = 1500  # characters of query text sent in the URL; longer ones are POSTed
TRANSIENT = (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError, EndPointInternalError)


class KGUnavailable(KGError, InfraError):
    """The endpoint did not answer (down, timing out, failing) through every retry: the run's
    infrastructure failed, not the method, so the question is retried on the next run."""


def _kind(exc: Exception) -> str:
    if isinstance(exc, (socket.timeout, TimeoutError)) or "timed out" in str(exc):
        return "kg.timeout"
    return "kg.server" if isinstance(exc, EndPointInternalError) else "kg.unreachable"


def _term(binding: dict[str, str]) -> Term:
    kind = {"uri": "iri", "literal": "literal", "typed-literal": "literal", "bnode": "bnode"}[binding["type"]]
    return Term(kind, binding["value"], binding.get("xml:lang", ""))


class EndpointKG(SparqlKG):
    def __init__(self, url: str, timeout_s: float = 30.0, retries: int = 3, backoff_s: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep, **options: Any):
        super().__init__(**options)
        self.url = url
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.sleep = sleep

    def _select(self, query: str) -> list[dict[str, Term]]:
        client = SPARQLWrapper(self.url)
        client.setReturnFormat(JSON)
        client.timeout = self.timeout_s  # setTimeout() would round 0.5 s down to whole seconds
        if len(query) > GET_LIMIT:
            client.setMethod(POST)
        client.setQuery(query)
        for attempt in range(self.retries + 1):
            try:
                result = client.queryAndConvert()
                break
            except QueryBadFormed as exc:
                raise KGError(f"SPARQL endpoint {self.url} rejected a query: {exc}") from exc
            except EndPointNotFound as exc:
                raise KGUnavailable(f"SPARQL endpoint {self.url}: not found (404); check kg.endpoint",
                                    "kg.not_found") from exc
            except TRANSIENT as exc:
                if attempt == self.retries:
                    raise KGUnavailable(f"SPARQL endpoint {self.url} unreachable after {attempt + 1} tries: "
                                        f"{exc}", _kind(exc)) from exc
                self.sleep(self.backoff_s * 2**attempt * (0.5 + random.random()))
        return [{k: _term(v) for k, v in row.items()} for row in result["results"]["bindings"]]

    def ping(self) -> None:
        """Fail before any question runs when the endpoint cannot be reached."""
        self._select("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
