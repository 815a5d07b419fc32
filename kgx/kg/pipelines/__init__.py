"""Building an embedded store: RDF as is, or name-level triple files turned into Freebase-shaped RDF.

Name-level KGs (MetaQA's ``kb.txt``, PathQuestion's KBs, the replay TSVs) name entities by
their surface strings. They become the same RDF shape as Freebase, so that every method and
query runs unchanged on them: each distinct name is one node ``ns:<name_id(name)>`` carrying
``type.object.name "name"@en``; a name that is already a Freebase mid (``m.05kh7j4``) is that
node itself and stays unnamed, like a CVT node in Freebase; relations become dotted ids.
Names are kept exactly as written (PathQuestion's ``united_kingdom`` too), because the
datasets' questions and answers spell them that way. The ``custom`` format takes a KB of one's
own (head<TAB>relation<TAB>tail) with whatever relation names it uses; a KB that writes every
edge twice (``r`` and ``r_inverse``) can fold the inverse lines back with ``drop_inverse``,
because every method already walks each edge both ways.

A build is all or nothing: a malformed line fails it with ``file:line`` before anything is
loaded (or, with ``skip_bad``, is dropped and counted), and the store is loaded in a temp
directory that only replaces ``store_dir`` once complete. Temp directories that killed builds
left beside it are removed when a store is next built or opened there (``kgx.kg.pipelines.leftovers``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pyoxigraph as ox

from kgx.core.faults import DiskFull, disk_full
from kgx.core.sources import SourceError
from kgx.kg.name_level import NAME_LEVEL_FORMATS, BadLine, NameLevel
from kgx.kg.pipelines import leftovers as leftovers

RDF_FORMATS = {"nt": ox.RdfFormat.N_TRIPLES, "ttl": ox.RdfFormat.TURTLE}
FORMATS = (*RDF_FORMATS, *NAME_LEVEL_FORMATS)
MANIFEST = "kgx-build.json"
# Part of every fingerprint: changing how sources become triples (ids, relation tables) must
# bump it, so that stores built by an older kgx are rebuilt rather than silently reused.
CONVERSION = "kgx-build/1"


def _check_nt_line(line: bytes) -> None:
    """N-Triples is one triple per line, so a line can be judged alone; the parser's own
    recovery after an error may swallow the next good line, which skip_bad must not do."""
    try:
        for _ in ox.parse(input=line, format=ox.RdfFormat.N_TRIPLES):
            pass
    except SyntaxError as exc:
        raise BadLine(exc.msg) from None


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as f:
        yield from enumerate(f, start=1)


@dataclass(frozen=True)
class Build:
    store: Path
    triples: int  # distinct triples in the store, names included
    skipped: int  # malformed lines dropped under skip_bad
    seconds: float  # of the build that made the store (an earlier one when reused)
    reused: bool  # an up-to-date store was already there
    first_skipped: str = ""  # "file:line: reason" of the first dropped line
    folded: int = 0  # inverse lines written as their forward edge (drop_inverse)


def fingerprint(sources: list[Path], fmt: str, skip_bad: bool, drop_inverse: str | None = None) -> str:
    """What a store depends on: the sources' bytes in order, the format, the conversion
    version, skip_bad (a store missing bad lines must not stand in for a strict build) and the
    inverse suffix folded (only when set, so stores built before it existed stay valid)."""
    folding = f"{drop_inverse}\0" if drop_inverse else ""
    h = hashlib.sha256(f"{CONVERSION}\0{fmt}\0{int(skip_bad)}\0{folding}".encode())
    for source in sources:
        h.update(f"{source.stat().st_size}\0".encode())
        with source.open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def read_manifest(store_dir: Path) -> dict:
    try:
        return json.loads((store_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


def _from_manifest(store_dir: Path, manifest: dict) -> Build:
    return Build(
        store_dir,
        manifest["triples"],
        manifest["skipped"],
        manifest["seconds"],
        True,
        manifest.get("first_skipped", ""),
        manifest.get("folded", 0),
    )


def check_sources(sources: list[Path], fmt: str, skip_bad: bool = False, drop_inverse: str | None = None) -> None:
    """Fail on inputs no build can use, naming them, before any file is read."""
    if fmt not in FORMATS:
        raise SourceError(f"unknown KG format {fmt!r}; use one of {', '.join(FORMATS)}")
    if not sources:
        raise SourceError("no KG source files given")
    if skip_bad and fmt == "ttl":
        raise SourceError(
            "skip_bad needs a line-based format (nt, tsv, metaqa, pathquestion, custom); "
            "Turtle statements may span lines"
        )
    if drop_inverse and fmt not in NAME_LEVEL_FORMATS:
        raise SourceError(f"kg.drop_inverse needs a name-level format ({', '.join(NAME_LEVEL_FORMATS)}), not {fmt}")
    for source in sources:
        if not Path(source).is_file():
            raise FileNotFoundError(f"KG source file not found: {source}")


def build(
    sources: list[Path], fmt: str, store_dir: Path, skip_bad: bool = False, drop_inverse: str | None = None
) -> Build:
    """Load ``sources`` into ``store_dir`` unless a store of the same inputs is already there."""
    sources = [Path(s) for s in sources]
    check_sources(sources, fmt, skip_bad, drop_inverse)
    leftovers.sweep(store_dir.parent)
    digest = fingerprint(sources, fmt, skip_bad, drop_inverse)
    manifest = read_manifest(store_dir)
    if manifest.get("fingerprint") == digest:
        return _from_manifest(store_dir, manifest)

    start = time.perf_counter()
    with workspace(store_dir) as work:
        triples, skipped, first_skipped, folded = _load(sources, fmt, work / "store", skip_bad, drop_inverse)
        seconds = round(time.perf_counter() - start, 3)
        manifest = dict(
            fingerprint=digest,
            format=fmt,
            sources=[str(s) for s in sources],
            triples=triples,
            skipped=skipped,
            first_skipped=first_skipped,
            seconds=seconds,
            folded=folded,
        )
        if not install(work / "store", store_dir, manifest):
            return _from_manifest(store_dir, read_manifest(store_dir))
        return Build(store_dir, triples, skipped, seconds, False, first_skipped, folded)


@contextmanager
def workspace(store_dir: Path) -> Iterator[Path]:
    """A temp directory beside ``store_dir`` (same file system, so a finished store moves in by a
    rename) for a store being built; removed afterwards, whatever happened, and locked meanwhile so
    that no other build takes it for one a kill left (``kgx.kg.pipelines.leftovers``). A disk that fills is
    told as such (RocksDB's OSError has no errno, only its text), naming the store and what to do."""
    store_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{store_dir.name}.", dir=store_dir.parent))
    lock = leftovers.hold(work)
    try:
        yield work
    except OSError as exc:
        if not (disk_full(exc) or "No space left on device" in str(exc)):
            raise
        free = shutil.disk_usage(store_dir.parent).free
        raise DiskFull(
            f"no space left on the device building the KG store {store_dir} ({free / 1e9:.2f} GB free there; "
            f"{exc}); a store already there is kept. Free space, or set kg.store=DIR (or run.cache_dir) on "
            f"another disk, and run the same command"
        ) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
        lock.close()


def _load(
    sources: list[Path], fmt: str, store_dir: Path, skip_bad: bool, drop_inverse: str | None
) -> tuple[int, int, str, int]:
    """Bulk-load a new store; returns (triples, skipped lines, first skipped, folded inverse
    lines). Name-level and filtered N-Triples go through a converted file next to the store
    first, so that every line is judged before anything is loaded."""
    store = ox.Store(str(store_dir))
    if fmt in RDF_FORMATS and not (fmt == "nt" and skip_bad):
        for source in sources:
            try:
                store.bulk_load(path=str(source), format=RDF_FORMATS[fmt])
            except SyntaxError as exc:
                raise SourceError(f"{source}:{exc.lineno}: {exc.msg}") from None
        store.flush()
        return len(store), 0, "", 0
    converted = store_dir.parent / "triples.nt"
    skipped, first_skipped = 0, ""
    with converted.open("wb") as out:
        writer = NameLevel(fmt, out, drop_inverse) if fmt in NAME_LEVEL_FORMATS else None
        for source in sources:
            for lineno, line in _lines(source):
                try:
                    if writer is None:
                        _check_nt_line(line)
                        out.write(line if line.endswith(b"\n") else line + b"\n")
                    else:
                        writer.add(line)
                except BadLine as exc:
                    if not skip_bad:
                        raise SourceError(f"{source}:{lineno}: {exc}") from None
                    skipped += 1
                    first_skipped = first_skipped or f"{source}:{lineno}: {exc}"
    store.bulk_load(path=str(converted), format=ox.RdfFormat.N_TRIPLES)
    store.flush()
    return len(store), skipped, first_skipped, writer.folded if writer else 0


def install(built: Path, store_dir: Path, manifest: dict) -> bool:
    """Write ``manifest`` into the finished store and move it into place; False when a store of
    the same inputs got there first. Parallel runs may build one store at once: the later one
    keeps the earlier one's store rather than deleting a store that may already be in use."""
    (built / MANIFEST).write_text(json.dumps(manifest, indent=1))
    digest = manifest["fingerprint"]
    if read_manifest(store_dir).get("fingerprint") == digest:
        return False
    if store_dir.exists():
        shutil.rmtree(store_dir)
    try:
        built.rename(store_dir)
    except OSError:
        if read_manifest(store_dir).get("fingerprint") != digest:
            raise
        return False
    return True


def build_store(
    sources: list[Path], fmt: str, store_dir: Path, skip_bad: bool = False, drop_inverse: str | None = None
) -> Path:
    """``build`` for callers that only need the store's directory (``open_kg``)."""
    return build(sources, fmt, store_dir, skip_bad, drop_inverse).store
