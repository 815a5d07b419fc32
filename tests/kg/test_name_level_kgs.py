"""Name-level datasets meet their KGs: topic entities of MetaQA and PathQuestion questions are
ids the built KG knows, and gold answers lie where the questions say (shared data needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgx.core.kg_config import KGConfig
from kgx.core.metrics import normalize
from kgx.datasets import dataset_config, load
from kgx.kg import open_kg

pytestmark = pytest.mark.skipif(
    not os.environ.get("KGX_DATA_DIR"), reason="KGX_DATA_DIR is unset: point it at the shared benchmark data"
)
CONF = Path(__file__).resolve().parents[2] / "conf" / "kg"


def kg_config(name: str) -> KGConfig:
    """``kg=<name>`` as a run composes it (its backend's schema, then conf/kg/<name>.yaml)."""
    from kgx.run.compose import register_schemas
    from kgx.run.spec import to_run_spec
    from tests.inprocess import compose_fresh

    register_schemas()
    return to_run_spec(compose_fresh("llm=scripted", f"kg={name}")).kg


@pytest.mark.parametrize("dataset, kg_name", [("metaqa_1hop", "metaqa"), ("pq_2h", "pathquestion")])
def test_topic_entities_are_kg_ids_and_one_hop_answers_are_neighbours(tmp_path_factory, dataset, kg_name):
    kg = open_kg(kg_config(kg_name), tmp_path_factory.mktemp("cache"))
    questions = load(dataset_config(dataset))[:30]
    found = 0
    for q in questions:
        ((topic, name),) = q.topic_entities.items()
        assert kg.names([topic]) == {topic: name}
        reached = {
            normalize(label)
            for d in ("out", "in")
            for r in kg.relations(topic, d)
            for label in kg.names(kg.neighbors(topic, r, d)).values()
        }
        found += any(normalize(alias) in reached for gold in q.answers for alias in gold)
    if dataset == "metaqa_1hop":
        assert found == len(questions)  # the data README: 1-hop answers are all in the KB
    else:
        assert found > 0
