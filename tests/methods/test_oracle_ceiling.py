"""``llm=oracle`` is a ceiling on any KG: every KG method, whole runs on small custom KBs.

- Values printed otherwise than their golds (a float in exponent form, a date in ISO form for a
  written-out gold, thousands separators on either side): reachability finds them, and every
  method that retrieves the value answers it.
- Traps: a gold that the method's own instructions hold ("15" of KnowPath's "write 15 knowledge
  triples", "answer" of every answer prompt), and a gold that only a longer entity name holds
  ("Lyon" in "Lyon Office"), none of them within any method's depth. The oracle must answer none
  of them: 0 hits on questions unreachable at the method's depth.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgx.run.execute import execute
from kgx.run.spec import to_run_spec
from tests.helpers import kg_methods

METHODS = kg_methods()

# A city KB whose values are written as a KG prints them, not as the gold does.
VALUES_KB = """\
Vienna\tpopulation\t1.89731e+06
Vienna\tfounding_date\t1990-05-01
Vienna\tmayor\tMichael Ludwig
Graz\tpopulation\t291,072
Graz\tmayor\tElke Kahr
Linz\tarea_km2\t9.599e+01
Linz\tmayor\tDietmar Prammer
Salzburg\topened\t2001-11-23
Salzburg\tmayor\tBernhard Auinger
"""
VALUES = [  # (question, topic, gold aliases)
    ("how many people live in Vienna", "Vienna", ["1,897,310"]),
    ("on what date was Vienna founded", "Vienna", ["May 1, 1990"]),
    ("what is the population of Graz", "Graz", ["291072"]),
    ("how large is Linz in square kilometres", "Linz", ["95.99"]),
    ("when did Salzburg open", "Salzburg", ["23 November 2001"]),
]

# Acme's neighbours hold the traps; the golds themselves are nodes of the KB no method can reach.
TRAPS_KB = """\
Acme\thas_office\tLyon Office
Acme\tfounded_by\tMarie Curtis
Acme\tsector\tRobotics
Lyon Office\tmanaged_by\tPaul Girard
Lyon\tcountry\tFrance
Counter\tvalue\t15
Reply\tkind\tanswer
"""
TRAPS = [
    ("in which city is Acme's office", "Acme", ["Lyon"]),
    ("how many knowledge triples describe Acme", "Acme", ["15"]),
    ("what is the answer about Acme", "Acme", ["answer"]),
]


def files(folder: Path, kb: str, rows: list[tuple[str, str, list[str]]]) -> tuple[Path, Path]:
    (folder / "kb.tsv").write_text(kb, encoding="utf-8")
    lines = [
        json.dumps({"id": f"q{i}", "question": q, "topic_entities": [topic], "answers": [gold]})
        for i, (q, topic, gold) in enumerate(rows, 1)
    ]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "kb.tsv", folder / "questions.jsonl"


def oracle_run(compose_cfg, folder: Path, method: str, kb: Path, questions: Path):
    overrides = [
        f"method={method}",
        "llm=oracle",
        "llm.cache=false",
        "dataset=custom",
        f"dataset.path={questions}",
        "kg=custom",
        f"kg.sources=[{kb}]",
        f"run.cache_dir={folder / 'cache'}",
        "run.progress=false",
        "run.explain=0",
    ]
    return sorted(execute(to_run_spec(compose_cfg(*overrides)), folder).records, key=lambda r: r.id)


@pytest.mark.parametrize("method", METHODS)
def test_values_printed_otherwise_are_reached_and_answered(compose_cfg, in_tmp, method):
    kb, questions = files(in_tmp, VALUES_KB, VALUES)
    records = oracle_run(compose_cfg, in_tmp, method, kb, questions)
    assert [r.reach.reachable for r in records] == [True] * len(VALUES)  # by value, one hop away
    assert [r.reach.distance for r in records] == [1] * len(VALUES)
    retrieved = [r.id for r in records if r.scores["answer_recall"] > 0]
    answered = [r.id for r in records if r.breakdown == "correct"]
    assert answered == retrieved == [f"q{i}" for i in range(1, len(VALUES) + 1)]


@pytest.mark.parametrize("method", METHODS)
def test_no_hit_from_instructions_or_a_name_holding_the_gold(compose_cfg, in_tmp, method):
    kb, questions = files(in_tmp, TRAPS_KB, TRAPS)
    records = oracle_run(compose_cfg, in_tmp, method, kb, questions)
    assert [r.reach.reachable for r in records] == [False] * len(TRAPS)
    assert [r.scores["hits1"] for r in records] == [0.0] * len(TRAPS)
    assert {r.breakdown for r in records} <= {"unreachable", "fallback"}
    assert all("Lyon" not in r.prediction.answers for r in records)
