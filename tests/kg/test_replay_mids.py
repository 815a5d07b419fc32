"""CWQ on the replay KG: the questions name Freebase mids, the KG ids entities by name, and the
dataset gives each mid's name, so topic resolution finds them by it (shared data needed)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from kgx.core.sources import name_id
from kgx.core.types import Question

pytestmark = pytest.mark.skipif(
    not os.environ.get("KGX_DATA_DIR"), reason="KGX_DATA_DIR is unset: point it at the shared benchmark data"
)
REPLAY = ("dataset=cwq", "kg=replay", "kg.sources=[replay_kg/cwq_replay_kg.tsv]", "run.traces=off", "run.explain=0")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One built replay store for the module's runs."""
    return tmp_path_factory.mktemp("cache")


def test_cwq_topic_mids_become_the_replay_entities_of_their_names(run, cache, capsys):
    out = run("method=tog", *REPLAY, "dataset.limit=6", f"run.cache_dir={cache}")
    assert out.summary["fallback_rate"] == 0.0  # every question fell back before
    assert out.summary["reachable"] > 50
    assert (
        "9 of 9 topic entity ids the KG lacks were found by the name the dataset gives them" in capsys.readouterr().err
    )


def test_only_mids_the_kg_lacks_move_and_only_to_a_named_entity(compose_cfg, cache):
    from kgx.datasets import load
    from kgx.kg import open_kg
    from kgx.run.preflight import resolve_mids
    from kgx.run.spec import to_run_spec

    spec = to_run_spec(compose_cfg("method=tog", *REPLAY, "dataset.limit=3", f"run.cache_dir={cache}"))
    kg = open_kg(spec.kg, cache)
    first, *rest = load(spec.dataset)
    assert first.topic_entities == {"m.03_dwn": "Lou Seal"}
    made_up = Question("x", "?", {"m.0zzzzzz": "No Such Name kgx", "m.0101320d": "plural"}, [["a"]])
    moved = resolve_mids([first, *rest, made_up], kg)
    assert moved[0].topic_entities == {name_id("Lou Seal"): "Lou Seal"}
    assert all(set(q.topic_entities) == {name_id(n) for n in q.topic_entities.values()} for q in moved[:3])
    assert moved[3].topic_entities == made_up.topic_entities  # an unknown name, and a mid the KG holds
    assert resolve_mids([replace(first, topic_entities={})], kg)[0].topic_entities == {}
