"""The gzip dump read as uncompressed blocks that end at a line end, in a thread of its own.

``zlib`` releases the GIL while it inflates, so decompression runs on another core than the
filter. Several gzip members are one stream, as with ``zcat``. A dump that is not gzip, is
corrupt or ends early stops with its name, the byte, and what to do.
"""

from __future__ import annotations

import queue
import threading
import zlib
from pathlib import Path
from typing import Iterator

BLOCK = 8 << 20  # uncompressed bytes filtered at a time, at most
READ = 1 << 20  # compressed bytes read at a time


class BuildError(RuntimeError):
    """The build cannot go on; the message names the file or line and what to do. Work already
    finished (chunks, loaded files) stays, and the rerun resumes."""


def check_gzip(dump: Path) -> None:
    if not dump.is_file():
        raise BuildError(
            f"no dump at {dump}: download freebase-rdf-latest.gz (or give filtered N-Triples with --filtered)"
        )
    with open(dump, "rb") as raw:
        head = raw.read(2)
    if head != b"\x1f\x8b":
        raise BuildError(
            f"{dump} is not gzip (it starts with {head!r}, gzip with b'\\x1f\\x8b'): give the dump as "
            f"downloaded (freebase-rdf-latest.gz), or already-filtered N-Triples with --filtered"
        )


def blocks(dump: Path, skip: int, block: int = BLOCK) -> Iterator[tuple[bytes, int]]:
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
                raise BuildError(
                    f"{dump} is corrupt near compressed byte {raw_pos:,} ({exc}): download it again; "
                    f"the chunks filtered so far are kept"
                ) from exc
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
                    raise BuildError(
                        f"{dump} ends early at byte {raw_pos:,} (an interrupted download?): download "
                        f"it again; the chunks filtered so far are kept"
                    )
                if pending:
                    yield pending if pending.endswith(b"\n") else pending + b"\n", raw_pos
                return


def prefetched(items: Iterator, depth: int = 4) -> Iterator:
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
