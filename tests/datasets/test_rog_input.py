"""RoG files with bytes that are not UTF-8 in a text column: the loader and the subgraph build each
stop with one line naming the file, the row, the question and the column, and so does a run."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgx.core.config import DatasetConfig
from kgx.core.sources import SourceError
from kgx.datasets import DataError, load
from kgx.kg.pipelines.rog_subgraphs import build_subgraphs
from tests.datasets.test_rog import TWO, rog_frame
from tests.inprocess import kgx_main

BAD = b"caf\xe9 au lait"  # Latin-1, as a file written by a tool that was not told the encoding has it
TEXT = pa.string()
TYPES = {
    "id": TEXT,
    "question": TEXT,
    "answer": pa.list_(TEXT),
    "q_entity": pa.list_(TEXT),
    "a_entity": pa.list_(TEXT),
    "graph": pa.list_(pa.list_(TEXT)),
    "choices": pa.list_(TEXT),
}


def with_bad_bytes(path: Path, column: str, row: int) -> Path:
    """TWO in RoG's schema at ``path``, the last text of ``column`` in ``row`` replaced by ``BAD``:
    arrow writes the bytes as they are when a column is made as bytes and viewed as text."""
    rows = rog_frame(TWO).to_dicts()
    rows[row][column] = _replace_last(rows[row][column])
    columns = {name: [_encoded(r[name]) for r in rows] for name in TYPES}
    table = pa.table(
        {name: pa.array(values, _bytes(TYPES[name])).view(TYPES[name]) for name, values in columns.items()}
    )
    pq.write_table(table, path)
    return path


def _replace_last(value):
    if isinstance(value, list):
        return [*value[:-1], _replace_last(value[-1])]
    return BAD


def _encoded(value):
    if isinstance(value, list):
        return [_encoded(v) for v in value]
    return value if isinstance(value, bytes) else value.encode()


def _bytes(kind):
    return pa.list_(_bytes(kind.value_type)) if pa.types.is_list(kind) else pa.binary()


@pytest.mark.parametrize("column", ["question", "q_entity", "answer"])
def test_the_loader_names_file_row_question_and_column_of_bytes_that_are_not_utf8(tmp_path, column):
    path = with_bad_bytes(tmp_path / "latin1.parquet", column, 1)
    with pytest.raises(DataError) as info:
        load(DatasetConfig(name="x", loader="rog", path=str(path)))
    assert str(info.value) == (
        f"{path}: row 1 (question qB): column {column} holds bytes that are not UTF-8 "
        f"({BAD!r}); re-save the file with its text as UTF-8"
    )


def test_a_bad_id_is_named_by_its_row(tmp_path):
    path = with_bad_bytes(tmp_path / "latin1.parquet", "id", 0)
    with pytest.raises(DataError, match=rf"^{path}: row 0: column id holds bytes that are not UTF-8 "):
        load(DatasetConfig(name="x", loader="rog", path=str(path)))


def test_the_build_names_the_graph_column_the_loader_does_not_read(tmp_path):
    path = with_bad_bytes(tmp_path / "latin1.parquet", "graph", 1)
    assert [q.id for q in load(DatasetConfig(name="x", loader="rog", path=str(path)))] == ["qA", "qB"]
    with pytest.raises(SourceError) as info:
        build_subgraphs([path], tmp_path / "store", progress=False)
    assert str(info.value) == (
        f"{path}: row 1 (question qB): column graph holds bytes that are not UTF-8 ({BAD!r}); "
        f"re-save the file with its text as UTF-8"
    )
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".store")] == []


def test_a_run_on_such_a_file_stops_with_one_line(tmp_path):
    path = with_bad_bytes(tmp_path / "latin1.parquet", "question", 1)
    done = kgx_main(
        tmp_path, "method=tog", "llm=scripted", "dataset=custom", f"dataset.path={path}", "kg=subgraph",
        "run.progress=false",
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"kgx: error: {path}: row 1 (question qB): column question holds bytes that are not UTF-8 "
        f"({BAD!r}); re-save the file with its text as UTF-8"
    )
