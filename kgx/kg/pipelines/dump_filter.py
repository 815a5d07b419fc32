"""The Freebase dump, streamed once and filtered into numbered N-Triples chunks for Virtuoso.

``freebase-rdf-latest.gz`` (about 30 GB gzip, 400 GB and 3.13 billion lines uncompressed) is one
gzip stream of tab-separated N-Triples lines ``<s>\\t<p>\\t<o>\\t.``. Two filters:

``english`` (the default) keeps a line when
  * its subject and predicate are IRIs in ``http://rdf.freebase.com/ns/``, and
  * its object is an IRI in that namespace, or a literal that is untagged (``"1961"``, keys
    like ``"/en/australia"`` included), tagged English (``@en`` or ``@en-*``, any case), or
    typed (``"1961-08-04"^^<...XMLSchema#date>``);
  so it drops names and descriptions in other languages, ``rdf:type``/``rdfs:label`` and every
  other predicate outside the namespace, and links to web pages (object IRIs outside it).
``tog`` is exactly the script ToG's README points to (lanyunshi/Multi-hopComplexKBQA,
  ``FilterEnglishTriplets.py``, the "125 GB" filtered Freebase of ToG's setup): the subject
  must moreover be a mid or gid (``ns:m.*``/``ns:g.*``, so schema nodes lose their names), an
  untagged or ``@en`` literal must hold at least one character and not start with ``/`` (keys
  go), ``@en-*`` goes, and a typed literal must have an XML Schema datatype.

A line is malformed, under both, when it does not end with ``.`` or does not split on tabs into
four fields with the first three non-blank (the script's own test); blank lines are skipped
and ``#``/``@`` lines (comments, directives) dropped. Malformed lines are counted and skipped,
the first few line numbers reported; past ``max_bad`` of them the filter stops (a file that is
mostly not triples is not a Freebase dump).

Chunks hold about ``chunk_lines`` kept lines each (closed at the first block boundary past it;
blocks are 8 MB, smaller for small chunks), written to ``*.tmp`` and renamed when complete;
``filter.json`` records each finished chunk with the uncompressed offset it ends at, atomically,
so an interrupted filter resumes after the last recorded chunk (decompressing, not filtering,
what came before) and rewrites a half-written one, and a finished filter is never redone. A gzip
chunk is a sequence of gzip members, one per block, so that ``workers`` processes can filter and
compress blocks side by side (``zcat`` and Virtuoso read such a file as one stream).
"""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import re
import resource
import shutil
import time
import zlib
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

from kgx.kg.pipelines.dump_blocks import BLOCK, BuildError, blocks, check_gzip, prefetched

__all__ = ["BuildError", "FilterState", "RULES", "check_gzip", "filter_dump", "sort_block"]

MIN_BLOCK = 64 << 10
BYTES_PER_LINE = 16  # a block of chunk_lines * this: small chunks (tests, trials) are not one block each
FIRST_BAD = 5  # malformed line numbers reported
RULES = ("english", "tog")
_NS = rb"<http://rdf\.freebase\.com/ns/"
_KEEP = {
    "english": re.compile(
        _NS + rb"[^>\t\n]+>\t" + _NS + rb"[^>\t\n]+>\t(?:" + _NS + rb"[^>\t\n]*>|"
        rb'"[^\t\n]*(?:"|"@[eE][nN](?:-[A-Za-z0-9]+)*|"\^\^<[^>\t\n]+>))\t\.$'
    ),
    "tog": re.compile(
        _NS
        + rb"[mg]\.[^>]+>\t"
        + _NS
        + rb"[^>]+>\t(?:['\"](?!/).+['\"](?:@en)?\t\.|"
        + _NS
        + rb"[^>]+>\t.|.+<http://www\.w3\.org/2001/XMLSchema#\w+>\t.)$"
    ),
}
Progress = Callable[[int], None]  # compressed bytes of the dump read so far


@dataclass
class FilterState:
    """What ``filter.json`` records: the inputs (a rerun must match them) and the finished chunks."""

    dump: str
    dump_bytes: int
    rule: str
    chunk_lines: int
    chunk_format: str
    chunks: list[dict] = field(default_factory=list)  # name, kept, lines, offset, raw_offset
    lines: int = 0  # input lines up to the last finished chunk
    kept: int = 0
    dropped: int = 0
    malformed: int = 0
    first_malformed: list[int] = field(default_factory=list)
    done: bool = False
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process and its finished workers: what idle cores would take

    def save(self, path: Path) -> None:
        atomic_write(path, json.dumps(asdict(self), indent=1))


def atomic_write(path: Path, text: str) -> None:
    """Write, flush to disk, rename over: a reader sees the old file or the new one, never half."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def _disk_full(exc: OSError) -> bool:
    return exc.errno in (errno.ENOSPC, errno.EDQUOT)


def disk_full_error(path: Path, what: str, resume: str) -> BuildError:
    free = shutil.disk_usage(path.parent if path.parent.exists() else Path.cwd()).free
    return BuildError(
        f"disk full writing {path} ({free / 1e9:.1f} GB free on its file system) during {what}: "
        f"free space there and rerun the same command; {resume}"
    )


def _well_formed(block: bytes) -> bool:
    """Every line is ``a\tb\tc\t.`` with fields neither empty nor edged with blanks (so none is
    blank): counted in C, no line looked at."""
    lines = block.count(b"\n")
    return (
        block.count(b"\t") == 3 * lines
        and block.count(b"\t.\n") == lines
        and not any(edge in block for edge in (b"\t\t", b"\n\t", b"\t ", b" \t", b"\n "))
        and not block.startswith((b"\t", b" "))
    )


def _malformed(text: bytes) -> bool:
    """Whether the script's test rejects a non-blank line without trailing blanks."""
    if text[:1] in (b"#", b"@"):
        return False
    parts = text.split(b"\t")
    return not text.endswith(b".") or len(parts) != 4 or any(not p.strip() for p in parts[:3])


@dataclass(frozen=True)
class Sorted:
    """One block filtered: its kept lines (a gzip member when chunks are gzip) and its counts."""

    data: bytes
    size: int  # uncompressed bytes of the block
    rows: int
    kept: int
    bad: list[int]  # malformed lines, numbered from 1 within the block
    blank: int


def sort_block(block: bytes, rule: str, gz: bool) -> Sorted:
    """Filter one block (in this process or a worker): every line kept, dropped or malformed."""
    keep = _KEEP[rule].match
    rows = block.split(b"\n")
    rows.pop()  # the block ends with a newline
    bad: list[int] = []
    blank = 0
    if _well_formed(block):
        kept = [row for row in rows if keep(row)]
    else:  # one line at a time, as the script does (trailing blanks stripped)
        kept = []
        for number, row in enumerate(rows, start=1):
            row = row.rstrip()
            if keep(row):
                kept.append(row)
            elif not row:
                blank += 1
            elif _malformed(row):
                bad.append(number)
    data = b"\n".join(kept) + b"\n" if kept else b""
    if gz and data:
        deflate = zlib.compressobj(1, zlib.DEFLATED, 31)  # one gzip member per block: a chunk is their sequence
        data = deflate.compress(data) + deflate.flush()
    return Sorted(data, len(block), len(rows), len(kept), bad, blank)


def _sorted_blocks(
    items: Iterator[tuple[bytes, int]], rule: str, gz: bool, workers: int
) -> Iterator[tuple[Optional[Sorted], int]]:
    """Each block sorted, in order, with the compressed position after it; ``workers`` > 1
    sorts that many blocks at once in worker processes (at most twice as many in flight)."""
    if workers <= 1:
        for block, raw_pos in items:
            yield (sort_block(block, rule, gz) if block else None), raw_pos
        return
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    window: deque[tuple[Optional[Future], int]] = deque()
    try:
        for block, raw_pos in items:
            window.append((pool.submit(sort_block, block, rule, gz) if block else None, raw_pos))
            if len(window) >= 2 * workers:
                future, pos = window.popleft()
                yield (future.result() if future else None), pos
        while window:
            future, pos = window.popleft()
            yield (future.result() if future else None), pos
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class _Chunk:
    """One chunk being written: ``name.tmp`` until complete, then renamed."""

    def __init__(self, path: Path):
        self.path, self.tmp = path, path.with_name(path.name + ".tmp")
        self.file = open_chunk(self.tmp)
        self.kept = 0

    def write(self, data: bytes) -> None:
        self.file.write(data)

    def finish(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        self.file.close()
        self.tmp.unlink(missing_ok=True)


def cpu_seconds() -> float:
    """CPU time of this process (all its threads) and of its children that have ended."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def open_chunk(path: Path):
    """The seam a test replaces to make the disk fill up."""
    return open(path, "wb")


def chunk_name(number: int, chunk_format: str) -> str:
    return f"part-{number:06d}.nt" + (".gz" if chunk_format == "gz" else "")


def filter_dump(
    dump: Path,
    out: Path,
    state: FilterState,
    state_path: Path,
    max_bad: int,
    progress: Progress = lambda _: None,
    workers: int = 1,
) -> FilterState:
    """Filter ``dump`` into chunks under ``out`` from where ``state`` left off; returns it done."""
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic() - state.seconds
    cpu_started = cpu_seconds() - state.cpu_seconds
    offset = state.chunks[-1]["offset"] if state.chunks else 0
    lines, counts = state.lines, [state.kept, state.dropped, state.malformed]
    chunk: Optional[_Chunk] = None
    size = min(BLOCK, max(MIN_BLOCK, state.chunk_lines * BYTES_PER_LINE))
    try:
        for done, raw_pos in _sorted_blocks(
            prefetched(blocks(dump, offset, size)), state.rule, state.chunk_format == "gz", workers
        ):
            if done is None:  # resuming: the finished part is being skipped
                progress(raw_pos)
                continue
            if chunk is None:
                chunk = _Chunk(out / chunk_name(len(state.chunks) + 1, state.chunk_format))
            bad = [lines + number for number in done.bad]
            counts[0] += done.kept
            counts[1] += done.rows - done.kept - len(bad) - done.blank
            counts[2] += len(bad)
            state.first_malformed.extend(bad[: FIRST_BAD - len(state.first_malformed)])
            if counts[2] > max_bad:
                raise BuildError(
                    f"{dump}: {counts[2]} lines are not triples (first at lines "
                    f"{', '.join(map(str, state.first_malformed))}), more than --max-bad {max_bad}: is "
                    f"this the Freebase RDF dump? If so, rerun with a higher --max-bad (the filter "
                    f"resumes after its {len(state.chunks)} finished chunks)"
                )
            lines += done.rows
            offset += done.size
            if done.data:
                chunk.write(done.data)
                chunk.kept += done.kept
            if chunk.kept >= state.chunk_lines:
                state.cpu_seconds = cpu_seconds() - cpu_started
                _close(chunk, state, state_path, lines, offset, raw_pos, counts, started)
                chunk = None
            progress(raw_pos)
        if chunk is not None and chunk.kept:
            _close(chunk, state, state_path, lines, offset, dump.stat().st_size, counts, started)
            chunk = None
    except OSError as exc:
        if not _disk_full(exc):
            raise
        raise disk_full_error(
            chunk.tmp if chunk else out,
            "the filter",
            f"the filter resumes after its {len(state.chunks)} finished chunks",
        ) from exc
    finally:
        if chunk is not None:
            chunk.discard()
    state.lines, state.kept, state.dropped, state.malformed = lines, *counts
    state.done, state.seconds, state.cpu_seconds = True, time.monotonic() - started, cpu_seconds() - cpu_started
    state.save(state_path)
    return state


def _close(
    chunk: _Chunk,
    state: FilterState,
    state_path: Path,
    lines: int,
    offset: int,
    raw_pos: int,
    counts: list[int],
    started: float,
) -> None:
    chunk.finish()
    state.chunks.append(
        {"name": chunk.path.name, "kept": chunk.kept, "lines": lines, "offset": offset, "raw_offset": raw_pos}
    )
    state.lines, state.kept, state.dropped, state.malformed = lines, *counts
    state.seconds = time.monotonic() - started
    state.save(state_path)
