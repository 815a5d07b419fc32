"""Freebase KGQA test sets in the JSON-array formats that ToG, PoG, AoG and GoG distribute.

Topic entities are ``{mid: name}``. Where a format gives an answer's mid beside its name, the
mid is kept as a second alias, so that a method answering with KG ids can still be scored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgx.core.config import DatasetConfig
from kgx.core.types import Question
from kgx.datasets.fields import field, one_alias_each, position_id, topic_entities
from kgx.datasets.files import DataError, json_records, locate, read_json
from kgx.datasets.formats import dataset_format

UNNAMED = "UnName_Entity"  # PoG's placeholder for a gold answer that has no name


@dataset_format("cwq")
def cwq(path: Path, cfg: DatasetConfig) -> list[Question]:
    """ComplexWebQuestions in ToG's format: ``question``, ``topic_entity``, one ``answer`` string.

    ToG kept a single answer per question; PoG's answer-name file (``cfg.aliases``) lists the
    names of all gold answers of the original CWQ. Each name there is a gold answer of its own
    (not an alias of ToG's answer), after ToG's answer, so that F1 and EM see the full answer set.
    """
    names = _answer_names(locate(cfg, cfg.aliases)) if cfg.aliases else {}
    questions = []
    for where, rec in json_records(path):
        text = field(rec, "question", str, where)
        answer = field(rec, "answer", str, where)
        extra = [n for n in names.get(text, []) if n != UNNAMED]
        questions.append(
            Question(
                id=field(rec, "ID", str, where),
                text=text,
                topic_entities=topic_entities(rec, where),
                answers=one_alias_each([answer, *extra]),
                meta={"compositionality_type": field(rec, "compositionality_type", str, where)},
            )
        )
    return questions


def _answer_names(path: Path) -> dict[str, list[str]]:
    """PoG's ``cwq_aname_dict.json``: question text -> names of its gold answers."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object mapping questions to answer names")
    for question, names in data.items():
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise DataError(f"{path}: entry {question!r} must be a list of answer names")
    return data


@dataset_format("webqsp")
def webqsp(path: Path, cfg: DatasetConfig) -> list[Question]:
    """WebQSP test as ``WebQSP.json`` (AoG, LMP): ``RawQuestion`` and ``answer``, a list of names."""
    return [
        Question(
            id=field(rec, "QuestionId", str, where),
            text=field(rec, "RawQuestion", str, where),
            topic_entities=topic_entities(rec, where),
            answers=one_alias_each(field(rec, "answer", list, where)),
        )
        for where, rec in json_records(path)
    ]


@dataset_format("webqsp_parses")
def webqsp_parses(path: Path, cfg: DatasetConfig) -> list[Question]:
    """WebQSP with its full semantic parses (GoG's 1,000-question file).

    The gold set is the union of every parse's answers (as LMP's evaluation builds it), one
    answer per distinct AnswerArgument; the topic entities are those of the parses.
    """
    questions = []
    for where, rec in json_records(path):
        parses = field(rec, "Parses", list, where)
        answers: dict[str, list[str]] = {}
        topics: dict[str, str] = {}
        for i, parse in enumerate(parses):
            at = f"{where}: parse {i}"
            if not isinstance(parse, dict):
                raise DataError(f"{at}: expected a JSON object")
            for answer in field(parse, "Answers", list, at):
                argument, aliases = _parse_answer(answer, at)
                answers.setdefault(argument, aliases)
            if parse.get("TopicEntityMid"):
                topics[parse["TopicEntityMid"]] = parse.get("TopicEntityName") or parse["TopicEntityMid"]
        questions.append(
            Question(
                id=field(rec, "QuestionId", str, where),
                text=field(rec, "RawQuestion", str, where),
                topic_entities=topics,
                answers=list(answers.values()),
            )
        )
    return questions


def _parse_answer(answer: Any, where: str) -> tuple[str, list[str]]:
    """(argument, aliases) of one WebQSP parse answer: an entity's name and mid, or a value."""
    if not isinstance(answer, dict):
        raise DataError(f"{where}: each answer must be a JSON object")
    argument = field(answer, "AnswerArgument", str, where)
    return argument, _name_and_id(answer.get("EntityName"), argument)


def _name_and_id(name: Any, argument: str) -> list[str]:
    """An entity answer's aliases, name first; a value (no name) is its own only alias."""
    return [name, argument] if isinstance(name, str) and name.strip() else [argument]


@dataset_format("grailqa")
def grailqa(path: Path, cfg: DatasetConfig) -> list[Question]:
    """GrailQA in ToG's format: ``answer`` as ``[{answer_argument, entity_name}]``; the
    generalisation ``level`` (i.i.d., compositional, zero-shot) and ``function`` go to meta."""
    questions = []
    for where, rec in json_records(path):
        answers = []
        for answer in field(rec, "answer", list, where):
            if not isinstance(answer, dict):
                raise DataError(f"{where}: each answer must be a JSON object")
            answers.append(_name_and_id(answer.get("entity_name"), field(answer, "answer_argument", str, where)))
        questions.append(
            Question(
                id=str(field(rec, "qid", (int, str), where)),
                text=field(rec, "question", str, where),
                topic_entities=topic_entities(rec, where),
                answers=answers,
                meta={"level": field(rec, "level", str, where), "function": field(rec, "function", str, where)},
            )
        )
    return questions


@dataset_format("simpleqa")
def simpleqa(path: Path, cfg: DatasetConfig) -> list[Question]:
    """SimpleQuestions in ToG's format: one ``answer`` string; the gold ``relation`` goes to meta."""
    return [
        Question(
            id=position_id(cfg.name, index),
            text=field(rec, "question", str, where),
            topic_entities=topic_entities(rec, where),
            answers=one_alias_each([field(rec, "answer", str, where)]),
            meta={"relation": field(rec, "relation", str, where)},
        )
        for index, (where, rec) in enumerate(json_records(path))
    ]


@dataset_format("webquestions")
def webquestions(path: Path, cfg: DatasetConfig) -> list[Question]:
    """WebQuestions in ToG's format: ``answers``, a list of names."""
    return [
        Question(
            id=position_id(cfg.name, index),
            text=field(rec, "question", str, where),
            topic_entities=topic_entities(rec, where),
            answers=one_alias_each(field(rec, "answers", list, where)),
        )
        for index, (where, rec) in enumerate(json_records(path))
    ]
