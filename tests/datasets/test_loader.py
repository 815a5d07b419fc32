"""Loading questions: selection, where files are looked for, and files that are missing or
malformed, on the bundled demo and small hand-made files in each format."""

from __future__ import annotations

import json
import re

import pytest

from kgx.core.config import ConfigError, DatasetConfig
from kgx.core.sources import name_id
from kgx.datasets import DataError, dataset_config, dataset_names, load
from kgx.datasets.__main__ import main as list_datasets

DEMO_IDS = [f"demo-{i:03d}" for i in range(1, 49)]


def ids(questions) -> list[str]:
    return [q.id for q in questions]


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- bundled demo, selection


def test_bundled_demo_loads_with_aliases_and_topic_entities():
    questions = load(DatasetConfig())
    assert len(questions) == 48
    q = questions[0]
    assert q.id == "demo-001" and q.topic_entities == {"m.0_kk": "Australia"} and q.answers == [["Canberra"]]


def test_limit_takes_the_first_n():
    assert ids(load(DatasetConfig(limit=2))) == ["demo-001", "demo-002"]


@pytest.mark.parametrize(
    "selection, shown",
    [
        ({"limit": 0}, "dataset.limit=0"),
        ({"sample": 0}, "dataset.sample=0"),
        ({"ids": ["demo-002"], "sample": 1, "limit": 0}, "dataset.sample=1 dataset.limit=0"),
    ],
)
def test_a_selection_that_keeps_no_question_is_an_error(selection, shown):
    with pytest.raises(DataError) as info:
        load(DatasetConfig(**selection))
    assert str(info.value) == f"dataset 'demo': the selection {shown} leaves none of its 48 questions"


@pytest.mark.parametrize(
    "loader, name, text",
    [
        ("jsonl", "q.jsonl", ""),
        ("jsonl", "q.jsonl", "\n  \n"),
        ("cwq", "d.json", "[]"),
        ("metaqa", "qa.txt", "\n"),
    ],
)
def test_a_file_without_questions_is_an_error_naming_it(tmp_path, loader, name, text):
    path = write(tmp_path / name, text)
    with pytest.raises(DataError) as info:
        load(DatasetConfig(name="x", loader=loader, path=str(path)))
    assert str(info.value) == f"dataset 'x': {path} holds no questions"


def test_ids_keep_file_order_and_unknown_ids_are_named():
    assert ids(load(DatasetConfig(ids=["demo-010", "demo-002"]))) == ["demo-002", "demo-010"]
    with pytest.raises(DataError, match="dataset.ids not in the dataset: demo-999, nope"):
        load(DatasetConfig(ids=["demo-001", "demo-999", "nope"]))


def test_seeded_sample_is_reproducible_and_in_file_order():
    first = ids(load(DatasetConfig(sample=10, seed=7)))
    assert first == ids(load(DatasetConfig(sample=10, seed=7)))
    assert first != ids(load(DatasetConfig(sample=10, seed=8)))
    assert len(set(first)) == 10 and first == sorted(first, key=DEMO_IDS.index)
    assert ids(load(DatasetConfig(sample=48))) == DEMO_IDS
    with pytest.raises(DataError, match="dataset.sample=49 but only 48 questions"):
        load(DatasetConfig(sample=49))


def test_selection_applies_ids_then_sample_then_limit():
    chosen = DEMO_IDS[::3]
    sampled = ids(load(DatasetConfig(ids=chosen, sample=6, seed=1)))
    assert set(sampled) <= set(chosen) and len(sampled) == 6
    assert ids(load(DatasetConfig(ids=chosen, sample=6, seed=1, limit=2))) == sampled[:2]


@pytest.mark.parametrize("field", ["sample", "limit"])
def test_negative_sizes_name_the_field(field):
    with pytest.raises(ConfigError, match=rf"dataset\.{field}=-1"):
        DatasetConfig(**{field: -1})


def test_every_dataset_config_fits_the_schema_and_names_its_source(compose_cfg):
    assert {
        "cwq",
        "webqsp",
        "webqsp_parses",
        "grailqa",
        "simpleqa",
        "webquestions",
        "metaqa_1hop",
        "metaqa_2hop",
        "metaqa_3hop",
        "pq_2h",
        "pq_3h",
        "pql_2h",
        "pql_3h",
        "demo",
    } <= set(dataset_names())
    for name in dataset_names():
        cfg = dataset_config(name)
        assert cfg.name == name and cfg.source, name
    assert compose_cfg("dataset=cwq").dataset.aliases == "freebase_qa/cwq_aliases.json"


# ----------------------------------------------------------------------------- where files are looked for


def test_relative_paths_resolve_under_the_data_dir(tmp_path, monkeypatch):
    write(
        tmp_path / "sq" / "SimpleQA.json",
        json.dumps([{"question": "where is x", "answer": "Y", "topic_entity": {"m.1": "x"}, "relation": "r"}]),
    )
    monkeypatch.setenv("KGX_DATA_DIR", str(tmp_path))
    [q] = load(DatasetConfig(name="sq", loader="simpleqa", path="sq/SimpleQA.json"))
    assert q.id == "sq-00000" and q.answers == [["Y"]] and q.meta == {"relation": "r"}


def test_missing_file_names_the_full_path_the_variable_and_the_source(tmp_path, monkeypatch):
    monkeypatch.setenv("KGX_DATA_DIR", str(tmp_path))
    cfg = DatasetConfig(name="cwq", loader="cwq", path="freebase_qa/cwq.json", source="ToG data/cwq.json")
    with pytest.raises(DataError) as info:
        load(cfg)
    message = str(info.value)
    assert f"looked for {tmp_path / 'freebase_qa' / 'cwq.json'}" in message
    assert f"$KGX_DATA_DIR={tmp_path}" in message and message.endswith("To get it: ToG data/cwq.json")


def test_without_the_variable_files_are_looked_for_in_the_user_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("KGX_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    with pytest.raises(DataError, match=r"\$KGX_DATA_DIR if set, else .*kgx/data"):
        load(DatasetConfig(name="cwq", loader="cwq", path="cwq.json"))
    with pytest.raises(DataError, match="set dataset.path to a local copy"):
        load(DatasetConfig(path=str(tmp_path / "q.jsonl")))


def test_an_auxiliary_file_is_looked_for_the_same_way(tmp_path):
    path = write(tmp_path / "cwq.json", "[]")
    cfg = DatasetConfig(
        name="cwq", loader="cwq", path=str(path), aliases=str(tmp_path / "aliases.json"), source="PoG cope_alias/"
    )
    with pytest.raises(DataError, match=r"aliases\.json.*To get it: PoG cope_alias/"):
        load(cfg)


def test_the_listing_shows_counts_and_missing_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KGX_DATA_DIR", str(tmp_path))
    list_datasets()
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[2:]}
    assert rows["demo"].split()[:3] == ["demo", "jsonl", "48"]
    assert rows["cwq"].split()[2] == "missing" and str(tmp_path / "freebase_qa" / "cwq.json") in rows["cwq"]
    assert "get it: ComplexWebQuestions" in rows["cwq"]


# ----------------------------------------------------------------------------- formats


def test_cwq_answer_names_become_separate_gold_answers(tmp_path):
    path = write(
        tmp_path / "cwq.json",
        json.dumps(
            [
                {
                    "ID": "c1",
                    "question": "Q1?",
                    "answer": "A",
                    "topic_entity": {"m.1": "T"},
                    "compositionality_type": "conjunction",
                },
                {
                    "ID": "c2",
                    "question": "Q2?",
                    "answer": "B",
                    "topic_entity": {},
                    "compositionality_type": "composition",
                },
            ]
        ),
    )
    write(tmp_path / "names.json", json.dumps({"Q1?": ["C", "A", "UnName_Entity", "C"]}))
    q1, q2 = load(DatasetConfig(name="cwq", loader="cwq", path=str(path), aliases=str(tmp_path / "names.json")))
    assert q1.answers == [["A"], ["C"]] and q1.meta == {"compositionality_type": "conjunction"}
    assert q2.answers == [["B"]] and q2.topic_entities == {}


def test_webqsp_parses_union_answers_with_mids_and_values(tmp_path):
    def parse(mid, name, answers):
        return {"TopicEntityMid": mid, "TopicEntityName": name, "Answers": answers}

    path = write(
        tmp_path / "p.json",
        json.dumps(
            [
                {
                    "QuestionId": "W-1",
                    "RawQuestion": "q?",
                    "Parses": [
                        parse("m.1", "One", [{"AnswerType": "Entity", "AnswerArgument": "m.a", "EntityName": "A"}]),
                        parse(
                            "m.2",
                            "Two",
                            [
                                {"AnswerType": "Entity", "AnswerArgument": "m.a", "EntityName": "A"},
                                {"AnswerType": "Value", "AnswerArgument": "1999", "EntityName": None},
                            ],
                        ),
                    ],
                }
            ]
        ),
    )
    [q] = load(DatasetConfig(name="w", loader="webqsp_parses", path=str(path)))
    assert q.answers == [["A", "m.a"], ["1999"]] and q.topic_entities == {"m.1": "One", "m.2": "Two"}


def test_webqsp_drops_unnamed_answers(tmp_path):
    path = write(
        tmp_path / "w.json",
        json.dumps(
            [{"QuestionId": "W-2", "RawQuestion": "q?", "answer": ["A", None, "", "A", "B"], "topic_entity": {}}]
        ),
    )
    assert load(DatasetConfig(name="w", loader="webqsp", path=str(path)))[0].answers == [["A"], ["B"]]


def test_metaqa_topic_entity_answers_and_qtype(tmp_path):
    path = write(
        tmp_path / "qa.txt", "who directed [Alien]\tRidley Scott\n[Heat] stars who\tAl Pacino|Robert De Niro\n"
    )
    write(tmp_path / "qtype.txt", "movie_to_director\nmovie_to_actor_to_movie\n")
    q1, q2 = load(DatasetConfig(name="m", loader="metaqa", path=str(path), qtype=str(tmp_path / "qtype.txt")))
    assert (q1.id, q1.text, q1.topic_entities) == ("m-00001", "who directed Alien", {name_id("Alien"): "Alien"})
    assert q2.answers == [["Al Pacino"], ["Robert De Niro"]]
    assert q2.meta == {"qtype": "movie_to_actor_to_movie", "hops": 2}


def test_pathquestion_answer_set_path_and_spaced_aliases(tmp_path):
    path = write(
        tmp_path / "pq.txt",
        "who is a_b 's kid ?\tc_d(c_d/e/)\ta_b#children#c_d#<end>#c_d\n"
        " the rating of X ?\tPG_(USA)(PG_(USA)/)\tX#r1#Y#r2#PG_(USA)\n",
    )
    q1, q2 = load(DatasetConfig(name="pq", loader="pathquestion", path=str(path)))
    assert q1.answers == [["c_d", "c d"], ["e"]] and q1.topic_entities == {name_id("a_b"): "a_b"}
    assert q1.meta == {"path": ["a_b", "children", "c_d"], "hops": 1}
    assert q2.text == "the rating of X ?" and q2.answers == [["PG_(USA)", "PG (USA)"]] and q2.meta["hops"] == 2


# ----------------------------------------------------------------------------- malformed files


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", r"q\.jsonl:2: not JSON"),
        ('{"id": "b", "answers": [["x"]]}', r"q\.jsonl:2: missing field 'question'"),
        ('{"id": "b", "question": "?", "answers": ["x"]}', r"q\.jsonl:2: field 'answers'"),
        ('{"id": "a", "question": "?", "answers": [["x"]]}', "'a' appears more than once"),
    ],
)
def test_malformed_lines_are_named(tmp_path, line, message):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "Who?", "answers": [["x"]]}\n' + line + "\n")
    with pytest.raises(DataError, match=message):
        load(DatasetConfig(path=str(path)))


@pytest.mark.parametrize(
    "line, message",
    [
        (
            '{"id": "b", "question": "?", "answers": [["x"]], "topic_entities": "m.1"}',
            "q.jsonl:2: field 'topic_entities' must be dict, found str",
        ),
        (
            '{"id": "b", "question": "?", "answers": [["x"]], "topic_entities": ["Canberra", 7]}',
            "q.jsonl:2: field 'topic_entities' must be an {id: name} object or a list of entity names (non-empty strings)",
        ),
        (
            '{"id": "b", "question": "?", "answers": [["x"]], "topic_entities": {"m.1": 7}}',
            "q.jsonl:2: field 'topic_entities' must map entity ids to names (strings)",
        ),
        (
            '{"id": "b", "question": "?", "answers": [["x"]], "meta": "2hop"}',
            "q.jsonl:2: field 'meta' must be dict, found str",
        ),
        (
            '{"id": "b", "question": "?", "answers": [["x"]], "answer_ids": "m.2"}',
            "q.jsonl:2: field 'answer_ids' must be list, found str",
        ),
    ],
)
def test_jsonl_optional_fields_are_checked_when_given(tmp_path, line, message):
    path = write(tmp_path / "q.jsonl", '{"id": "a", "question": "Who?", "answers": [["x"]]}\n' + line + "\n")
    with pytest.raises(DataError) as info:
        load(DatasetConfig(path=str(path)))
    assert str(info.value) == f"{tmp_path}/{message}"


def test_jsonl_optional_fields_default_to_empty(tmp_path):
    path = write(tmp_path / "q.jsonl", '{"id": 7, "question": "Who?", "answers": [["x"]]}\n')
    [q] = load(DatasetConfig(path=str(path)))
    assert (q.id, q.topic_entities, q.meta) == ("7", {}, {"answer_ids": []})


LONE = "\ud800"  # half a surrogate pair: json.dumps writes it as the escape "\\ud800", as some tools do


@pytest.mark.parametrize(
    "record, field",
    [
        ({"question": f"Who is {LONE}?"}, "field 'question'"),
        ({"topic_entities": {"m.1": f"Ab{LONE}"}}, "field 'topic_entities.m.1'"),
        ({"topic_entities": {f"m.{LONE}": "A"}}, "a key of field 'topic_entities'"),
        ({"answers": [["x", f"{LONE}y"]]}, "field 'answers[0][1]'"),
        ({"meta": {"notes": ["fine", f"bad {LONE}"]}}, "field 'meta.notes[1]'"),
        ({"id": f"b{LONE}"}, "field 'id'"),
        ({f"extra{LONE}": 1}, "a field name"),
    ],
)
def test_text_utf8_cannot_hold_is_refused_at_load_with_the_line_and_field(tmp_path, record, field):
    good = {"id": "b", "question": "Who?", "answers": [["x"]]}
    line = json.dumps({**good, **record})
    path = write(tmp_path / "q.jsonl", '{"id": "a", "question": "Who?", "answers": [["x"]]}\n' + line + "\n")
    with pytest.raises(DataError) as info:
        load(DatasetConfig(path=str(path)))
    message = str(info.value)
    assert message.startswith(
        f"{path}:2: {field} holds a lone surrogate \\ud800 (half of a UTF-16 pair, from a JSON escape) at character "
    )
    message.encode("utf-8")  # the message itself can be printed and logged


def test_the_offending_text_is_shown_escaped(tmp_path):
    path = write(tmp_path / "q.jsonl", '{"id": "a", "question": "Who is \\ud800 here?", "answers": [["x"]]}\n')
    with pytest.raises(DataError) as info:
        load(DatasetConfig(path=str(path)))
    assert str(info.value).endswith(r"at character 7, which cannot be written as UTF-8: 'Who is \ud800 here?'")


def test_surrogate_pairs_and_non_ascii_text_load(tmp_path):
    path = write(
        tmp_path / "q.jsonl", '{"id": "a", "question": "Who sang \\ud83c\\udfb5 in Zürich?", "answers": [["x"]]}\n'
    )
    assert load(DatasetConfig(path=str(path)))[0].text == "Who sang \U0001f3b5 in Zürich?"


def test_json_array_formats_name_the_record_of_bad_text(tmp_path):
    good = {"ID": "c1", "question": "Q?", "answer": "A", "topic_entity": {"m.1": "T"}, "compositionality_type": "x"}
    text = json.dumps([good, {**good, "ID": "c2", "topic_entity": {"m.1": "T\udfff"}}], ensure_ascii=True)
    path = write(tmp_path / "d.json", text)
    with pytest.raises(
        DataError, match=re.escape(f"{path}: record 1: field 'topic_entity.m.1' holds a lone surrogate \\udfff")
    ):
        load(DatasetConfig(name="cwq", loader="cwq", path=str(path)))
    write(tmp_path / "names.json", json.dumps({"Q?": ["A", "B\ud800"]}))
    path = write(tmp_path / "d.json", json.dumps([good]))
    with pytest.raises(DataError, match=re.escape(f"{tmp_path / 'names.json'}: field 'Q?[1]' holds a lone surrogate")):
        load(DatasetConfig(name="cwq", loader="cwq", path=str(path), aliases=str(tmp_path / "names.json")))


GOOD_CWQ = {"ID": "c1", "question": "Q?", "answer": "A", "topic_entity": {}, "compositionality_type": "composition"}


@pytest.mark.parametrize(
    "loader, name, text, message",
    [
        (
            "cwq",
            "d.json",
            json.dumps([GOOD_CWQ, {**GOOD_CWQ, "answer": None}]),
            r"d\.json: record 1: field 'answer' must be str, found NoneType",
        ),
        ("cwq", "d.json", json.dumps([GOOD_CWQ, {"ID": "c2"}]), r"d\.json: record 1: missing field 'question'"),
        ("cwq", "d.json", '[\n{"ID": "c1",\n "question" "Q?"}]', r"d\.json:3: not JSON"),
        ("cwq", "d.json", json.dumps({"questions": []}), r"d\.json: expected a JSON array"),
        (
            "grailqa",
            "d.json",
            json.dumps(
                [
                    {
                        "qid": 1,
                        "question": "q",
                        "answer": [{"entity_name": "x"}],
                        "topic_entity": {},
                        "level": "i.i.d.",
                        "function": "none",
                    }
                ]
            ),
            r"d\.json: record 0: missing field 'answer_argument'",
        ),
        (
            "webqsp_parses",
            "d.json",
            json.dumps([{"QuestionId": "W", "RawQuestion": "q", "Parses": [{"Answers": [{}]}]}]),
            r"d\.json: record 0: parse 0: missing field 'AnswerArgument'",
        ),
        (
            "webquestions",
            "d.json",
            json.dumps([{"question": "q", "answers": ["a"], "topic_entity": {"m.1": None}}]),
            r"d\.json: record 0: field 'topic_entity' must map",
        ),
        (
            "metaqa",
            "qa.txt",
            "who directed [Alien]\tRidley Scott\nwho directed Heat\tMichael Mann\n",
            r"qa\.txt:2: expected one \[topic entity\]",
        ),
        (
            "metaqa",
            "qa.txt",
            "who directed [Alien]\tRidley Scott\n\nwho directed [Heat]\n",
            r"qa\.txt:3: expected 'question<TAB>answers'",
        ),
        ("metaqa", "qa.txt", "who directed [Alien]\t|\n", r"qa\.txt:1: no answers"),
        (
            "pathquestion",
            "pq.txt",
            "q ?\tc(c/)\ta#r#c\nq2 ?\tc(c/)\ta#r#d\n",
            r"pq\.txt:2: field 2 \(answer\) must be 'd\(a1/a2/\.\.\./\)'",
        ),
        ("pathquestion", "pq.txt", "q ?\tc(c/)\ta#r\n", r"pq\.txt:1: field 3 \(path\) must alternate"),
    ],
)
def test_malformed_records_name_the_file_and_line_or_record(tmp_path, loader, name, text, message):
    path = write(tmp_path / name, text)
    with pytest.raises(DataError, match=message):
        load(DatasetConfig(name="x", loader=loader, path=str(path)))


def test_undecodable_bytes_name_the_line(tmp_path):
    path = tmp_path / "qa.txt"
    path.write_bytes(b"who directed [Alien]\tRidley Scott\nwho directed [\xff]\tX\n")
    with pytest.raises(DataError, match=r"qa\.txt:2: not UTF-8"):
        load(DatasetConfig(name="m", loader="metaqa", path=str(path)))


def test_qtype_lines_must_align_with_the_questions(tmp_path):
    path = write(tmp_path / "qa.txt", "who directed [Alien]\tRidley Scott\n")
    write(tmp_path / "qtype.txt", "movie_to_director\nmovie_to_actor\n")
    with pytest.raises(DataError, match=r"qtype\.txt: 2 question types for the 1 questions"):
        load(DatasetConfig(name="m", loader="metaqa", path=str(path), qtype=str(tmp_path / "qtype.txt")))


def test_unknown_loader_lists_the_known_ones():
    with pytest.raises(
        DataError, match=r"dataset.loader=csv: dataset format 'csv' is not registered \(known: .*metaqa"
    ):
        load(DatasetConfig(loader="csv"))
