"""The front of ``kgx.kg serve``: a query naming ``SERVICE`` is refused, every other request is
passed to the Oxigraph server behind it.

``oxigraph serve`` evaluates a ``SERVICE <url> { ... }`` clause by sending that part of the query
to ``url``, any host: a local endpoint anyone can query becomes a way to make this machine send
requests elsewhere (its network, its cloud metadata address), and a run's answers would then rest
on a server the KG is not. Oxigraph has no switch for it, so kgx's server listens on the public
port and reads each query (a ``query`` or ``update`` parameter, or a SPARQL body) before passing
it on: one that names ``SERVICE`` gets a SPARQL error reply (HTTP 400, as a query the parser
rejects) saying so, and never reaches Oxigraph.

Oxigraph's parser matches keywords without word boundaries (``PREFIX : <http://x/>`` makes
``service:a { ... }`` a ``SERVICE <http://x/a>`` clause), so :func:`names_service` does not look
for a token: it takes out what cannot hold the keyword (strings, IRIs, comments, variables, the
local part of prefixed names) and refuses any ``service`` left, in any case. A prefix whose name
holds ``service`` is refused with it; rename the prefix.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import re
import socket
import sys
import threading
import urllib.parse
from typing import Optional

# What cannot hold the keyword, in the order a parser reads it from each point: an escape, a
# comment, an IRI, strings (long ones first), a variable, the local part of a prefixed name.
_INERT = re.compile(
    r"""\\.
    | \#[^\r\n]*
    | <[^<>"{}|^`\\\x00-\x20]*>
    | '''(?:'{0,2}(?:[^'\\]|\\.))*'''
    | \"\"\"(?:"{0,2}(?:[^"\\]|\\.))*\"\"\"
    | '(?:[^'\\\r\n]|\\.)*'
    | "(?:[^"\\\r\n]|\\.)*"
    | [?$]\w*
    | :(?:[\w.\-%:]|\\.)*
    """,
    re.VERBOSE,
)
_SERVICE = re.compile("service", re.IGNORECASE)
QUERY_TYPES = ("application/sparql-query", "application/sparql-update")
FORM = "application/x-www-form-urlencoded"
REFUSAL = (
    "SERVICE is refused by this endpoint (python -m kgx.kg serve): it would send part of the query to "
    "another server; query that server itself. The word counts anywhere outside strings, IRIs, comments, "
    "variables and local names, in a prefix's name too (rename such a prefix)\n"
)
STOP_POLL_S = 0.02  # how often the accept loop looks whether stop() was called
# Hop-by-hop headers, which belong to one connection and are not passed on (RFC 9110, 7.6.1).
_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


def names_service(query: str) -> bool:
    """Whether ``query`` may hold a ``SERVICE`` clause (see the module docstring)."""
    return _SERVICE.search(_INERT.sub(" ", query)) is not None


def sparql_texts(target: str, content_type: str, body: bytes) -> list[str]:
    """The SPARQL texts of a request: its ``query`` and ``update`` parameters (URL and form) and
    a SPARQL body. Undecodable text is read with replacement characters, which hide no keyword."""
    params = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query, errors="replace")
    if content_type == FORM:
        for key, values in urllib.parse.parse_qs(body.decode("utf-8", "replace")).items():
            params.setdefault(key, []).extend(values)
    texts = [*params.get("query", []), *params.get("update", [])]
    if content_type in QUERY_TYPES:
        texts.append(body.decode("utf-8", "replace"))
    return texts


class Front(http.server.ThreadingHTTPServer):
    """Listens on ``port`` (loopback) and passes what it does not refuse to ``backend_port``; one
    kept-alive connection to Oxigraph per client connection's thread. Stopped, it closes the
    connections clients keep alive too, so that they find the endpoint gone, as without a front."""

    daemon_threads = True

    def __init__(self, port: int, backend_port: int):
        super().__init__(("127.0.0.1", port), _Handler)
        self.backend_port = backend_port
        self.thread: Optional[threading.Thread] = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def start(self) -> None:
        # A short poll: stop() waits for it, while kept-alive connections are still served.
        self.thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": STOP_POLL_S}, name="kgx-serve-front", daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        if self.thread is not None:
            self.shutdown()
            self.thread.join()
            self.thread = None
        with self._lock:
            kept = list(self._open)
        for connection in kept:
            with contextlib.suppress(OSError):  # closed by its client meanwhile
                connection.shutdown(socket.SHUT_RDWR)
        self.server_close()

    def process_request(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]
        with self._lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: socket.socket) -> None:  # type: ignore[override]
        with self._lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: object, client_address: object) -> None:
        """A connection its client dropped, or the front closed at its stop, is not news."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: kgx's endpoint client reuses its connections
    disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart (delayed ACK)
    server: Front
    _backend: Optional[http.client.HTTPConnection] = None

    def do_GET(self) -> None:
        self._pass()

    do_POST = do_HEAD = do_PUT = do_DELETE = do_OPTIONS = do_PATCH = do_GET

    def _pass(self) -> None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self._reply(411, b"send the request body with a Content-Length\n")
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind = self.headers.get("Content-Type", "").partition(";")[0].strip().lower()
        if any(names_service(text) for text in sparql_texts(self.path, kind, body)):
            self._reply(400, REFUSAL.encode())
            return
        try:
            response = self._ask(body)
        except OSError as exc:  # Oxigraph is not up yet, or has died: kgx.kg serve says which
            self._reply(502, f"the Oxigraph server behind this endpoint does not answer: {exc}\n".encode())
            return
        answer = response.read()
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in _HOP and (key.lower() != "content-length" or self.command == "HEAD"):
                self.send_header(key, value)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def _ask(self, body: bytes) -> http.client.HTTPResponse:
        """Oxigraph's response to this request, on this connection's kept-alive connection to it,
        opened again once if Oxigraph closed it meanwhile."""
        try:
            return self._send(body)
        except (ConnectionError, http.client.HTTPException):
            self._close_backend()
            return self._send(body)

    def _send(self, body: bytes) -> http.client.HTTPResponse:
        if self._backend is None:
            self._backend = http.client.HTTPConnection("127.0.0.1", self.server.backend_port)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        self._backend.request(self.command, self.path, body=body or None, headers=headers)
        return self._backend.getresponse()

    def _close_backend(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def _reply(self, status: int, text: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def finish(self) -> None:
        super().finish()
        self._close_backend()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        """Quiet, as ``oxigraph serve`` is: no line per request."""
