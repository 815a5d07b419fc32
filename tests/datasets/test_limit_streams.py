"""``dataset.limit`` stops a line-based reader: the lines after the limit are not read, so a
malformed one there does not stop the load, while ``ids`` and ``sample`` still read every line."""

from __future__ import annotations

import json

import pytest

from kgx.core.config import DatasetConfig
from kgx.datasets import DataError, load

GOOD = {
    "jsonl": [json.dumps({"id": f"q{i}", "question": f"who is {i}?", "answers": [["x"]]}) for i in range(3)],
    "auto": [json.dumps({"id": f"q{i}", "question": f"who is {i}?", "answers": [["x"]]}) for i in range(3)],
    "irn": [f"who is {i} ?\tc\ta{i}#r#c" for i in range(3)],
    "pathquestion": [f"who is {i} ?\tc(c/)\ta{i}#r#c" for i in range(3)],
    "metaqa": [f"who directed [Film {i}]\tSomeone" for i in range(3)],
}
BROKEN = "this line is malformed in every format"


@pytest.mark.parametrize("loader", sorted(GOOD))
def test_a_limit_stops_reading_before_a_malformed_line(tmp_path, loader):
    path = tmp_path / "questions.txt"
    path.write_text("\n".join([*GOOD[loader], BROKEN, *GOOD[loader]]) + "\n")
    limited = load(DatasetConfig(name="s", loader=loader, path=str(path), limit=3))
    assert len(limited) == 3 and "2" in limited[2].text
    for whole in (None, 4):  # the whole file, or a limit that reaches the line: stopped at line 4
        with pytest.raises(DataError, match=r"questions\.txt:4"):
            load(DatasetConfig(name="s", loader=loader, path=str(path), limit=whole))
    with pytest.raises(DataError, match=r"questions\.txt:4"):  # a sample draws from every question
        load(DatasetConfig(name="s", loader=loader, path=str(path), sample=2, limit=1))


def test_a_limit_reads_as_many_question_types_as_questions(tmp_path):
    path = tmp_path / "qa.txt"
    path.write_text("\n".join(GOOD["metaqa"]) + "\n")
    qtypes = tmp_path / "qtype.txt"
    qtypes.write_text("movie_to_director\nmovie_to_director_to_movie\n")
    cfg = DatasetConfig(name="m", loader="metaqa", path=str(path), qtype=str(qtypes), limit=2)
    assert [q.meta["hops"] for q in load(cfg)] == [1, 2]
    cfg.limit = None
    with pytest.raises(DataError, match=r"qtype\.txt: 2 question types for the 3 questions"):
        load(cfg)
