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

import shutil
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence, Union

import pyoxigraph as ox

from kgx.kg.serve import ServerError
from kgx.kg.virtuoso.process import PACKAGED_INI, VirtuosoProcess, binary, sql_string, write_ini

DEFAULT_GRAPH = "http://freebase.com"  # the graph IRI of the papers' Freebase setups
LOAD_ERROR = "kgx-load-error "  # prefix of a failed load_list row in isql's output

Source = Union[str, Path]


class VirtuosoServer(VirtuosoProcess):
    """``with VirtuosoServer(store_or_nt_files) as server: EndpointKG(server.url)``: a fresh
    Virtuoso holding those triples in ``server.graph`` answers SPARQL at ``server.url`` inside
    the block and is stopped, its database deleted, when the block ends, however it ends.

    ``sources``: kgx store directories (dumped to N-Triples first) and/or ``.nt`` files.
    ``max_rows`` / ``max_execution_s`` set ``[SPARQL] ResultSetMaxRows`` / ``MaxQueryExecutionTime``
    (whole seconds) to provoke Virtuoso's silent cuts; ``None`` keeps the packaged values.
    ``startup_s`` and ``load_s`` are measured, for reports.
    """

    def __init__(
        self,
        sources: Union[Source, Sequence[Source]],
        graph: str = DEFAULT_GRAPH,
        max_rows: Optional[int] = None,
        max_execution_s: Optional[int] = None,
        http_port: Optional[int] = None,
        isql_port: Optional[int] = None,
        startup_timeout_s: float = 60.0,
        load_timeout_s: float = 1800.0,
        stop_timeout_s: float = 10.0,
        template_ini: Path = PACKAGED_INI,
    ):
        self.sources = [Path(s) for s in ([sources] if isinstance(sources, (str, Path)) else sources)]
        if not self.sources:
            raise ValueError("VirtuosoServer needs at least one store directory or .nt file")
        super().__init__(http_port, isql_port, startup_timeout_s, load_timeout_s, stop_timeout_s)
        self.graph = graph
        self.max_rows = max_rows
        self.max_execution_s = max_execution_s
        self.load_timeout_s = load_timeout_s
        self.template_ini = Path(template_ini)
        self.workdir: Optional[Path] = None
        self.startup_s = float("nan")
        self.load_s = float("nan")

    def __enter__(self) -> VirtuosoServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the instance and load every source; on any failure nothing is left running."""
        binary("virtuoso-t"), binary("isql-vt")
        for source in self.sources:
            if not source.exists():
                raise FileNotFoundError(f"no KG store directory or .nt file at {source}")
            if not source.is_dir() and source.suffix != ".nt":
                raise ValueError(f"{source}: Virtuoso loads kgx store directories or N-Triples (.nt) files")
        self.workdir = Path(tempfile.mkdtemp(prefix="kgx-virtuoso-"))
        try:
            files = self._ntriples()
            write_ini(
                self.workdir / "virtuoso.ini",
                self.template_ini,
                self.workdir,
                self.http_port,
                self.isql_port,
                sorted({f.parent for f in files}),
                self.max_rows,
                self.max_execution_s,
            )
            started = time.monotonic()
            self.launch(self.workdir / "virtuoso.ini")
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
                ox.Store.read_only(str(source)).dump(str(dumped), ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
                files.append(dumped)
            else:
                files.append(source.resolve())
        return files

    def _load(self, files: list[Path]) -> None:
        """Virtuoso's bulk loader, as its documentation has it, then a check of its own record:
        ``rdf_loader_run`` does not fail on a bad file, it notes the error in ``load_list``."""
        graph = sql_string(self.graph)
        self.isql(" ".join(f"ld_add({sql_string(str(f))}, {graph});" for f in files))
        self.isql("rdf_loader_run();")
        self.isql("checkpoint;")
        report = self.isql(
            f"select concat({sql_string(LOAD_ERROR)}, ll_file, ': ', "
            f"coalesce(ll_error, sprintf('not loaded (state %d)', ll_state))) "
            f"from DB.DBA.load_list where ll_error is not null or ll_state <> 2;"
        )
        failed = [
            line.strip()[len(LOAD_ERROR) :] for line in report.splitlines() if line.strip().startswith(LOAD_ERROR)
        ]
        if failed:
            raise ServerError(
                f"Virtuoso could not load {len(failed)} file(s) into <{self.graph}>:\n" + "\n".join(failed)
            )

    def stop(self) -> None:
        """Terminate (kill after ``stop_timeout_s``) and delete the instance's database."""
        self.end()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
