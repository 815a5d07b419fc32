"""RoG's per-question subgraph files: which parquet files a path names, and their rows in batches.

RoG, GNN-RAG, SubgraphRAG and G-Retriever evaluate WebQSP and CWQ on per-question Freebase
subgraphs, distributed as the Hugging Face datasets ``rmanluo/RoG-webqsp`` and ``rmanluo/RoG-cwq``:
parquet files with the columns of ``COLUMNS`` (``graph`` is a list of ``[head, relation, tail]``
strings per question). The hub stores each split as shards, ``data/test-00000-of-00002.parquet``;
a path here is one parquet file or a folder of such shards, of which a split's are taken in name
order, so a download used as it is and a single file of one's own read the same way.

Both the dataset loader (``kgx.datasets.rog``: questions, answers, topic names) and the KG build
(``kgx.kg.pipelines.rog_subgraphs``: the graphs) read them through here, each only the columns it needs:
the graphs, most of a file's bytes, are parsed once, by the build, whose store is then cached.
Neither owns the format, so the reader stands on the floor below both: the questions of a RoG file
are read without the KG's build code, and the KG build needs no dataset loader.
A file polars cannot read stops either with one line naming it; bytes that are not UTF-8 in a text
column (polars names neither row nor column) are looked up again to name the row and column.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from kgx.core.sources import SourceError

COLUMNS = ("id", "question", "answer", "q_entity", "a_entity", "graph", "choices")
BATCH_ROWS = 64  # questions per batch: a few hundred thousand triples at most in memory


def rog_files(path: Path, split: Optional[str]) -> list[Path]:
    """The parquet files ``path`` names: itself, or the ``<split>-*.parquet`` shards of a folder
    (or of its ``data/`` folder, the hub's layout), sorted by name."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise SourceError(
            f"{path}: no such file or folder; download the RoG parquet files there (see "
            f"docs/guides/data-and-kgs.md, Per-question subgraphs) or fix dataset.path"
        )
    if not split:
        raise SourceError(f"{path} is a folder: name the split whose shards to read, e.g. dataset.split=test")
    for folder in (path, path / "data"):
        shards = sorted(folder.glob(f"{split}-*.parquet"))
        if shards:
            return shards
    found = sorted(p.name for p in path.rglob("*.parquet"))[:5]
    raise SourceError(
        f"{path}: no {split}-*.parquet shards in it or in its data/ folder (parquet files there: "
        f"{', '.join(found) if found else 'none'}); check dataset.split"
    )


def check_columns(files: list[Path], needed: tuple[str, ...]) -> None:
    """Each file must have the ``needed`` columns; the message names the file and what it has."""
    import polars as pl

    for file in files:
        try:
            schema = pl.read_parquet_schema(file)
        except Exception as exc:  # polars raises its own error kinds for a file that is not parquet
            raise SourceError(f"{file}: not a readable parquet file ({type(exc).__name__}: {exc})") from None
        absent = [c for c in needed if c not in schema]
        if absent:
            raise SourceError(
                f"{file}: missing column(s) {', '.join(absent)}; a RoG file has {', '.join(COLUMNS)} "
                f"(this one has {', '.join(schema) or 'none'})"
            )


def rows(files: list[Path], columns: tuple[str, ...]) -> Iterator[tuple[Path, int, tuple[Any, ...]]]:
    """``(file, row index in the file, values of columns)`` of every row, a batch at a time."""
    import polars as pl

    check_columns(files, columns)
    for file in files:
        index = 0
        try:
            for batch in pl.scan_parquet(file).select(columns).collect_batches(chunk_size=BATCH_ROWS):
                for values in batch.iter_rows():
                    yield file, index, values
                    index += 1
        except pl.exceptions.PolarsError as exc:
            if "utf-8" in str(exc).lower():
                raise SourceError(not_utf8(file, columns)) from None
            raise SourceError(f"{file}: unreadable from row {index} on ({type(exc).__name__}: {exc})") from None


def row_count(files: list[Path]) -> int:
    """Rows of all ``files``, from their metadata (no column is read)."""
    import polars as pl

    return sum(pl.scan_parquet(file).select(pl.len()).collect().item() for file in files)


def not_utf8(file: Path, columns: tuple[str, ...]) -> str:
    """Where ``file`` holds text that is not UTF-8: the first row and column, the question's id
    and the bad bytes. Polars refuses such a file whole; pyarrow (which comes with MLflow) reads
    text columns as bytes, so each value can be tried. Without pyarrow, the file alone is named."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return f"{file}: a text column holds bytes that are not UTF-8; re-save its text as UTF-8"
    reader = pq.ParquetFile(file)
    start = 0
    for batch in reader.iter_batches(batch_size=BATCH_ROWS, columns=list(columns)):
        for column in columns:
            bad = _first_bad(batch.column(column))
            if bad is not None:
                row, value = bad
                qid = None if column == "id" else _id(batch, row)
                which = f" (question {qid})" if qid else ""
                return (
                    f"{file}: row {start + row}{which}: column {column} holds bytes that are not UTF-8 "
                    f"({value[:80]!r}); re-save the file with its text as UTF-8"
                )
        start += batch.num_rows
    return f"{file}: a text column holds bytes that are not UTF-8; re-save its text as UTF-8"


def _first_bad(column: Any) -> Optional[tuple[int, bytes]]:
    """(row in the batch, bad bytes) of the first value of ``column`` (text, or lists of text)
    that is not UTF-8; None when all are. A column that validates (arrow checks UTF-8 in C++) is
    not walked in Python."""
    import pyarrow as pa

    try:
        column.validate(full=True)
        return None
    except pa.ArrowInvalid:
        pass
    for row, value in enumerate(column.cast(_as_bytes(column.type)).to_pylist()):
        bad = _bad_bytes(value)
        if bad is not None:
            return row, bad
    return None


def _as_bytes(kind: Any) -> Any:
    """The arrow type ``kind`` with every text type in it made binary (the same buffers, unchecked)."""
    import pyarrow as pa

    if pa.types.is_string(kind):
        return pa.binary()
    if pa.types.is_large_string(kind):
        return pa.large_binary()
    if pa.types.is_list(kind):
        return pa.list_(_as_bytes(kind.value_type))
    if pa.types.is_large_list(kind):
        return pa.large_list(_as_bytes(kind.value_type))
    return kind


def _bad_bytes(value: Any) -> Optional[bytes]:
    """The first bytes value in ``value`` (bytes, or lists of them) that is not UTF-8."""
    if isinstance(value, bytes):
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return value
        return None
    if isinstance(value, list):
        return next((bad for item in value if (bad := _bad_bytes(item)) is not None), None)
    return None


def _id(batch: Any, row: int) -> Optional[str]:
    """The question id of ``row``, read as bytes: the id may hold bad bytes too."""
    if "id" not in batch.schema.names:
        return None
    value = batch.column("id").cast(_as_bytes(batch.schema.field("id").type))[row].as_py()
    return value.decode("utf-8", "replace") if isinstance(value, bytes) and value else None
