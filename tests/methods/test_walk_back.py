"""``method.walk_back`` for PoG and StructGPT: off by default, as the released code, a
co-star question on a KG without inverse relations has no way to its answer; on, the oracle
walks back along the relation that reached the film and answers it. A PathQuestion chain that
returns to its topic entity needs no walking back: the oracle leads it without the round trip."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from kgx.core.config import LLMConfig
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.sources import name_id
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.diagnose.gold_path import GoldHint, gold_hint
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.llm.client import LLMClient
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.methods import Context, get
from kgx.methods.pog import PoGConfig
from kgx.methods.structgpt import StructGPTConfig

ORACLE = LLMConfig(name="oracle", model="kgx-oracle/gold", structured_output="json_schema", backoff_s=0.0)
# MetaQA's shape: films point at their actors, no inverse edges.
KB = "Film_A\tstarring\tAnn\nFilm_A\tstarring\tBo\nFilm_A\tgenre\tDrama\nFilm_B\tstarring\tAnn\nFilm_B\tyear\t1999\n"
STARRING = [("starring", "in"), ("starring", "out")]
GOLD = GoldHint([["Bo"]], STARRING, ["Film_A", "Bo"], ["Ann"], [STARRING], {"Ann": 0, "Film_A": 1, "Bo": 2})


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    folder = tmp_path_factory.mktemp("costar")
    (folder / "kb.tsv").write_text(KB)
    return open_kg(EmbeddedKGConfig(name="custom", sources=[str(folder / "kb.tsv")], format="custom"), folder / "cache")


def solve(kg, params, question=None, gold=GOLD):
    question = question or Question("q", "who starred in films together with Ann", {name_id("Ann"): "Ann"}, [["Bo"]])
    trace, meter = Trace(), Meter()
    llm = QuestionLLM(LLMClient(ORACLE, {}, None, sleep=lambda s: None), meter, trace, gold=gold)
    ctx = Context(llm=llm, params=params, rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))
    return get(params.name)(question, ctx)


@pytest.mark.parametrize("params", [PoGConfig(depth=2), StructGPTConfig(depth=2)], ids=["pog", "structgpt"])
def test_co_stars_need_the_walk_back_the_released_code_never_offers(kg, params):
    released = solve(kg, params)
    assert "Bo" not in released.answers and not any("Bo" in e for e in released.evidence)
    params.walk_back = True
    walked = solve(kg, params)
    assert walked.answers[:1] == ["Bo"]


def test_walk_back_defaults_to_the_released_behaviour():
    assert PoGConfig().walk_back is False and StructGPTConfig().walk_back is False


# PQ-3H's "the gender of daughter of abigail 's parent": the daughter is abigail herself.
ROUND_TRIP = ["abigail", "parents", "david", "children", "abigail", "gender", "female"]
PQ_KB = "abigail\tparents\tdavid\ndavid\tchildren\tabigail\nabigail\tgender\tfemale\ndavid\tgender\tmale\n"


def test_a_chain_back_to_the_topic_needs_no_walk_back(tmp_path):
    (tmp_path / "kb.txt").write_text(PQ_KB)
    kg = open_kg(
        EmbeddedKGConfig(name="pq", sources=[str(tmp_path / "kb.txt")], format="pathquestion"), tmp_path / "cache"
    )
    question = Question(
        "p", "the gender of daughter of abigail 's parent ?", {name_id("abigail"): "abigail"}, [["female"]]
    )
    gold = gold_hint(replace(question, meta={"path": ROUND_TRIP, "hops": 3}), None, "pathquestion")
    # Led along the whole chain, StructGPT (no topic entity carried to the next step) ended at the way
    # back to abigail: "unknown".
    for params in (StructGPTConfig(), PoGConfig()):
        assert solve(kg, params, question, gold).answers[:1] == ["female"]
