"""OpenLink Virtuoso on loopback: the engine the papers' Freebase endpoints run on.

An embedded store or ``oxigraph serve`` answers every query in full; Virtuoso does not. It cuts
results silently (HTTP 200 with ``X-SPARQL-MaxRows`` past ``ResultSetMaxRows``, or a partial
"anytime" answer with ``X-SQL-State: S1TAT`` past ``MaxQueryExecutionTime``), returns literals
its own way, and is what a user points ``kg.endpoint`` at. Running kgx against a real Virtuoso
holding the same triples is how we know the endpoint backend survives it.

Each :class:`VirtuosoServer` is a private instance: a database in a temporary directory, an
ini derived from the packaged one, both ports on 127.0.0.1, the triples bulk-loaded into one
named graph, and everything removed when the block ends. The Debian package
``virtuoso-opensource`` provides ``virtuoso-t`` and its SQL client ``isql-vt``.
"""
from __future__ import annotations

import configparser
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import IO, Optional, Sequence, Union

import pyoxigraph as ox

from kgx.kg.serve import PING, ServerError, end_process, free_port

PACKAGED_INI = Path("/etc/virtuoso-opensource-7/virtuoso.ini")
DEFAULT_GRAPH = "http://freebase.com"  # the graph IRI of the papers' Freebase setups
INSTALL = "apt-get install virtuoso-opensource"
LOG_TAIL = 40  # lines of the server's log quoted when it fails
LOAD_ERROR = "kgx-load-error "  # prefix of a failed load_list row in isql's output
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, whatever the proxy

Source = Union[str, Path]


def binary(name: str) -> Path:
    """``virtuoso-t`` or ``isql-vt`` from PATH; a missing one names the package that has it."""
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} is not on PATH; Virtuoso comes from the Debian/Ubuntu package "
                                f"virtuoso-opensource: {INSTALL}")
    return Path(found)


def sql_string(text: str) -> str:
    """A Virtuoso SQL string literal (paths and IRIs are ours, but may hold a quote)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def write_ini(path: Path, template: Path, workdir: Path, http_port: int, isql_port: int,
              dirs_allowed: Sequence[Path], max_rows: Optional[int], max_execution_s: Optional[int]) -> None:
    """The packaged ini with every file in ``workdir`` and both ports on 127.0.0.1, so that an
    instance shares nothing with the packaged service or another instance; the SPARQL limits
    are the packaged ones unless given."""
    ini = configparser.ConfigParser(strict=False, interpolation=None, inline_comment_prefixes=(";",))
    ini.optionxform = str  # keep Virtuoso's CamelCase keys
    if not ini.read(template):
        raise FileNotFoundError(f"no Virtuoso configuration at {template}; {INSTALL}")
    ini["Database"].update(
        DatabaseFile=str(workdir / "virtuoso.db"), ErrorLogFile=str(workdir / "virtuoso.log"),
        LockFile=str(workdir / "virtuoso.lck"), TransactionFile=str(workdir / "virtuoso.trx"),
        xa_persistent_file=str(workdir / "virtuoso.pxa"))
    ini["TempDatabase"].update(DatabaseFile=str(workdir / "virtuoso-temp.db"),
                               TransactionFile=str(workdir / "virtuoso-temp.trx"))
    ini["Parameters"].update(ServerPort=f"127.0.0.1:{isql_port}",
                             DirsAllowed=", ".join(["."] + [str(d) for d in dirs_allowed]))
    ini["HTTPServer"]["ServerPort"] = f"127.0.0.1:{http_port}"
    if ini.has_section("URIQA"):
        ini["URIQA"]["DefaultHost"] = f"127.0.0.1:{http_port}"
    if max_rows is not None:
        ini["SPARQL"]["ResultSetMaxRows"] = str(max_rows)
    if max_execution_s is not None:
        ini["SPARQL"]["MaxQueryExecutionTime"] = str(max_execution_s)
    with open(path, "w", encoding="utf-8") as out:
        ini.write(out)


class VirtuosoServer:
    """``with VirtuosoServer(store_or_nt_files) as server: EndpointKG(server.url)``: a fresh
    Virtuoso holding those triples in ``server.graph`` answers SPARQL at ``server.url`` inside
    the block and is stopped, its database deleted, when the block ends, however it ends.

    ``sources``: kgx store directories (dumped to N-Triples first) and/or ``.nt`` files.
    ``max_rows`` / ``max_execution_s`` set ``[SPARQL] ResultSetMaxRows`` / ``MaxQueryExecutionTime``
    (whole seconds) to provoke Virtuoso's silent cuts; ``None`` keeps the packaged values.
    ``startup_s`` and ``load_s`` are measured, for reports.
    """

    def __init__(self, sources: Union[Source, Sequence[Source]], graph: str = DEFAULT_GRAPH,
                 max_rows: Optional[int] = None, max_execution_s: Optional[int] = None,
                 http_port: Optional[int] = None, isql_port: Optional[int] = None,
                 startup_timeout_s: float = 60.0, load_timeout_s: float = 1800.0, stop_timeout_s: float = 10.0,
                 template_ini: Path = PACKAGED_INI):
        self.sources = [Path(s) for s in ([sources] if isinstance(sources, (str, Path)) else sources)]
        if not self.sources:
            raise ValueError("VirtuosoServer needs at least one store directory or .nt file")
        self.graph = graph
        self.max_rows = max_rows
        self.max_execution_s = max_execution_s
        self.http_port = http_port or free_port()
        self.isql_port = isql_port or free_port()
        self.url = f"http://127.0.0.1:{self.http_port}/sparql"
        self.startup_timeout_s = startup_timeout_s
        self.load_timeout_s = load_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.template_ini = Path(template_ini)
        self.workdir: Optional[Path] = None
        self.process: Optional[subprocess.Popen] = None
        self._isql_binary = Path("isql-vt")
        self.startup_s = float("nan")
        self.load_s = float("nan")
        self._log: Optional[IO[bytes]] = None

    def __enter__(self) -> VirtuosoServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the instance and load every source; on any failure nothing is left running."""
        server, self._isql_binary = binary("virtuoso-t"), binary("isql-vt")
        for source in self.sources:
            if not source.exists():
                raise FileNotFoundError(f"no KG store directory or .nt file at {source}")
            if not source.is_dir() and source.suffix != ".nt":
                raise ValueError(f"{source}: Virtuoso loads kgx store directories or N-Triples (.nt) files")
        self.workdir = Path(tempfile.mkdtemp(prefix="kgx-virtuoso-"))
        try:
            files = self._ntriples()
            write_ini(self.workdir / "virtuoso.ini", self.template_ini, self.workdir, self.http_port,
                      self.isql_port, sorted({f.parent for f in files}), self.max_rows, self.max_execution_s)
            # The log to an unnamed file, not a pipe: a server must never block on a full pipe.
            # Its own session: a terminal's Ctrl-C reaches only us, and we stop it in order.
            self._log = tempfile.TemporaryFile()
            started = time.monotonic()
            self.process = subprocess.Popen(
                [str(server), "+configfile", str(self.workdir / "virtuoso.ini"), "+foreground"],
                cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                start_new_session=True)
            self._wait_until_ready()
            self.startup_s = time.monotonic() - started
            started = time.monotonic()
            self._load(files)
            self.load_s = time.monotonic() - started
        except BaseException:
            self.stop()
            raise

    def _ntriples(self) -> list[Path]:
        """The ``.nt`` files to load, absolute; a store is dumped into the work directory."""
        files = []
        for number, source in enumerate(self.sources):
            if source.is_dir():
                dumped = self.workdir / f"store{number}.nt"
                ox.Store.read_only(str(source)).dump(str(dumped), ox.RdfFormat.N_TRIPLES,
                                                     from_graph=ox.DefaultGraph())
                files.append(dumped)
            else:
                files.append(source.resolve())
        return files

    def _wait_until_ready(self) -> None:
        """Until SPARQL answers over HTTP and the SQL port takes connections (isql loads)."""
        deadline = time.monotonic() + self.startup_timeout_s
        ping = self.url + "?" + urllib.parse.urlencode({"query": PING})
        while True:
            code = self.process.poll()
            if code is not None:
                raise ServerError(f"virtuoso-t exited with code {code} before answering; its log ends:\n"
                                  f"{self.log_tail()}")
            if self._answers(ping) and self._accepts(self.isql_port):
                return
            if time.monotonic() > deadline:
                raise ServerError(f"virtuoso-t did not answer at {self.url} (SQL port {self.isql_port}) within "
                                  f"{self.startup_timeout_s:g} s; its log ends:\n{self.log_tail()}")
            time.sleep(0.05)

    @staticmethod
    def _answers(ping: str) -> bool:
        try:
            with _DIRECT.open(ping, timeout=1.0) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    @staticmethod
    def _accepts(port: int) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    def _load(self, files: list[Path]) -> None:
        """Virtuoso's bulk loader, as its documentation has it, then a check of its own record:
        ``rdf_loader_run`` does not fail on a bad file, it notes the error in ``load_list``."""
        graph = sql_string(self.graph)
        self.isql(" ".join(f"ld_add({sql_string(str(f))}, {graph});" for f in files))
        self.isql("rdf_loader_run();")
        self.isql("checkpoint;")
        report = self.isql(f"select concat({sql_string(LOAD_ERROR)}, ll_file, ': ', "
                           f"coalesce(ll_error, sprintf('not loaded (state %d)', ll_state))) "
                           f"from DB.DBA.load_list where ll_error is not null or ll_state <> 2;")
        failed = [line.strip()[len(LOAD_ERROR):] for line in report.splitlines()
                  if line.strip().startswith(LOAD_ERROR)]
        if failed:
            raise ServerError(f"Virtuoso could not load {len(failed)} file(s) into <{self.graph}>:\n"
                              + "\n".join(failed))

    def isql(self, sql: str) -> str:
        """Run SQL as ``dba`` (a fresh database's password is ``dba``) and return isql's output.
        isql exits 0 whatever happens, so its error lines are what tells a failure."""
        command = [str(self._isql_binary), f"127.0.0.1:{self.isql_port}", "dba", "dba", "VERBOSE=OFF",
                   "BANNER=OFF", "PROMPT=OFF", "ECHO=OFF", "ERRORS=STDOUT", f"exec={sql}"]
        try:
            done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  errors="replace", timeout=self.load_timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ServerError(f"isql-vt did not finish {sql!r} within {self.load_timeout_s:g} s; the server's "
                              f"log ends:\n{self.log_tail()}") from exc
        if done.returncode != 0 or "*** Error" in done.stdout:
            raise ServerError(f"isql-vt {sql!r} failed (exit {done.returncode}):\n"
                              f"{(done.stdout + done.stderr).strip()}\nthe server's log ends:\n{self.log_tail()}")
        return done.stdout

    def log_tail(self, lines: int = LOG_TAIL) -> str:
        """The last ``lines`` lines the server wrote (its log goes to stdout in the foreground)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return "\n".join(self._log.read().decode("utf-8", "replace").strip().splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate (kill after ``stop_timeout_s``) and delete the instance's database."""
        end_process(self.process, self.stop_timeout_s)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
