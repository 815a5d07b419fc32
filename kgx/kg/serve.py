"""A local SPARQL endpoint over a built store: ``oxigraph serve-read-only`` on loopback.

It lets the endpoint backend (and anything else that speaks SPARQL over HTTP) run against the
very store the embedded backend reads. Read-only serving takes no lock on the store, so
embedded readers and further servers may share the directory meanwhile. Oxigraph listens on a
port of its own; the URL given out is kgx's front (``kgx.kg.serve_front``), which refuses
queries naming ``SERVICE`` (Oxigraph would send them on to any host) and passes the rest.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Optional

from kgx.core.lifeline import server_preexec
from kgx.kg.serve_front import Front

PING = "ASK { }"
# The readiness check goes straight to loopback, whatever http_proxy the environment sets.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class ServerError(RuntimeError):
    """The server did not come up; the message carries what it wrote to stderr."""


def oxigraph_binary() -> Path:
    """The ``oxigraph`` CLI of this Python environment (where pip puts it), else from PATH."""
    beside = Path(sys.executable).parent / "oxigraph"
    if beside.is_file():
        return beside
    found = shutil.which("oxigraph")
    if found:
        return Path(found)
    raise FileNotFoundError(
        f"the oxigraph server binary is neither next to {sys.executable} nor on PATH; "
        f"install it with: pip install oxigraph  (the pip package 'oxigraph', "
        f"same version as pyoxigraph)"
    )


def end_process(process: Optional[subprocess.Popen], timeout_s: float) -> None:
    """Terminate a server we started, and kill it if it has not exited after ``timeout_s``."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def free_port() -> int:
    """A loopback port nobody listens on now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OxigraphServer:
    """``with OxigraphServer(store) as server: EndpointKG(server.url)``: the server answers
    queries inside the block and is stopped when it ends, however it ends."""

    def __init__(
        self, store_dir: Path, port: Optional[int] = None, startup_timeout_s: float = 30.0, stop_timeout_s: float = 5.0
    ):
        self.store_dir = Path(store_dir)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/query"
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.process: Optional[subprocess.Popen] = None
        self._stderr = None
        self._front: Optional[Front] = None

    def __enter__(self) -> OxigraphServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        if not self.store_dir.is_dir():
            raise FileNotFoundError(
                f"no store directory at {self.store_dir}; build one with: "
                f"python -m kgx.kg load SRC... --format F --store {self.store_dir}"
            )
        binary = oxigraph_binary()
        try:
            self._front = Front(self.port, free_port())
        except OSError as exc:
            raise ServerError(f"cannot listen on 127.0.0.1:{self.port} ({exc}); choose another --port") from None
        self._front.start()
        command = [
            str(binary),
            "serve-read-only",
            "--location",
            str(self.store_dir),
            "--bind",
            f"127.0.0.1:{self._front.backend_port}",
        ]
        # stderr to a file, not a pipe: a long-running server must never block on a full pipe.
        # Its own session: a terminal's Ctrl-C reaches only us, and we stop it in order; and it
        # dies with us, even on kill -9 (kgx.core.lifeline), so no orphan keeps the port.
        self._stderr = tempfile.TemporaryFile()
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                start_new_session=True,
                preexec_fn=server_preexec(),
            )
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        ping = self.url + "?" + urllib.parse.urlencode({"query": PING})
        while True:
            code = self.process.poll()
            if code is not None:
                raise ServerError(
                    f"oxigraph serve-read-only on {self.store_dir} exited with code {code} "
                    f"before answering:\n{self.stderr()}"
                )
            try:
                with _DIRECT.open(ping, timeout=1.0) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise ServerError(
                    f"oxigraph serve-read-only on {self.store_dir} did not answer at {self.url} "
                    f"within {self.startup_timeout_s:g} s:\n{self.stderr()}"
                )
            time.sleep(0.05)

    def stderr(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace").strip()

    def wait(self) -> int:
        """Block until the server exits on its own (or Ctrl-C); its exit code."""
        return self.process.wait()

    def stop(self) -> None:
        """Terminate, and kill if it has not exited after ``stop_timeout_s``."""
        if self._front is not None:
            self._front.stop()
            self._front = None
        end_process(self.process, self.stop_timeout_s)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
