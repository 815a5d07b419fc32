"""``kg.timeout_s`` bounds each SPARQL query as a whole: an endpoint that drips its JSON
result one byte every 0.25 s resets every per-read timeout, yet the query ends at its deadline as a
``kg.timeout`` (retried per ``kg.retries``), its connection is cut rather than left dripping, and
the next query gets a fresh connection."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kgx.core.faults import classify
from kgx.kg.endpoint import EndpointKG, KGUnavailable

RESULT = json.dumps(
    {"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "http://x/a"}}]}}
).encode()


class DrippingEndpoint:
    """Answers every query with ``RESULT``, one byte every ``drip_s`` seconds (0: at once)."""

    def __init__(self) -> None:
        self.drip_s = 0.25
        self.queries = 0
        self.hung_up = 0
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints: the pool reuses connections

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                endpoint.queries += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(RESULT)))
                self.end_headers()
                try:
                    for i in range(0, len(RESULT), 1 if endpoint.drip_s else len(RESULT)):
                        self.wfile.write(RESULT[i : i + (1 if endpoint.drip_s else len(RESULT))])
                        self.wfile.flush()
                        time.sleep(endpoint.drip_s)
                except (BrokenPipeError, ConnectionResetError):
                    endpoint.hung_up += 1
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/sparql"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def endpoint():
    server = DrippingEndpoint()
    yield server
    server.close()


def until(check, within_s: float = 3.0) -> bool:
    end = time.monotonic() + within_s
    while not check() and time.monotonic() < end:
        time.sleep(0.05)
    return check()


def test_a_dripping_endpoint_times_out_at_the_deadline_and_is_retried(endpoint):
    kg = EndpointKG(endpoint.url, timeout_s=1.0, retries=1, sleep=lambda s: None)
    start = time.monotonic()
    with pytest.raises(KGUnavailable, match=r"timed out after 2 tries.*kg.timeout_s=1 s") as caught:
        kg.ping()
    took = time.monotonic() - start
    assert 2.0 <= took < 3.0  # two tries of 1 s each, not the ~40 s the drip lasts
    assert classify(caught.value).kind == "kg.timeout"  # what the circuit breaker counts
    assert endpoint.queries == 2 and until(lambda: endpoint.hung_up == 2)
    endpoint.drip_s = 0.0
    kg.ping()  # the cut connections were not pooled: the next query opens a good one
    assert endpoint.queries == 3


def test_a_slow_answer_within_the_deadline_is_read_whole(endpoint):
    endpoint.drip_s = 0.001
    kg = EndpointKG(endpoint.url, timeout_s=5.0, retries=0, sleep=lambda s: None)
    kg.ping()
    kg.ping()
    assert endpoint.queries == 2 and endpoint.hung_up == 0
