"""The stores of ``kg=subgraph``: RoG parquet files' subgraphs, one named graph per question or one union.

Each row of a RoG file (``kgx.core.rog_files``) is one question and its Freebase subgraph, written
``[head, relation, tail]`` with names where Freebase has one and mids (``m.06w2sn5``) otherwise.
They become the Freebase shape every method queries, as name-level KGs do (``kgx.kg.name_level``):
a name is the node ``ns:<name_id(name)>`` with ``type.object.name "name"@en``, a mid is that node
itself and stays unnamed (a CVT, described by its attributes), a relation id is ``ns:<relation>``.
For ``kg.scope=question`` every triple and the names of its nodes go into the question's named
graph (``graph_iri``), so a question's view of the store (``kgx.kg.subgraph``) holds its subgraph
alone, names included: an entity another question's subgraph names cannot be found from it, by edge
or by name. For ``kg.scope=union`` the same lines go into the default graph instead, where the store
keeps each triple once however many subgraphs list it: queries read it as it is, with no union of
named graphs to deduplicate at query time (on CWQ, hubs and names recur in hundreds of subgraphs).
The two scopes are two stores with their own fingerprints, so switching scope never rebuilds the other.

The build is one pass: a thread converts rows to N-Quads into a pipe that Oxigraph's bulk loader
reads, so conversion (Python) and loading (Rust) share the two cores. Like ``kgx.kg.pipelines`` it is
all or nothing and cached by content: the store is made in a temp directory that replaces
``store_dir`` only when complete, and a store whose manifest has the files' fingerprint is reused.
A temp directory a killed build left beside it is removed then, named (``kgx.kg.pipelines.leftovers``).
A bad row stops the build naming file, row, question and triple; the store already there stays.

Two names sharing a generated id are not detected here (``NameLevel`` keeps every name in memory
to notice; that is ~0.5 GB at the 2.6M entities of WebQSP + CWQ): at 80 bits such a pair becomes
likely only around 10^12 names.
"""

from __future__ import annotations

import os
import re
import threading
import time
import urllib.parse
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional, TextIO

import pyoxigraph as ox

from kgx.core.rog_files import row_count, rows
from kgx.core.sources import SourceError, name_id
from kgx.kg.freebase import NAME, NS, literal
from kgx.kg.pipelines import fingerprint, install, read_manifest, workspace
from kgx.kg.pipelines import leftovers as leftovers
from kgx.kg.pipelines.progress_bar import PhaseBar, count

FORMAT = "rog"
SCOPES = ("question", "union")
GRAPH_PREFIX = "urn:kgx:question:"
_RELATION = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+$")


def graph_iri(question_id: str) -> str:
    """The named graph of a question's subgraph: its id percent-encoded, so any id makes an IRI."""
    return GRAPH_PREFIX + urllib.parse.quote(question_id, safe="")


def store_format(scope: str) -> str:
    """The format a store's fingerprint holds: ``rog`` for question scope (as before the union had
    its own store, so those stay valid), ``rog-union`` for the union."""
    if scope not in SCOPES:
        raise SourceError(f"kg.scope={scope}: choose one of {', '.join(SCOPES)}")
    return FORMAT if scope == "question" else f"{FORMAT}-{scope}"


@dataclass(frozen=True)
class SubgraphBuild:
    store: Path
    questions: int  # rows read (question scope: one named graph each)
    triples: int  # graph triples as the files list them
    quads: int  # in the store: distinct triples plus names, per question (question scope) or in all (union)
    seconds: float  # of the build that made the store (an earlier one when reused)
    reused: bool  # an up-to-date store was already there
    scope: str = "question"


class _Writer:
    """Converts the files' rows to N-Quads into ``target``, in each question's named graph or, for
    the union, in the default graph; an error is kept for the builder, which raises it once the
    loader has stopped (the pipe is closed either way)."""

    def __init__(self, files: list[Path], target: Path, progress: PhaseBar, scope: str):
        self.files = files
        self.target = target
        self.progress = progress
        self.scope = scope
        self.questions = self.triples = 0
        self.error: Optional[BaseException] = None
        self._seen: dict[str, str] = {}  # question id -> where it was first read
        self._relations: dict[str, str] = {}  # relation id -> its IRI, once checked

    def run(self) -> None:
        try:
            with self.target.open("wb") as out:
                for file, index, (qid, graph) in rows(self.files, ("id", "graph")):
                    out.write(self._question(file, index, qid, graph or []).encode("utf-8"))
        except BaseException as exc:  # noqa: BLE001 - handed to the builder's thread, which raises it
            self.error = exc

    def _question(self, file: Path, index: int, qid: Any, graph: list[Any]) -> str:
        where = f"{file}: row {index}"
        if not isinstance(qid, str) or not qid:
            raise SourceError(f"{where}: column id must be a non-empty string, found {qid!r}")
        where += f" (question {qid})"
        if qid in self._seen:
            raise SourceError(
                f"{where}: question id {qid!r} appears again (first at {self._seen[qid]}); "
                f"each question needs its own id"
            )
        self._seen[qid] = where
        g = f"<{graph_iri(qid)}> .\n" if self.scope == "question" else ".\n"
        nodes: dict[str, str] = {}
        lines: list[str] = []
        for k, triple in enumerate(graph):
            if not (isinstance(triple, list) and len(triple) == 3 and all(isinstance(x, str) and x for x in triple)):
                raise SourceError(
                    f"{where}: graph triple {k} is not [head, relation, tail] (three non-empty strings): {triple!r}"
                )
            head, relation, tail = triple
            h = nodes.get(head) or self._node(head, nodes, lines, g)
            t = nodes.get(tail) or self._node(tail, nodes, lines, g)
            r = self._relations.get(relation) or self._relation(relation, where, k)
            lines.append(f"{h} {r} {t} {g}")
        self.questions += 1
        self.triples += len(graph)
        self.progress.update(self.questions)
        return "".join(lines)

    @staticmethod
    def _node(name: str, nodes: dict[str, str], lines: list[str], g: str) -> str:
        fb_id = name_id(name)
        node = nodes[name] = f"<{NS}{fb_id}>"
        if fb_id != name:  # a mid stays unnamed, as on Freebase
            lines.append(f"{node} <{NAME}> {literal(name)}@en {g}")
        return node

    def _relation(self, relation: str, where: str, k: int) -> str:
        if not _RELATION.match(relation):
            raise SourceError(
                f"{where}: graph triple {k}: relation {relation!r} is not a Freebase relation id (domain.type.property)"
            )
        self._relations[relation] = f"<{NS}{relation}>"
        return self._relations[relation]


def build_subgraphs(
    files: list[Path],
    store_dir: Path,
    progress: bool = True,
    stream: Optional[TextIO] = None,
    scope: str = "question",
) -> SubgraphBuild:
    """Load ``files`` into ``store_dir`` for ``scope`` unless a store of the same files and scope is there."""
    files = [Path(f) for f in files]
    if not files:
        raise SourceError("no RoG parquet files given")
    leftovers.sweep(store_dir.parent)
    digest = fingerprint(files, store_format(scope), False)
    manifest = read_manifest(store_dir)
    if manifest.get("fingerprint") == digest:
        return _from_manifest(store_dir, manifest)
    start = time.perf_counter()
    with workspace(store_dir) as work:
        title = "kgx: subgraph build" + ("" if scope == "question" else f" ({scope})")
        meter = PhaseBar(title, row_count(files), count, "questions/s", stream=stream, enabled=progress)
        writer, quads = _load(_Writer(files, work / "quads.nq", meter, scope), work)
        meter.close()
        seconds = round(time.perf_counter() - start, 3)
        result = SubgraphBuild(store_dir, writer.questions, writer.triples, quads, seconds, False, scope)
        manifest = {
            **asdict(result),
            "store": str(store_dir),
            "fingerprint": digest,
            "format": store_format(scope),
            "sources": [str(f) for f in files],
        }
        if not install(work / "store", store_dir, manifest):
            return _from_manifest(store_dir, read_manifest(store_dir))
        return result


def _load(writer: _Writer, work: Path) -> tuple[_Writer, int]:
    """Convert and bulk-load at once through a named pipe (the writer's target); returns the
    writer and the quads stored. The writer's error comes first, as it is the cause when both
    fail (the loader then read a cut-off stream)."""
    pipe, meter = writer.target, writer.progress
    os.mkfifo(pipe)
    meter.extra = lambda: f"{writer.triples:,} triples, {meter.per_s(writer.triples):,.0f} triples/s"
    thread = threading.Thread(target=writer.run, name="kgx-subgraph-writer", daemon=True)
    thread.start()
    store = ox.Store(str(work / "store"))
    try:
        store.bulk_load(path=str(pipe), format=ox.RdfFormat.N_QUADS)
        store.flush()
    except BaseException:
        # A loader that stopped before opening the pipe leaves the writer waiting for a reader:
        # opening and closing the read end lets it fail (broken pipe) and end.
        os.close(os.open(pipe, os.O_RDONLY | os.O_NONBLOCK))
        thread.join()
        if writer.error is not None and not isinstance(writer.error, BrokenPipeError):
            raise writer.error from None
        raise
    thread.join()
    if writer.error is not None:
        raise writer.error
    return writer, len(store)


def _from_manifest(store_dir: Path, manifest: dict) -> SubgraphBuild:
    return SubgraphBuild(
        store_dir,
        manifest["questions"],
        manifest["triples"],
        manifest["quads"],
        manifest["seconds"],
        True,
        manifest.get("scope", "question"),
    )
