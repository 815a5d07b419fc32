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
  ``FilterEnglishTriplets.py``, the "125 GB" filtered Freebase of ToG, GoG and PoG): the subject
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
what came before) and rewrites a half-written one, and a finished filter is never redone.
"""
from __future__ import annotations

import errno
import json
import os
import queue
import re
import shutil
import threading
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

BLOCK = 8 << 20  # uncompressed bytes filtered at a time, at most
MIN_BLOCK = 64 << 10
BYTES_PER_LINE = 16  # a block of chunk_lines * this: small chunks (tests, trials) are not one block each
READ = 1 << 20  # compressed bytes read at a time
FIRST_BAD = 5  # malformed line numbers reported
RULES = ("english", "tog")
_NS = rb"<http://rdf\.freebase\.com/ns/"
_KEEP = {
    "english": re.compile(_NS + rb"[^>\t\n]+>\t" + _NS + rb"[^>\t\n]+>\t(?:" + _NS + rb"[^>\t\n]*>|"
                          rb'"[^\t\n]*(?:"|"@[eE][nN](?:-[A-Za-z0-9]+)*|"\^\^<[^>\t\n]+>))\t\.$'),
    "tog": re.compile(_NS + rb"[mg]\.[^>]+>\t" + _NS + rb"[^>]+>\t(?:['\"](?!/).+['\"](?:@en)?\t\.|"
                      + _NS + rb"[^>]+>\t.|.+<http://www\.w3\.org/2001/XMLSchema#\w+>\t.)$"),
}
Progress = Callable[[int], None]  # compressed bytes of the dump read so far


class BuildError(RuntimeError):
    """The build cannot go on; the message names the file or line and what to do. Work already
    finished (chunks, loaded files) stays, and the rerun resumes."""


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
    return BuildError(f"disk full writing {path} ({free / 1e9:.1f} GB free on its file system) during {what}: "
                      f"free space there and rerun the same command; {resume}")


def check_gzip(dump: Path) -> None:
    if not dump.is_file():
        raise BuildError(f"no dump at {dump}: download freebase-rdf-latest.gz (or give filtered N-Triples "
                         f"with --filtered)")
    with open(dump, "rb") as raw:
        head = raw.read(2)
    if head != b"\x1f\x8b":
        raise BuildError(f"{dump} is not gzip (it starts with {head!r}, gzip with b'\\x1f\\x8b'): give the dump as "
                         f"downloaded (freebase-rdf-latest.gz), or already-filtered N-Triples with --filtered")


def _blocks(dump: Path, skip: int, block: int = BLOCK) -> Iterator[tuple[bytes, int]]:
    """Uncompressed blocks ending at a line end, after the first ``skip`` bytes, with the
    compressed bytes read so far; several gzip members are one stream, as with ``zcat``."""
    inflate, pending, raw_pos = zlib.decompressobj(31), b"", 0
    with open(dump, "rb") as raw:
        while True:
            piece = raw.read(READ)
            raw_pos += len(piece)
            try:
                data = inflate.decompress(piece) if piece else inflate.flush()
                while inflate.eof and inflate.unused_data:
                    rest, inflate = inflate.unused_data, zlib.decompressobj(31)
                    data += inflate.decompress(rest)
            except zlib.error as exc:
                raise BuildError(f"{dump} is corrupt near compressed byte {raw_pos:,} ({exc}): download it again; "
                                 f"the chunks filtered so far are kept") from exc
            if skip and not piece:
                raise BuildError(f"{dump} is shorter than when its filter began: give the same dump, or a new --db")
            if skip:
                cut = min(skip, len(data))
                data, skip = data[cut:], skip - cut
                if skip:
                    yield b"", raw_pos  # resuming: progress while the finished part is skipped
                    continue
            pending += data
            start = 0
            while len(pending) - start >= block:
                end = pending.find(b"\n", start + block - 1) + 1
                if not end:
                    break
                yield pending[start:end], raw_pos
                start = end
            pending = pending[start:]
            if not piece:
                if not inflate.eof:
                    raise BuildError(f"{dump} ends early at byte {raw_pos:,} (an interrupted download?): download "
                                     f"it again; the chunks filtered so far are kept")
                if pending:
                    yield pending if pending.endswith(b"\n") else pending + b"\n", raw_pos
                return


def _prefetched(items: Iterator, depth: int = 4) -> Iterator:
    """``items`` produced in a thread (zlib releases the GIL: decompression runs on another core)."""
    box: queue.Queue = queue.Queue(depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        box.put(("item", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            box.put(("end", None))
        except BaseException as exc:  # handed to the consumer, raised there
            box.put(("error", exc))

    worker = threading.Thread(target=produce, daemon=True)
    worker.start()
    try:
        while True:
            kind, item = box.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stop.set()


def _well_formed(block: bytes) -> bool:
    """Every line is ``a\\tb\\tc\\t.`` with non-empty fields: counted in C, no line looked at."""
    lines = block.count(b"\n")
    return (block.count(b"\t") == 3 * lines and block.count(b"\t.\n") == lines and b"\t\t" not in block
            and b"\n\t" not in block and not block.startswith(b"\t"))


def _malformed(text: bytes) -> bool:
    """Whether the script's test rejects a non-blank line without trailing blanks."""
    if text[:1] in (b"#", b"@"):
        return False
    parts = text.split(b"\t")
    return not text.endswith(b".") or len(parts) != 4 or any(not p.strip() for p in parts[:3])


def _sorted_out(rows: list[bytes], keep: Callable, lines: int) -> tuple[list[bytes], list[int], int]:
    """(kept lines, malformed line numbers, blank lines) of a block not every line of which is
    a well-formed triple: one line at a time, as the script does (trailing blanks stripped)."""
    kept, bad, blank = [], [], 0
    for number, row in enumerate(rows, start=lines + 1):
        row = row.rstrip()
        if keep(row):
            kept.append(row)
        elif not row:
            blank += 1
        elif _malformed(row):
            bad.append(number)
    return kept, bad, blank


class _Chunk:
    """One chunk being written: ``name.tmp`` until complete, then renamed."""

    def __init__(self, path: Path, gz: bool):
        self.path, self.tmp = path, path.with_name(path.name + ".tmp")
        self.file = open_chunk(self.tmp)
        self.deflate = zlib.compressobj(1, zlib.DEFLATED, 31) if gz else None
        self.kept = 0

    def write(self, data: bytes) -> None:
        self.file.write(self.deflate.compress(data) if self.deflate else data)

    def finish(self) -> None:
        if self.deflate:
            self.file.write(self.deflate.flush())
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        self.file.close()
        self.tmp.unlink(missing_ok=True)


def open_chunk(path: Path):
    """The seam a test replaces to make the disk fill up."""
    return open(path, "wb")


def chunk_name(number: int, chunk_format: str) -> str:
    return f"part-{number:06d}.nt" + (".gz" if chunk_format == "gz" else "")


def filter_dump(dump: Path, out: Path, state: FilterState, state_path: Path, max_bad: int,
                progress: Progress = lambda _: None) -> FilterState:
    """Filter ``dump`` into chunks under ``out`` from where ``state`` left off; returns it done."""
    keep = _KEEP[state.rule].match
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic() - state.seconds
    offset = state.chunks[-1]["offset"] if state.chunks else 0
    lines, counts = state.lines, [state.kept, state.dropped, state.malformed]
    chunk: Optional[_Chunk] = None
    try:
        size = min(BLOCK, max(MIN_BLOCK, state.chunk_lines * BYTES_PER_LINE))
        for block, raw_pos in _prefetched(_blocks(dump, offset, size)):
            if not block:
                progress(raw_pos)
                continue
            if chunk is None:
                chunk = _Chunk(out / chunk_name(len(state.chunks) + 1, state.chunk_format), state.chunk_format == "gz")
            rows = block.split(b"\n")
            rows.pop()  # the block ends with a newline
            if _well_formed(block):
                kept, bad, blank = [row for row in rows if keep(row)], [], 0
            else:
                kept, bad, blank = _sorted_out(rows, keep, lines)
            counts[0] += len(kept)
            counts[1] += len(rows) - len(kept) - len(bad) - blank
            counts[2] += len(bad)
            state.first_malformed.extend(bad[:FIRST_BAD - len(state.first_malformed)])
            if counts[2] > max_bad:
                raise BuildError(f"{dump}: {counts[2]} lines are not triples (first at lines "
                                 f"{', '.join(map(str, state.first_malformed))}), more than --max-bad {max_bad}: is "
                                 f"this the Freebase RDF dump? If so, rerun with a higher --max-bad (the filter "
                                 f"resumes after its {len(state.chunks)} finished chunks)")
            lines += len(rows)
            offset += len(block)
            if kept:
                chunk.write(b"\n".join(kept) + b"\n")
                chunk.kept += len(kept)
            if chunk.kept >= state.chunk_lines:
                _close(chunk, state, state_path, lines, offset, raw_pos, counts, started)
                chunk = None
            progress(raw_pos)
        if chunk is not None and chunk.kept:
            _close(chunk, state, state_path, lines, offset, dump.stat().st_size, counts, started)
            chunk = None
    except OSError as exc:
        if not _disk_full(exc):
            raise
        raise disk_full_error(chunk.tmp if chunk else out, "the filter",
                              f"the filter resumes after its {len(state.chunks)} finished chunks") from exc
    finally:
        if chunk is not None:
            chunk.discard()
    state.lines, state.kept, state.dropped, state.malformed = lines, *counts
    state.done, state.seconds = True, time.monotonic() - started
    state.save(state_path)
    return state


def _close(chunk: _Chunk, state: FilterState, state_path: Path, lines: int, offset: int, raw_pos: int,
           counts: list[int], started: float) -> None:
    chunk.finish()
    state.chunks.append({"name": chunk.path.name, "kept": chunk.kept, "lines": lines, "offset": offset,
                         "raw_offset": raw_pos})
    state.lines, state.kept, state.dropped, state.malformed = lines, *counts
    state.seconds = time.monotonic() - started
    state.save(state_path)
