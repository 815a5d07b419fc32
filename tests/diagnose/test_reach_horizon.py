"""Reachability within a method's real horizon: on a KG without CVTs, StructGPT's free CVT hop
frees nothing, so its search is the plain one (queries counted exactly on MetaQA 3-hop); the
run reports what reachability cost (``reach.queries``, ``reach.wall_s``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kgx.core.kg_config import EmbeddedKGConfig, EndpointKGConfig, KGConfig, NoiseConfig
from kgx.core.types import Horizon
from kgx.diagnose.reach import Reacher
from kgx.kg import EmbeddedKG, build_store, unnamed_possible
from tests.diagnose.test_reach import metaqa_data

CONF = Path(__file__).resolve().parents[2] / "conf" / "kg"
# KG queries of the first ten MetaQA 3-hop questions at depth 3, and with StructGPT's free CVT hop
# when the KG may hold CVTs (each level's namedness asked, wider gold-side levels).
PLAIN = [8, 4, 8, 8, 8, 8, 4, 8, 4, 4]
ASKED = [100, 6, 65, 281, 81, 91, 6, 17, 6, 6]


def kg_config(name: str) -> KGConfig:
    """``kg=<name>`` as a run composes it (its backend's schema, then conf/kg/<name>.yaml)."""
    from kgx.run.compose import register_schemas
    from kgx.run.spec import to_run_spec
    from tests.inprocess import compose_fresh

    register_schemas()
    return to_run_spec(compose_fresh("llm=scripted", f"kg={name}")).kg


def test_whether_a_kg_may_hold_unnamed_entities_comes_from_its_sources(tmp_path):
    movies = tmp_path / "kb.txt"
    movies.write_text("Alien|directed_by|Ridley Scott\nAlien|release_year|1979\n")
    replayed = tmp_path / "replay.tsv"
    replayed.write_text("Alien\tfilm.film.directed_by\tRidley Scott\nm.0101320d\tfilm.film.genre\tHorror\n")
    assert unnamed_possible(EmbeddedKGConfig(name="m", format="metaqa", sources=[str(movies)])) is False
    assert unnamed_possible(EmbeddedKGConfig(name="r", format="tsv", sources=[str(replayed)])) is True  # a mid, unnamed
    dropped = EmbeddedKGConfig(name="m", format="metaqa", sources=[str(movies)], noise=NoiseConfig(drop_names=0.1))
    assert unnamed_possible(dropped) is True
    assert unnamed_possible(EmbeddedKGConfig()) is True  # the bundled demo: Freebase triples with CVTs
    assert unnamed_possible(EndpointKGConfig(name="s", endpoint="http://localhost:1/sparql")) is True


def test_a_run_reports_what_reachability_cost(run):
    out = run("method=structgpt", "dataset.limit=4", "run.traces=off")
    spent = [r.reach for r in out.records]
    assert out.summary["reach.queries"] == sum(r.queries for r in spent) > 0
    assert out.summary["reach.wall_s"] == pytest.approx(sum(r.seconds for r in spent)) and all(
        r.seconds > 0 for r in spent
    )
    again = run("method=structgpt", "dataset.limit=4", "run.traces=off", "run.force=true")
    assert again.summary["reach.queries"] == 0  # all from the cache


@pytest.mark.slow
def test_structgpt_on_metaqa_searches_as_plain_depth_three(tmp_path_factory):
    from kgx.datasets import dataset_config, load

    kg = EmbeddedKG(build_store([metaqa_data() / "kb.txt"], "metaqa", tmp_path_factory.mktemp("kg") / "metaqa"))
    assert unnamed_possible(replace(kg_config("metaqa"), sources=[str(metaqa_data() / "kb.txt")])) is False
    questions = load(dataset_config("metaqa_3hop"))[:10]
    plain = [Reacher(kg, "metaqa", None).check(q, Horizon(3)) for q in questions]
    free = Horizon(3, cvt_free=True)
    asked = [Reacher(kg, "metaqa", None).check(q, free) for q in questions]
    known = [Reacher(kg, "metaqa", None, unnamed=False).check(q, free) for q in questions]
    assert [r.queries for r in known] == [r.queries for r in plain] == PLAIN
    assert [r.queries for r in asked] == ASKED
    # The same answer (the paths kept may differ: each search meets the other end elsewhere first)
    assert [(r.reachable, r.distance, r.gold_ids) for r in known] == [
        (r.reachable, r.distance, r.gold_ids) for r in asked
    ]
    assert all(len(path) == r.distance for r in known for path in r.paths)


def test_the_cache_is_asked_for_the_horizon_a_check_searches(tmp_path):
    """What the estimate counts as cold (``Reacher.cached``) is what a run's check finds cached:
    on a KG without CVTs a free CVT hop is looked up as the plain horizon it is searched as."""
    from kgx.core.types import Question

    question = Question(
        id="q1", text="who directed Alien", answers=[["Ridley Scott"]], topic_entities={"Alien": "Alien"}
    )
    plain, free = Horizon(2), Horizon(2, cvt_free=True)
    without_cvts = Reacher(None, "metaqa", tmp_path, unnamed=False)
    assert not without_cvts.cached(question, free)
    without_cvts.cache.put(without_cvts.key(question, plain), {"reachable": True, "depth": 2})
    assert without_cvts.cached(question, free) and without_cvts.cached(question, plain)
    assert not Reacher(None, "metaqa", tmp_path).cached(question, free)  # CVTs possible: its own search
    assert not Reacher(None, "metaqa", None).cached(question, plain)  # no cache at all
