"""Loading questions: the bundled demo, limits, and files that are missing or malformed."""
from __future__ import annotations

import pytest

from kgx.config import DatasetConfig
from kgx.datasets import DataError, load


def test_bundled_demo_loads_with_aliases_and_topic_entities():
    questions = load(DatasetConfig())
    assert len(questions) == 48
    q = questions[0]
    assert q.id == "demo-001" and q.topic_entities == {"m.0_kk": "Australia"} and q.answers == [["Canberra"]]


def test_limit_takes_the_first_n():
    assert [q.id for q in load(DatasetConfig(limit=2))] == ["demo-001", "demo-002"]
    assert load(DatasetConfig(limit=0)) == []


def test_missing_file_names_the_path_and_how_to_get_it(tmp_path):
    cfg = DatasetConfig(name="cwq", path=str(tmp_path / "cwq.json"), source="copy cwq.json from ToG's data/")
    with pytest.raises(DataError, match=r"cwq\.json.*To get it: copy cwq\.json from ToG's data/"):
        load(cfg)


@pytest.mark.parametrize("line, message", [
    ("{not json", r"q\.jsonl:2: not JSON"),
    ('{"id": "b", "answers": [["x"]]}', r"q\.jsonl:2: missing field 'question'"),
    ('{"id": "b", "question": "?", "answers": ["x"]}', r"q\.jsonl:2: field 'answers'"),
    ('{"id": "a", "question": "?", "answers": [["x"]]}', "'a' appears more than once"),
])
def test_malformed_lines_are_named(tmp_path, line, message):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "Who?", "answers": [["x"]]}\n' + line + "\n")
    with pytest.raises(DataError, match=message):
        load(DatasetConfig(path=str(path)))
