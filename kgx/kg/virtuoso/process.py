"""One ``virtuoso-t`` process on loopback and its SQL client: what a temporary test instance
(:mod:`kgx.kg.virtuoso`) and a persistent Freebase database (:mod:`kgx.kg.virtuoso.db`) share.

The ini is the packaged one with every file in one directory and both ports on 127.0.0.1, so an
instance shares nothing with the packaged service or another instance. ``isql-vt`` exits 0
whatever happens, so its error lines, not its exit code, tell a failed statement.
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
from typing import IO, Mapping, Optional, Sequence

from kgx.core.lifeline import server_preexec
from kgx.kg.serve import PING, ServerError, end_process, free_port

PACKAGED_INI = Path("/etc/virtuoso-opensource-7/virtuoso.ini")
INSTALL = "apt-get install virtuoso-opensource"
LOG_TAIL = 40  # lines of the server's log quoted when it fails
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, whatever the proxy


def binary(name: str) -> Path:
    """``virtuoso-t`` or ``isql-vt`` from PATH; a missing one names the package that has it."""
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(
            f"{name} is not on PATH; Virtuoso comes from the Debian/Ubuntu package virtuoso-opensource: {INSTALL}"
        )
    return Path(found)


def sql_string(text: str) -> str:
    """A Virtuoso SQL string literal (paths and IRIs are ours, but may hold a quote)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def write_ini(
    path: Path,
    template: Path,
    workdir: Path,
    http_port: int,
    isql_port: int,
    dirs_allowed: Sequence[Path],
    max_rows: Optional[int],
    max_execution_s: Optional[int],
    parameters: Optional[Mapping[str, str]] = None,
) -> None:
    """The packaged ini with every file in ``workdir`` and both ports on 127.0.0.1; the SPARQL
    limits are the packaged ones unless given; ``parameters`` override keys of ``[Parameters]``
    (the buffer sizing of a persistent database)."""
    ini = configparser.ConfigParser(strict=False, interpolation=None, inline_comment_prefixes=(";",))
    ini.optionxform = str  # keep Virtuoso's CamelCase keys
    if not ini.read(template):
        raise FileNotFoundError(f"no Virtuoso configuration at {template}; {INSTALL}")
    ini["Database"].update(
        DatabaseFile=str(workdir / "virtuoso.db"),
        ErrorLogFile=str(workdir / "virtuoso.log"),
        LockFile=str(workdir / "virtuoso.lck"),
        TransactionFile=str(workdir / "virtuoso.trx"),
        xa_persistent_file=str(workdir / "virtuoso.pxa"),
    )
    ini["TempDatabase"].update(
        DatabaseFile=str(workdir / "virtuoso-temp.db"), TransactionFile=str(workdir / "virtuoso-temp.trx")
    )
    ini["Parameters"].update(
        ServerPort=f"127.0.0.1:{isql_port}", DirsAllowed=", ".join(["."] + [str(d) for d in dirs_allowed])
    )
    ini["Parameters"].update(parameters or {})
    ini["HTTPServer"]["ServerPort"] = f"127.0.0.1:{http_port}"
    if ini.has_section("URIQA"):
        ini["URIQA"]["DefaultHost"] = f"127.0.0.1:{http_port}"
    if max_rows is not None:
        ini["SPARQL"]["ResultSetMaxRows"] = str(max_rows)
    if max_execution_s is not None:
        ini["SPARQL"]["MaxQueryExecutionTime"] = str(max_execution_s)
    with open(path, "w", encoding="utf-8") as out:
        ini.write(out)


class VirtuosoProcess:
    """A ``virtuoso-t`` started on an ini, ready once SPARQL answers over HTTP and the SQL port
    takes connections; ``isql`` runs SQL as ``dba``; ``stop`` ends it."""

    def __init__(
        self,
        http_port: Optional[int] = None,
        isql_port: Optional[int] = None,
        startup_timeout_s: float = 60.0,
        sql_timeout_s: float = 1800.0,
        stop_timeout_s: float = 10.0,
    ):
        self.http_port = http_port or free_port()
        self.isql_port = isql_port or free_port()
        self.url = f"http://127.0.0.1:{self.http_port}/sparql"
        self.startup_timeout_s = startup_timeout_s
        self.sql_timeout_s = sql_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.process: Optional[subprocess.Popen] = None
        self._isql_binary = Path("isql-vt")
        self._log: Optional[IO[bytes]] = None

    def launch(self, ini: Path) -> None:
        """Start the server on ``ini`` (in its directory) and wait until it answers. It dies with
        this process, even on ``kill -9`` (kgx.core.lifeline): no orphan keeps its ports, nor
        writes to a database an interrupted build left."""
        server, self._isql_binary = binary("virtuoso-t"), binary("isql-vt")
        # The log to an unnamed file, not a pipe: a server must never block on a full pipe.
        # Its own session: a terminal's Ctrl-C reaches only us, and we stop it in order.
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [str(server), "+configfile", str(ini), "+foreground"],
            cwd=ini.parent,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=server_preexec(),
        )
        self._wait_until_ready()

    def _wait_until_ready(self) -> None:
        """Until SPARQL answers over HTTP and the SQL port takes connections (isql loads)."""
        deadline = time.monotonic() + self.startup_timeout_s
        ping = self.url + "?" + urllib.parse.urlencode({"query": PING})
        while True:
            code = self.process.poll()
            if code is not None:
                raise ServerError(
                    f"virtuoso-t exited with code {code} before answering; its log ends:\n{self.log_tail()}"
                )
            if self._answers(ping) and self._accepts(self.isql_port):
                return
            if time.monotonic() > deadline:
                raise ServerError(
                    f"virtuoso-t did not answer at {self.url} (SQL port {self.isql_port}) within "
                    f"{self.startup_timeout_s:g} s; its log ends:\n{self.log_tail()}"
                )
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

    def isql_command(self, sql: str) -> list[str]:
        """The ``isql-vt`` command line that runs ``sql`` as ``dba`` (a fresh database's password)."""
        return [
            str(self._isql_binary),
            f"127.0.0.1:{self.isql_port}",
            "dba",
            "dba",
            "VERBOSE=OFF",
            "BANNER=OFF",
            "PROMPT=OFF",
            "ECHO=OFF",
            "ERRORS=STDOUT",
            f"exec={sql}",
        ]

    def isql(self, sql: str) -> str:
        """Run SQL and return isql's output; an error line or a timeout raises ServerError."""
        try:
            done = subprocess.run(
                self.isql_command(sql),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=self.sql_timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ServerError(
                f"isql-vt did not finish {sql!r} within {self.sql_timeout_s:g} s; the server's "
                f"log ends:\n{self.log_tail()}"
            ) from exc
        self.check_isql(sql, done.returncode, done.stdout + done.stderr)
        return done.stdout

    def check_isql(self, sql: str, code: int, output: str) -> None:
        if code != 0 or "*** Error" in output:
            raise ServerError(
                f"isql-vt {sql!r} failed (exit {code}):\n{output.strip()}\nthe server's log ends:\n{self.log_tail()}"
            )

    def log_tail(self, lines: int = LOG_TAIL) -> str:
        """The last ``lines`` lines the server wrote (its log goes to stdout in the foreground)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return "\n".join(self._log.read().decode("utf-8", "replace").strip().splitlines()[-lines:])

    def end(self) -> None:
        """Terminate (kill after ``stop_timeout_s``) and forget the log."""
        end_process(self.process, self.stop_timeout_s)
        if self._log is not None:
            self._log.close()
            self._log = None
