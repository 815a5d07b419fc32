"""Data that Python's JSON parser is lenient about gets a clear error or is accepted: NaN and
Infinity, non-string aliases, empty ids and questions, deep nesting, and a UTF-8 BOM."""

from __future__ import annotations

import json

import pytest

from kgx.datasets import DataError, dataset_config, load

GOOD = {"id": "q1", "question": "who directed Inception?", "answers": [["Christopher Nolan"]]}


def custom(tmp_path, *lines: str, prefix: bytes = b"", name: str = "q.jsonl"):
    path = tmp_path / name
    path.write_bytes(prefix + "".join(line + "\n" for line in lines).encode("utf-8"))
    cfg = dataset_config("custom")
    cfg.path = str(path)
    return cfg, path


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "q2", "question": "how tall?", "answers": [[NaN]]}', r"field 'answers\[0\]\[0\]' is nan, which JSON"),
        ('{"id": "q2", "question": "x?", "answers": [["a", -Infinity]]}', r"field 'answers\[0\]\[1\]' is -inf"),
        ('{"id": "q2", "question": "x?", "answers": [[null]]}', r"field 'answers\[0\]\[0\]' must be a string, found"),
        (
            '{"id": "q2", "question": "x?", "answers": [[1.5]]}',
            r"field 'answers\[0\]\[0\]' must be a string, found float",
        ),
        (
            '{"id": "q2", "question": "x?", "answers": [[true]]}',
            r"field 'answers\[0\]\[0\]' must be a string, found bool",
        ),
        ('{"id": "", "question": "x?", "answers": [["a"]]}', r"field 'id' is empty"),
        ('{"id": "q2", "question": "  ", "answers": [["a"]]}', r"field 'question' is empty"),
        ('{"id": "q2", "question": "x?", "answers": [["a"]], "meta": {"w": NaN}}', r"field 'meta.w' is nan"),
    ],
)
def test_lenient_json_names_file_line_and_field(tmp_path, line, message):
    cfg, path = custom(tmp_path, json.dumps(GOOD), line)
    with pytest.raises(DataError, match=rf"^{path}:2: {message}"):
        load(cfg)


def test_an_integer_alias_is_read_as_its_digits(tmp_path):
    cfg, _ = custom(tmp_path, json.dumps({**GOOD, "answers": [[1995, "1995"]]}))
    assert load(cfg)[0].answers == [["1995", "1995"]]


def test_deep_nesting_is_a_clear_error_not_a_recursion_error(tmp_path):
    deep = json.dumps(GOOD)[:-1] + ', "meta": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    cfg, path = custom(tmp_path, deep)
    with pytest.raises(DataError, match=rf"^{path}:1: JSON nested too deeply to read"):
        load(cfg)
    array = tmp_path / "deep.json"
    array.write_text("[" * 100_000 + "]" * 100_000)
    cfg.path, cfg.loader = str(array), "cwq"
    with pytest.raises(DataError, match=rf"^{array}: JSON nested too deeply"):
        load(cfg)


def test_a_utf8_bom_is_accepted(tmp_path):
    cfg, _ = custom(tmp_path, json.dumps(GOOD), prefix=b"\xef\xbb\xbf")
    assert [(q.id, q.text) for q in load(cfg)] == [("q1", "who directed Inception?")]
    tsv, _ = custom(tmp_path, "who wrote Dune ?\tFrank_Herbert\tDune#written_by#Frank_Herbert", prefix=b"\xef\xbb\xbf")
    assert load(tsv)[0].text == "who wrote Dune ?"
    cwq = tmp_path / "cwq.json"
    cwq.write_bytes(
        b"\xef\xbb\xbf"
        + json.dumps(
            [{"question": "q?", "answer": "a", "topic_entity": {}, "ID": "c1", "compositionality_type": "x"}]
        ).encode()
    )
    cfg.path, cfg.loader = str(cwq), "cwq"
    assert load(cfg)[0].text == "q?"


def test_an_empty_id_from_another_format_names_the_question(tmp_path):
    cwq = tmp_path / "cwq.json"
    cwq.write_text(
        json.dumps([{"ID": " ", "question": "q?", "answer": "a", "topic_entity": {}, "compositionality_type": "x"}])
    )
    cfg = dataset_config("custom")
    cfg.path, cfg.loader = str(cwq), "cwq"
    with pytest.raises(DataError, match=rf"^{cwq}: question 1 has an empty id"):
        load(cfg)
