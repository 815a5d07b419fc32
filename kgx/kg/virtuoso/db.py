"""A persistent Virtuoso database in a directory of its own: sized from the machine's memory,
bulk-loaded with parallel loaders, resumable, served on loopback.

Unlike :class:`kgx.kg.virtuoso.VirtuosoServer` (a temporary copy for tests), the database here
is the one a user keeps: ``freebase build`` loads it and ``serve --engine virtuoso --db DIR``
serves it in place. The server dies with the process that started it (even by ``kill -9``), so
an interrupted build never leaves a server writing to the database; Virtuoso then reopens it
at its last checkpoint.

Resume rests on Virtuoso's own record, ``DB.DBA.load_list``: a file in state 2 without an
error is loaded and checkpointed, so it is never loaded again; a file caught mid-load (state 1)
is put back to 0 and loaded again, which cannot double a triple (a graph is a set of quads).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

from kgx.core.lifeline import server_preexec
from kgx.kg.pipelines.dump_filter import BuildError, atomic_write, disk_full_error
from kgx.kg.serve import ServerError
from kgx.kg.virtuoso.process import PACKAGED_INI, VirtuosoProcess, sql_string, write_ini

BUFFERS_PER_GB = 85_000  # Virtuoso's table: 8 KB pages with their overhead, per GB given to it
MIN_GB = 0.5
MAX_ROWS = 100_000  # rows per SPARQL answer; kgx reports a cut answer (kg.truncated), never uses it
MAX_EXECUTION_S = 120
CREATED = "kgx-created"  # written once a new database has been created and checkpointed
DB_STATE = "kgx-virtuoso.json"  # sizing and limits, so that serve opens the database as it was built
DB_FILES = ("virtuoso.db", "virtuoso.trx", "virtuoso.pxa", "virtuoso.lck", "virtuoso-temp.db", "virtuoso-temp.trx")
ROW = "kgx-row "  # prefix of a load_list row in isql's output
NO_SPACE = ("No space left", "disk full", "Disk full")


@dataclass(frozen=True)
class Sizing:
    """``[Parameters]`` and ``[SPARQL]`` values of the database's ``virtuoso.ini``."""

    memory_gb: float
    buffers: int  # NumberOfBuffers: ~85,000 per GB given to Virtuoso
    dirty: int  # MaxDirtyBuffers: ~3/4 of them
    max_rows: int = MAX_ROWS  # [SPARQL] ResultSetMaxRows
    max_execution_s: int = MAX_EXECUTION_S  # [SPARQL] MaxQueryExecutionTime

    def parameters(self) -> dict[str, str]:
        return {"NumberOfBuffers": str(self.buffers), "MaxDirtyBuffers": str(self.dirty)}

    def describe(self) -> str:
        return (
            f"virtuoso.ini: {self.memory_gb:.1f} GB for Virtuoso -> NumberOfBuffers={self.buffers} "
            f"MaxDirtyBuffers={self.dirty}, ResultSetMaxRows={self.max_rows}, "
            f"MaxQueryExecutionTime={self.max_execution_s} s"
        )


def available_gb() -> float:
    """Memory available now (``MemAvailable``), else all of it."""
    try:
        fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        return int(fields["MemAvailable"].split()[0]) / (1 << 20)
    except (OSError, KeyError, ValueError):
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)


def size_for(
    memory_gb: Optional[float] = None, max_rows: int = MAX_ROWS, max_execution_s: int = MAX_EXECUTION_S
) -> Sizing:
    """Virtuoso's own sizing table: ~85,000 buffers per GB, MaxDirtyBuffers 3/4 of them; by
    default 3/4 of the memory available now is given (the rest stays for the filter and the OS)."""
    gb = max(MIN_GB, memory_gb if memory_gb else 0.75 * available_gb())
    buffers = int(gb * BUFFERS_PER_GB)
    return Sizing(round(gb, 2), buffers, buffers * 3 // 4, max_rows, max_execution_s)


def free_bytes(path: Path) -> int:
    """Free space where the database grows (the seam a test replaces to fill the disk)."""
    return shutil.disk_usage(path).free


def saved_sizing(directory: Path) -> Optional[Sizing]:
    state = directory / DB_STATE
    return Sizing(**json.loads(state.read_text())) if state.is_file() else None


class VirtuosoDB(VirtuosoProcess):
    """``db = VirtuosoDB(DIR, sizing); db.open(); ...; db.close()``: the database in DIR itself."""

    def __init__(
        self,
        directory: Path,
        sizing: Sizing,
        dirs_allowed: Sequence[Path] = (),
        http_port: Optional[int] = None,
        isql_port: Optional[int] = None,
        startup_timeout_s: float = 300.0,
        sql_timeout_s: float = 86_400.0,
        stop_timeout_s: float = 120.0,
    ):
        super().__init__(http_port, isql_port, startup_timeout_s, sql_timeout_s, stop_timeout_s)
        self.directory = Path(directory).resolve()
        self.sizing = sizing
        self.dirs_allowed = [Path(d).resolve() for d in dirs_allowed]

    def __enter__(self) -> VirtuosoDB:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def open(self) -> None:
        """Start the server on the database (creating it when new); it dies with this process."""
        self.directory.mkdir(parents=True, exist_ok=True)
        created = self.directory / CREATED
        if not created.exists():  # a creation interrupted leaves a database Virtuoso cannot open
            for name in DB_FILES:
                (self.directory / name).unlink(missing_ok=True)
        ini = self.directory / "virtuoso.ini"
        write_ini(
            ini,
            PACKAGED_INI,
            self.directory,
            self.http_port,
            self.isql_port,
            self.dirs_allowed,
            self.sizing.max_rows,
            self.sizing.max_execution_s,
            self.sizing.parameters(),
        )
        atomic_write(self.directory / DB_STATE, json.dumps(asdict(self.sizing)))
        try:
            self.launch(ini)
            if not created.exists():
                self.isql("checkpoint;")
                created.write_text("created and checkpointed\n")
        except BaseException:
            self.end()
            raise

    def load_list(self, files: Sequence[Path]) -> dict[Path, tuple[int, str]]:
        """Virtuoso's record of ``files``: state (0 to do, 1 loading, 2 done) and error, if any."""
        wanted = {str(f): f for f in files}
        found: dict[Path, tuple[int, str]] = {}
        states = self.isql(f"select concat('{ROW}', cast(ll_state as varchar), ' ', ll_file) from DB.DBA.load_list;")
        for line in states.splitlines():
            if line.startswith(ROW):
                state, _, name = line[len(ROW) :].rstrip().partition(" ")
                if name in wanted:
                    found[wanted[name]] = (int(state), "")
        errors = self.isql(
            f"select concat('{ROW}', ll_file, '\t', ll_error) from DB.DBA.load_list where ll_error is not null;"
        )
        for line in errors.splitlines():
            name, _, error = line[len(ROW) :].partition("\t") if line.startswith(ROW) else ("", "", "")
            if name in wanted:
                found[wanted[name]] = (found.get(wanted[name], (0, ""))[0], error.strip())
        return found

    def forget(self, files: Sequence[Path]) -> None:
        """Take ``files`` out of the load list (an interrupted or failed load is done again)."""
        for f in files:
            self.isql(f"delete from DB.DBA.load_list where ll_file = {sql_string(str(f))};")

    def load(self, files: Sequence[Path], graph: str, loaders: int) -> None:
        """Bulk-load ``files`` into ``graph`` with ``loaders`` concurrent ``rdf_loader_run()``."""
        self.isql(" ".join(f"ld_add({sql_string(str(f))}, {sql_string(graph)});" for f in files))
        sql = "rdf_loader_run();"
        running = [
            subprocess.Popen(
                self.isql_command(sql),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                preexec_fn=server_preexec(),
            )
            for _ in range(max(1, min(loaders, len(files))))
        ]
        try:
            while any(p.poll() is None for p in running):
                if self.process.poll() is not None:
                    self._died("the load")
                time.sleep(0.2)
        finally:
            for p in running:
                if p.poll() is None:
                    p.kill()
        for p in running:
            self.check_isql(sql, p.returncode, p.communicate()[0])

    def _died(self, during: str) -> None:
        tail = self.log_tail()
        if any(mark in tail for mark in NO_SPACE):
            raise disk_full_error(
                self.directory / "virtuoso.db", during, "chunks already loaded stay loaded (DB.DBA.load_list)"
            )
        raise ServerError(
            f"virtuoso-t exited (code {self.process.returncode}) during {during}; rerun the same "
            f"command to resume; its log ends:\n{tail}"
        )

    def ensure_space(self, needed: int) -> None:
        free = free_bytes(self.directory)
        if free < needed:
            raise BuildError(
                f"only {free / 1e9:.2f} GB free for the database in {self.directory} and the next "
                f"chunks need about {needed / 1e9:.2f} GB: free space there (or move DIR) and rerun the "
                f"same command; chunks already loaded stay loaded (DB.DBA.load_list)"
            )

    def checkpoint(self) -> None:
        self.isql("checkpoint;")

    def triples(self, graph: str) -> int:
        out = self.isql(f"sparql select (count(*) as ?n) from <{graph}> where {{ ?s ?p ?o }};")
        numbers = [line.strip() for line in out.splitlines() if line.strip().isdigit()]
        if not numbers:
            raise ServerError(f"could not count the triples of <{graph}>: isql answered {out!r}")
        return int(numbers[-1])

    def cpu_seconds(self) -> float:
        """CPU time the server has used (its loaders run inside it), from ``/proc``; 0 elsewhere."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def close(self) -> None:
        """A clean shutdown (Virtuoso checkpoints first), else terminate: the database stays."""
        if self.process is not None and self.process.poll() is None:
            try:
                self.isql("shutdown;")
            except ServerError:
                pass  # isql loses its connection as the server goes
            try:
                self.process.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                pass
        self.end()


def database_bytes(directory: Path) -> int:
    return sum((directory / name).stat().st_size for name in DB_FILES if (directory / name).is_file())


def is_built(directory: Path) -> bool:
    return (directory / "build.json").is_file() and json.loads((directory / "build.json").read_text()).get("done")


def require_built(directory: Path) -> dict:
    if not is_built(directory):
        raise BuildError(
            f"{directory} holds no finished Freebase build: run python -m kgx.kg freebase build "
            f"--dump freebase-rdf-latest.gz --db {directory} (a rerun resumes where it stopped)"
        )
    return json.loads((directory / "build.json").read_text())
