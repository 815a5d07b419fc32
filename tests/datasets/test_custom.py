"""One's own questions: ``dataset=custom`` reads kgx's JSON lines or IRN's tab-separated lines
(WC2014's 5-6 fields included) with no inherited subset, and bad lines name file, line and field."""

from __future__ import annotations

import pytest

from kgx.core.config import DatasetConfig
from kgx.core.sources import name_id
from kgx.datasets import DataError, dataset_config, load
from kgx.datasets.irn import TOPIC_NAMES
from tests import wc2014


def custom(path) -> DatasetConfig:
    cfg = dataset_config("custom")
    cfg.path = str(path)
    return cfg


def test_the_custom_config_takes_no_subset_and_names_no_kg(compose_cfg):
    cfg = compose_cfg("dataset=custom", "dataset.path=/x/q.jsonl").dataset
    assert (cfg.name, cfg.loader, cfg.limit, cfg.sample, cfg.ids, cfg.kg) == ("custom", "auto", None, None, [], None)
    assert "dataset=custom dataset.path=FILE" in cfg.source
    assert compose_cfg().dataset.kg == "demo" and compose_cfg("dataset=metaqa_2hop").dataset.kg == "metaqa"


def test_without_a_path_the_custom_dataset_asks_for_one():
    with pytest.raises(DataError, match=r"dataset 'custom': no question file; set dataset.path=FILE"):
        load(dataset_config("custom"))


def test_wc2014_lines_of_five_and_six_fields(tmp_path):
    _, path = wc2014.write(tmp_path)
    one, two, conj = load(custom(path))
    assert (one.id, one.text) == ("custom-00001", "which club does Ana_ROCHA play for ?")
    assert one.topic_entities == {} and one.meta == {
        "path": ["Ana_ROCHA", "plays_in_club", "Club_Norte"],
        "hops": 1,
        TOPIC_NAMES: ["Ana_ROCHA"],
    }
    assert one.answers == [["Club_Norte", "Club Norte"]]
    assert two.meta["hops"] == 2 and two.answers == [["Atlantis"]] and two.meta[TOPIC_NAMES] == ["Bo_LINDQVIST"]
    assert conj.meta == {
        "paths": [
            ["Club_Norte", "plays_in_club_inverse", "Ana_ROCHA"],
            ["Atlantis", "plays_for_country_inverse", "Ana_ROCHA"],
        ],
        "hops": 1,
        TOPIC_NAMES: ["Club_Norte", "Atlantis"],
    }
    assert conj.answers == [["Ana_ROCHA", "Ana ROCHA"], ["Bo_LINDQVIST", "Bo LINDQVIST"]]


def test_the_pathquestion_loader_reads_wc2014_lines_with_generated_ids(tmp_path):
    _, path = wc2014.write(tmp_path)
    *_, conj = load(DatasetConfig(name="wc", loader="pathquestion", path=str(path)))
    assert conj.topic_entities == {name_id("Club_Norte"): "Club_Norte", name_id("Atlantis"): "Atlantis"}
    assert TOPIC_NAMES not in conj.meta


def test_json_lines_may_name_topic_entities(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"id": "q1", "question": "Which club?", "answers": [["Club_Norte"]], '
        '"topic_entities": ["Ana_ROCHA", "Ana_ROCHA"]}\n'
        '{"id": "q2", "question": "Where?", "answers": [["Atlantis"]], "topic_entities": {"m.1": "X"}}\n'
    )
    q1, q2 = load(custom(path))
    assert q1.topic_entities == {} and q1.meta == {"answer_ids": [], TOPIC_NAMES: ["Ana_ROCHA"]}
    assert q2.topic_entities == {"m.1": "X"} and TOPIC_NAMES not in q2.meta


@pytest.mark.parametrize(
    "line, message",
    [
        (
            "who ?\tAna_ROCHA\n",
            r"q\.txt:2: expected at least 3 tab-separated fields \(question, answer, path\), found 2",
        ),
        (" \tA\tX#r#A\n", r"q\.txt:2: field 1 \(question\) is empty"),
        ("who ?\t\tX#r#A\n", r"q\.txt:2: field 2 \(answer\) is empty"),
        ("who ?\tB(B/C/)\tX#r#A\n", r"q\.txt:2: field 2 \(answer\) must be 'A\(a1/a2/\.\.\./\)'"),
        ("who ?\tA\tX#r#A*Y#r\n", r"q\.txt:2: field 3 \(path\) must alternate entity#relation#...#entity, found 'Y#r'"),
        ("who ?\tA\tX#r#A#<end>#B\n", r"q\.txt:2: field 3 \(path\) must end in '...#answer#<end>#answer'"),
        ("who ?\tA\tX#r#A\t//\tctx\n", r"q\.txt:2: field 4 \(answer set\) is empty"),
    ],
)
def test_bad_irn_lines_name_file_line_and_field(tmp_path, line, message):
    path = tmp_path / "q.txt"
    path.write_text(wc2014.ONE_HOP + line)
    with pytest.raises(DataError, match=message):
        load(custom(path))


def test_a_file_of_neither_format_names_its_line(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("\nquestion,answer\n")
    with pytest.raises(DataError, match=r"q\.csv:2: neither a JSON object .* set dataset.loader to one of"):
        load(custom(path))
