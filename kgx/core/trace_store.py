"""A run's traces on disk: compressed shards of many questions each, not a file per question.

A file per question made a 20,000-question run 20,000 files in its folder and as many MLflow
artifacts (benchmarks/records.py). Here each process that answers questions appends to a shard of
its own under ``traces/`` (processes never share a file; its threads take turns), a gzip stream of
JSON lines, one trace a line with its question's id first, ``SHARD_TRACES`` traces a shard. The
stream is flushed at every trace, so a trace is on disk when its question's record is written, and
it compresses against the traces before it (a run's prompts repeat). A record names its shard
(``Record.trace``). ``zcat traces/*.gz`` shows every trace.

A shard a kill cut short reads up to its last whole trace (up to its last flush: what a crash
left after it is never read as a trace), and no invocation appends to a shard another one wrote:
a rerun writes shards of its own, named by its invocation. Folders written
before shards keep ``traces/<id>.json``, read as they are.
"""

from __future__ import annotations

import collections
import json
import os
import threading
import time
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

from kgx.core.trace import Trace

FOLDER = "traces"
SUFFIX = ".jsonl.gz"
SHARD_TRACES = 1000  # a question's trace is found by reading its shard: this bounds that read
GZIP = 31  # zlib's wbits for a gzip stream
CHUNK = 1 << 20
FLUSHED = b"\x00\x00\xff\xff"  # how deflate output ends at a flush (Z_SYNC_FLUSH's empty stored block)
ID = json.JSONDecoder()
NO_EXPLANATION = b'"explanation": null}'  # how a trace line without an explanation ends (Trace.line)


class TraceWriter:
    """One process's shards of one invocation; ``add`` is safe from many threads at once."""

    def __init__(self, out_dir: Path, invocation: int):
        self.folder = out_dir / FOLDER
        self.prefix = f"{invocation:03d}-{os.getpid()}"
        self._lock = threading.Lock()
        self._fd: Optional[int] = None
        self._zip: Any = None
        self._name = ""
        self._count = 0
        self._shards = 0

    def add(self, question_id: str, topic_entities: dict[str, str], trace: Trace) -> str:
        """Append the trace of a finished question; returns its shard, relative to the run's folder."""
        line = trace.line(question_id, topic_entities, time.time_ns())
        with self._lock:
            if self._fd is None or self._count >= SHARD_TRACES:
                self._next()
            try:
                _write(self._fd, self._zip.compress(line) + self._zip.flush(zlib.Z_SYNC_FLUSH))
            except OSError:  # a full disk: the shard reads up to here, and the next trace starts another
                os.close(self._fd)
                self._fd = None
                raise
            self._count += 1
            return f"{FOLDER}/{self._name}"

    def close(self) -> None:
        """End the open shard's gzip stream (a shard left open still reads, up to its last trace)."""
        with self._lock:
            self._finish()

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next(self) -> None:
        self._finish()
        self.folder.mkdir(parents=True, exist_ok=True)
        while self._fd is None:
            self._shards += 1
            self._name = f"{self.prefix}-{self._shards:04d}{SUFFIX}"
            try:  # never another's file, even one a process of the same id left in an earlier run
                self._fd = os.open(self.folder / self._name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
        self._zip, self._count = zlib.compressobj(wbits=GZIP), 0

    def _finish(self) -> None:
        if self._fd is not None:
            try:
                _write(self._fd, self._zip.flush(zlib.Z_FINISH))
            finally:
                os.close(self._fd)
                self._fd = None


def _write(fd: int, blob: bytes) -> None:
    view = memoryview(blob)
    while view:
        view = view[os.write(fd, view) :]


class TraceReader:
    """The traces of a run folder by question, from the shards records name (the last few read
    are kept, decompressed: records in dataset order mostly follow their shards' order)."""

    def __init__(self, out_dir: Path, keep: int = 2):
        self.out_dir = out_dir
        self.keep = keep
        self._shards: collections.OrderedDict[str, dict[str, bytes]] = collections.OrderedDict()

    def get(self, question_id: str, where: str) -> Optional[dict[str, Any]]:
        """The trace of ``question_id`` that ``where`` (a record's ``trace``) names; None when
        there is none (no trace asked for, a shard lost or cut short before it)."""
        if not where:
            return None
        if not where.endswith(SUFFIX):  # a per-question file of a folder written before shards
            path = self.out_dir / where
            return {"end_ns": path.stat().st_mtime_ns, **json.loads(path.read_bytes())} if path.is_file() else None
        line = self._shard(where).get(question_id)
        return json.loads(line) if line is not None else None

    def explanations(self, traces: Iterable[tuple[str, str]], limit: int) -> dict[str, dict[str, Any]]:
        """The explanation graphs of the first ``limit`` of ``traces`` (question id, where its trace
        is) that have one, in their order (a trace without one is passed over unparsed)."""
        found: dict[str, dict[str, Any]] = {}
        for question_id, where in traces:
            if len(found) >= limit:
                break
            if where.endswith(SUFFIX):
                line = self._shard(where).get(question_id)
                if line is None or line.endswith(NO_EXPLANATION):
                    continue
            data = self.get(question_id, where)
            if data and data.get("explanation"):
                found[question_id] = data["explanation"]
        return found

    def _shard(self, where: str) -> dict[str, bytes]:
        """A shard's traces by question id, ``where`` relative to the run's folder (a string: a
        path made per question cost more than the lookup)."""
        if where in self._shards:
            self._shards.move_to_end(where)
            return self._shards[where]
        path = self.out_dir / where
        lines = shard_lines(path.read_bytes()) if path.is_file() else {}
        self._shards[where] = lines
        while len(self._shards) > self.keep:
            self._shards.popitem(last=False)
        return lines


def shard_lines(blob: bytes) -> dict[str, bytes]:
    """A shard's traces by question id: every whole line, up to where the shard was cut short."""
    text = inflate(blob)
    lines = {}
    for line in text.split(b"\n")[:-1]:  # after the last newline: nothing, or a trace cut short
        try:
            question_id, _ = ID.raw_decode(line.decode("utf-8"), len('{"id": '))
        except ValueError:  # not a trace line: skipped, as a damaged line would be
            continue
        if isinstance(question_id, str):
            lines[question_id] = line
    return lines


def inflate(blob: bytes) -> bytes:
    """A gzip stream's content up to its last flush (every trace ends in one; what follows a
    complete stream's last is only its end): a stream cut short (a kill) gives the traces before
    the cut, and whatever a crash left after it (zeros, garbage) is not read as a trace."""
    last = blob.rfind(FLUSHED)
    blob = blob[: last + len(FLUSHED)] if last >= 0 else b""  # no flush yet: no whole trace
    out: list[bytes] = []
    unzip = zlib.decompressobj(wbits=GZIP)
    for start in range(0, len(blob), CHUNK):
        try:
            out.append(unzip.decompress(blob[start : start + CHUNK]))
        except zlib.error:
            break
        if unzip.eof:
            break
    return b"".join(out)


def readable(path: Path) -> bytes:
    """A file's bytes as a reader sees them, a trace shard's decompressed: what a scan of a run's
    files for a secret must read."""
    data = path.read_bytes()
    return inflate(data) if path.name.endswith(SUFFIX) else data
