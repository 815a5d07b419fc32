"""``python -m kgx.kg freebase build``: the Freebase dump to a served Virtuoso in one command.

Filter the gzip dump into chunks (:mod:`kgx.kg.pipelines.dump_filter`), then bulk-load the chunks into a
persistent Virtuoso database in the same directory (:mod:`kgx.kg.virtuoso.db`), ``loaders``
files at a time, one ``rdf_loader_run()`` each, with a checkpoint at least every
``checkpoint_every_s`` seconds and at the end. Every step resumes: rerun the same command after
an interruption, a full disk or a fix, and finished work is not redone. ``DIR`` holds:

* ``chunks/part-NNNNNN.nt.gz`` and ``filter.json`` (the filter's record),
* ``virtuoso.ini``, ``virtuoso.db`` and its companions (the database),
* ``build.json`` once every chunk is loaded: the graph, the triple count, the figures.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

from kgx.kg.pipelines.dump_filter import RULES, BuildError, FilterState, atomic_write, check_gzip, filter_dump
from kgx.kg.pipelines.progress_bar import PhaseBar, count, gigabytes
from kgx.kg.virtuoso import DEFAULT_GRAPH
from kgx.kg.virtuoso.db import MAX_EXECUTION_S, MAX_ROWS, VirtuosoDB, database_bytes, size_for
from kgx.kg.virtuoso.process import binary

LOADABLE = (".nt", ".nt.gz", ".ttl", ".ttl.gz")
# Free bytes wanted per byte of chunk about to load: the database grows by about 3x the gzip chunk
# (measured: 0.19 GB for 0.07 GB of chunks), a third of the plain one.
SPACE_FACTOR = {"gz": 3.0, "nt": 0.5}
MIN_FREE = 256 << 20


@dataclass
class BuildOptions:
    db: Path
    dump: Optional[Path] = None
    filtered: Optional[Path] = None
    rule: str = "english"
    chunk_lines: int = 10_000_000
    chunk_format: str = "gz"
    loaders: int = max(1, (os.cpu_count() or 2) // 2)
    workers: int = 1  # filter processes (decompression has a thread of its own besides)
    memory_gb: Optional[float] = None
    max_bad: int = 1000
    graph: str = DEFAULT_GRAPH
    checkpoint_every_s: float = 600.0
    max_rows: int = MAX_ROWS
    max_execution_s: int = MAX_EXECUTION_S


@dataclass
class BuildReport:
    chunks: int = 0
    already_loaded: int = 0
    loaded_now: int = 0
    triples: int = 0
    triples_loaded_now: int = 0  # distinct triples this run added
    filter: dict = field(default_factory=dict)
    filter_s: float = 0.0
    filter_mb_per_s: float = 0.0  # uncompressed dump bytes
    load_s: float = 0.0
    filter_cpu_s: float = 0.0
    load_cpu_s: float = 0.0  # the server's
    database_gb: float = 0.0
    done: bool = False


def _filtered_files(path: Path) -> list[Path]:
    files = sorted(p for p in path.iterdir() if p.name.endswith(LOADABLE)) if path.is_dir() else [path]
    if not path.exists() or not files:
        raise BuildError(
            f"no N-Triples at {path}: --filtered takes a file or a directory of {', '.join(LOADABLE)} files"
        )
    for f in files:
        if not f.name.endswith(LOADABLE):
            raise BuildError(
                f"{f}: Virtuoso's loader picks the parser by the name's ending; name or link it as "
                f"{' or '.join(LOADABLE)}"
            )
    return [f.resolve() for f in files]


def _filter(opts: BuildOptions, say: Callable[[str], None], report: BuildReport) -> list[Path]:
    state_path, chunk_dir = opts.db / "filter.json", opts.db / "chunks"
    dump = opts.dump.resolve()
    fresh = FilterState(
        str(dump), dump.stat().st_size if dump.is_file() else 0, opts.rule, opts.chunk_lines, opts.chunk_format
    )
    state = FilterState(**json.loads(state_path.read_text())) if state_path.is_file() else fresh
    inputs = ("dump_bytes", "rule", "chunk_lines", "chunk_format")[0 if dump.is_file() else 1 :]
    if any(getattr(state, k) != getattr(fresh, k) for k in inputs):
        was = ", ".join(f"{k}={getattr(state, k)}" for k in inputs)
        raise BuildError(
            f"{opts.db} holds chunks filtered from {state.dump} ({was}): give the same dump and "
            f"options to resume, or another --db for a new build"
        )
    if state.done:
        say(f"filter: done before ({len(state.chunks)} chunks, kept={state.kept:,}), not redone")
    else:
        check_gzip(dump)
        if state.chunks:
            say(f"filter: resuming after {len(state.chunks)} finished chunks (line {state.lines:,})")
        bar = PhaseBar(
            "[1/2] filter",
            state.dump_bytes,
            gigabytes,
            "MB/s",
            1e6,
            start=state.chunks[-1]["raw_offset"] if state.chunks else 0,
        )
        try:
            state = filter_dump(dump, chunk_dir, state, state_path, opts.max_bad, bar.update, opts.workers)
        finally:
            bar.close()
    report.filter = {k: getattr(state, k) for k in ("lines", "kept", "dropped", "malformed", "first_malformed")}
    report.filter_s, report.filter_cpu_s = state.seconds, state.cpu_seconds
    report.filter_mb_per_s = state.chunks[-1]["offset"] / 1e6 / state.seconds if state.chunks and state.seconds else 0
    if not state.chunks:
        raise BuildError(f"the filter kept no triple of {dump} ({state.lines:,} lines): is it the Freebase RDF dump?")
    return [chunk_dir / c["name"] for c in state.chunks]


def _kept_lines(opts: BuildOptions) -> dict[str, int]:
    state_path = opts.db / "filter.json"
    if opts.filtered or not state_path.is_file():
        return {}
    return {c["name"]: c["kept"] for c in json.loads(state_path.read_text())["chunks"]}


def _load(opts: BuildOptions, files: list[Path], say: Callable[[str], None], report: BuildReport) -> None:
    sizing = size_for(opts.memory_gb, opts.max_rows, opts.max_execution_s)
    say(sizing.describe())
    with VirtuosoDB(opts.db, sizing, sorted({f.parent for f in files})) as db:
        before = db.triples(opts.graph)
        record = db.load_list(files)
        interrupted = [f for f, (state, error) in record.items() if error or state != 2]
        db.forget(interrupted)
        done = {f for f, (state, error) in record.items() if state == 2 and not error}
        pending = [f for f in files if f not in done]
        report.already_loaded = len(done)
        say(
            f"load: {len(done)} of {len(files)} chunks already loaded (DB.DBA.load_list), {len(pending)} to load "
            f"with {opts.loaders} parallel loaders"
            + (f"; {len(interrupted)} interrupted or failed loads redone" if interrupted else "")
        )
        lines = _kept_lines(opts)
        sizes = {f: f.stat().st_size for f in files}
        loaded_lines = sum(lines.get(f.name, 0) for f in done)
        bar = PhaseBar(
            "[2/2] load",
            sum(sizes.values()),
            gigabytes,
            "MB/s (chunk bytes)",
            1e6,
            start=sum(sizes[f] for f in done),
            extra=lambda: f"chunks {len(done)}/{len(files)} triples {count(loaded_lines)}",
        )
        started, last_checkpoint, cpu = time.monotonic(), time.monotonic(), db.cpu_seconds()
        try:
            for at in range(0, len(pending), opts.loaders):
                batch = pending[at : at + opts.loaders]
                db.ensure_space(
                    int(
                        max(
                            MIN_FREE,
                            sum(SPACE_FACTOR["gz" if f.name.endswith(".gz") else "nt"] * sizes[f] for f in batch),
                        )
                    )
                )
                db.load(batch, opts.graph, opts.loaders)
                failed = {f: error for f, (state, error) in db.load_list(batch).items() if error or state != 2}
                if failed:
                    raise BuildError(
                        "Virtuoso could not load "
                        + "; ".join(f"{f}: {e or 'not loaded'}" for f, e in failed.items())
                        + ". Fix or remove the line the error names, then rerun the same command: failed "
                        "chunks are loaded again, loaded ones are not"
                    )
                if time.monotonic() - last_checkpoint >= opts.checkpoint_every_s:
                    db.checkpoint()
                    last_checkpoint = time.monotonic()
                done.update(batch)
                loaded_lines += sum(lines.get(f.name, 0) for f in batch)
                report.loaded_now += len(batch)
                bar.update(sum(sizes[f] for f in done))
        finally:
            bar.close()
        db.checkpoint()
        report.load_s, report.load_cpu_s = time.monotonic() - started, db.cpu_seconds() - cpu
        report.triples = db.triples(opts.graph)
        report.triples_loaded_now = report.triples - before
    report.database_gb = database_bytes(opts.db) / 1e9


def build_freebase(opts: BuildOptions, say: Callable[[str], None] = print) -> BuildReport:
    """Filter (or take ``--filtered``) and load; resumes whatever an earlier run finished."""
    if opts.rule not in RULES:
        raise BuildError(f"--rule must be one of {', '.join(RULES)}, not {opts.rule!r}")
    if (opts.dump is None) == (opts.filtered is None):
        raise BuildError("give --dump freebase-rdf-latest.gz, or --filtered FILE_OR_DIR to load filtered N-Triples")
    binary("virtuoso-t"), binary("isql-vt")  # before hours of filtering, not after
    opts.db = opts.db.resolve()
    opts.db.mkdir(parents=True, exist_ok=True)
    report = BuildReport()
    files = _filtered_files(opts.filtered) if opts.filtered else _filter(opts, say, report)
    report.chunks = len(files)
    _load(opts, files, say, report)
    report.done = True
    atomic_write(opts.db / "build.json", json.dumps({"graph": opts.graph, **asdict(report)}, indent=1))
    return report
