"""Reachability of gold answers (kgx.diagnose.reach): distances and paths on the demo KG, checked against
a plain whole-graph search; CVTs, caps, the cache, and MetaQA figures (shared data)."""

from __future__ import annotations

import heapq
import json
import os
import shutil
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kgx.core.kg_config import DEFAULT_FILTERS
from kgx.core.reachability import Reach, Step
from kgx.core.types import Horizon, Question
from kgx.diagnose.reach import Reacher
from kgx.kg import BUNDLED_KG, EmbeddedKG, KGError, build_store
from kgx.kg.freebase import NAME, is_literal, keep_relation
from kgx.kg.sparql import node

DEMO_QUESTIONS = BUNDLED_KG.parent / "questions.jsonl"
CANBERRA, AUSTRALIA = "m.04k0", "m.0_kk"
RFK, ATTORNEY_GENERAL = "m.08qesu", "m.0lzine"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return build_store([BUNDLED_KG], "nt", tmp_path_factory.mktemp("kg") / "demo")


@pytest.fixture(scope="module")
def kg(store) -> EmbeddedKG:
    return EmbeddedKG(store)


def demo_questions() -> list[Question]:
    rows = [json.loads(line) for line in DEMO_QUESTIONS.read_text().splitlines()]
    return [
        Question(
            r["id"], r["question"], r["topic_entities"], r["answers"], {**r["meta"], "answer_ids": r["answer_ids"]}
        )
        for r in rows
    ]


def demo(question_id: str) -> Question:
    return next(q for q in demo_questions() if q.id == question_id)


def assert_walkable(kg: EmbeddedKG, reach: Reach, question: Question) -> None:
    """Every path starts at a topic entity, ends at a gold answer, and each step is an edge."""
    assert reach.paths
    for path in reach.paths:
        assert path[0].source in question.topic_entities and path[-1].target in reach.gold_ids
        assert all(a.target == b.source for a, b in zip(path, path[1:]))
        for step in path:
            assert step.target in kg.neighbors(step.source, step.relation, step.direction), step


def test_a_one_hop_answer_is_reachable_at_depth_one_with_its_path(kg):
    question = demo("demo-001")
    reach = Reacher(kg, "demo", None).check(question, Horizon(1))
    assert (reach.reachable, reach.distance, reach.depth, reach.reason) == (True, 1, 1, "")
    assert reach.gold_ids == [CANBERRA]
    assert Step(AUSTRALIA, "location.country.capital", "out", CANBERRA) in [p[0] for p in reach.paths]
    assert all(len(p) == 1 for p in reach.paths)
    assert_walkable(kg, reach, question)
    assert reach.names[CANBERRA] == "Canberra" and reach.names[AUSTRALIA] == "Australia"
    assert reach.queries == 3  # out and in edges of Australia, then the labels


def test_below_its_distance_an_answer_is_unreachable(kg):
    reach = Reacher(kg, "demo", None).check(demo("demo-001"), Horizon(0))
    assert (reach.reachable, reach.distance, reach.paths, reach.reason) == (False, None, [], "")


def test_gold_answers_that_are_not_in_the_kg_give_unknown(kg):
    question = Question("x", "?", {AUSTRALIA: "Australia"}, [["Atlantis"]], {"answer_ids": ["m.0nowhere"]})
    reach = Reacher(kg, "demo", None).check(question, Horizon(2))
    assert (reach.reachable, reach.reason) == (None, "no gold answer is a node of the KG")
    by_name = Reacher(kg, "demo", None).check(Question("y", "?", {AUSTRALIA: "Australia"}, [["Atlantis"]]), Horizon(2))
    assert (by_name.reachable, by_name.reason) == (None, "no gold answer is a node of the KG")


def test_gold_answers_without_ids_are_found_by_exact_name(kg):
    question = Question("x", "capital?", {AUSTRALIA: "Australia"}, [["Canberra", "Canberra City"]])
    reach = Reacher(kg, "demo", None).check(question, Horizon(1))
    assert (reach.reachable, reach.distance, reach.gold_ids) == (True, 1, [CANBERRA])
    assert reach.queries == 4  # the name lookup, then as with the id


def test_a_gold_value_is_met_as_a_literal(kg):
    ibsen = demo("demo-006")  # born "1828-03-20", an xsd:date in the KG
    reach = Reacher(kg, "demo", None).check(ibsen, Horizon(1))
    assert (reach.reachable, reach.distance, reach.gold_ids) == (True, 1, ['"1828-03-20"'])
    assert reach.paths == [[Step("m.0i836z", "people.person.date_of_birth", "out", '"1828-03-20"')]]
    assert_walkable(kg, reach, ibsen)
    by_alias = Question("x", "born?", ibsen.topic_entities, ibsen.answers)  # no ids: aliases tried as values
    assert Reacher(kg, "demo", None).check(by_alias, Horizon(1)).distance == 1


def test_a_hop_out_of_a_cvt_is_free_only_when_the_horizon_says_so(kg):
    question = demo("demo-014")  # RFK -> government position held (CVT) -> office
    reacher = Reacher(kg, "demo", None)
    counted, free = reacher.check(question, Horizon(2)), reacher.check(question, Horizon(1, cvt_free=True))
    assert (counted.reachable, counted.distance, free.reachable, free.distance) == (True, 2, True, 1)
    assert reacher.check(question, Horizon(1)).reachable is False
    through_cvt = [p for p in free.paths if p[-1].target == ATTORNEY_GENERAL]
    assert through_cvt and all(len(p) == 2 and not kg.named([p[0].target]) for p in through_cvt)
    assert through_cvt[0][0].source == RFK and through_cvt[0][1].direction in ("in", "out")
    assert_walkable(kg, free, question)
    assert_walkable(kg, counted, question)


def whole_graph_distances(kg: EmbeddedKG, topics: list[str], cvt_free: bool) -> dict[str, int]:
    """The reference: Dijkstra over every edge of the KG, loaded at once, no batching or meeting."""
    adjacent: dict[str, set[str]] = {}
    for row in kg.select("SELECT ?s ?p ?o WHERE { ?s ?p ?o }"):
        s, p, o = node(row["s"]), node(row["p"]), node(row["o"])
        if keep_relation(p, DEFAULT_FILTERS):
            adjacent.setdefault(s, set()).add(o)
            adjacent.setdefault(o, set()).add(s)
    named = {node(r["e"]) for r in kg.select(f"SELECT DISTINCT ?e WHERE {{ ?e <{NAME}> ?n }}")}
    dist = dict.fromkeys(topics, 0)
    heap = [(0, t) for t in topics]
    while heap:
        cost, here = heapq.heappop(heap)
        if cost > dist[here] or is_literal(here):
            continue
        step = 0 if cvt_free and here not in named else 1
        for there in adjacent.get(here, ()):
            if cost + step < dist.get(there, 1 << 30):
                dist[there] = cost + step
                heapq.heappush(heap, (cost + step, there))
    return dist


@pytest.mark.parametrize("cvt_free", [False, True])
def test_distances_match_a_whole_graph_search_on_every_demo_question(kg, cvt_free):
    reacher = Reacher(kg, "demo", None)
    for question in demo_questions():
        dist = whole_graph_distances(kg, list(question.topic_entities), cvt_free)
        golds = [a if a.startswith("m.") else f'"{a}"' for a in question.meta["answer_ids"]]
        expected = min(dist[g] for g in golds if g in dist)
        for depth in sorted({max(expected - 1, 0), expected}):
            reach = reacher.check(question, Horizon(depth, cvt_free))
            assert (reach.reachable, reach.distance) == ((False, None) if depth < expected else (True, expected)), (
                question.id,
                depth,
            )
            if reach.paths:
                assert_walkable(kg, reach, question)


def test_queries_per_question_stay_few(kg):
    reacher = Reacher(kg, "demo", None)
    plain = [reacher.check(q, Horizon(q.meta["hops"])).queries for q in demo_questions()]
    free = [reacher.check(q, Horizon(q.meta["hops"], cvt_free=True)).queries for q in demo_questions()]
    assert max(plain) == 9 and sum(plain) / len(plain) < 5
    assert max(free) <= 26 and sum(free) / len(free) < 12  # plus one namedness query per level


def test_a_frontier_over_the_cap_gives_unknown_with_the_cap(kg):
    question = demo("demo-020")  # 3 hops from the Pittsburgh Steelers
    reach = Reacher(kg, "demo", None, max_frontier=1).check(question, Horizon(3))
    assert (reach.reachable, reach.distance, reach.paths) == (None, None, [])
    assert reach.reason.startswith("frontier cap 1 reached at level 2 (")
    assert Reacher(kg, "demo", None, max_frontier=1).check(demo("demo-001"), Horizon(1)).reachable is True


def test_a_second_reacher_reads_the_cache(kg, tmp_path):
    question = demo("demo-014")
    first = Reacher(kg, "demo-kg", tmp_path)
    searched = first.check(question, Horizon(2))
    first.close()
    [db] = (tmp_path / "reach").glob("*.sqlite")
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone() == ("wal",)
    second = Reacher(kg, "demo-kg", tmp_path)
    again = second.check(question, Horizon(2))
    assert (again.cached, again.queries, searched.cached) == (True, 0, False) and searched.queries > 0
    assert {**answer(again), "cached": False, "queries": searched.queries} == answer(searched)
    assert again.paths == searched.paths and isinstance(again.paths[0][0], Step)
    other_depth = second.check(question, Horizon(3))
    assert (other_depth.cached, other_depth.queries > 0) == (False, True)
    assert Reacher(kg, "another-kg", tmp_path).check(question, Horizon(2)).cached is False
    second.close()


def answer(reach: Reach) -> dict:
    """A result without the time it took, which no two checks share."""
    return {k: v for k, v in reach.to_dict().items() if k != "seconds"}


class Down(EmbeddedKG):
    def _select(self, query: str):
        raise KGError("endpoint down")


def test_a_kg_failure_is_unknown_and_not_cached(kg, store, tmp_path):
    reach = Reacher(Down(store), "demo", tmp_path).check(demo("demo-001"), Horizon(1))
    assert (reach.reachable, reach.reason, reach.queries) == (None, "kg: KGError: endpoint down", 1)
    assert Reacher(kg, "demo", tmp_path).check(demo("demo-001"), Horizon(1)).cached is False


def test_threads_share_one_reacher(kg, tmp_path):
    questions = demo_questions()
    alone = [answer(Reacher(kg, "demo", None).check(q, Horizon(2))) for q in questions]
    reacher = Reacher(kg, "demo", tmp_path)
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda q: answer(reacher.check(q, Horizon(2))), questions))
    assert together == alone
    assert all(reacher.check(q, Horizon(2)).cached for q in questions)
    reacher.close()


def test_a_result_round_trips_through_json(kg):
    reach = Reacher(kg, "demo", None).check(demo("demo-014"), Horizon(2))
    assert Reach.from_dict(json.loads(json.dumps(reach.to_dict()))) == reach


def test_an_endpoint_gives_the_same_answers_as_the_embedded_store(kg, store):
    """Virtuoso, the engine of the papers' Freebase endpoints: batched VALUES pairs, typed
    literal forms and the name lookup run there as on Oxigraph."""
    if not shutil.which("virtuoso-t"):
        if os.environ.get("CI"):
            pytest.fail("CI must run the Virtuoso reachability test, but virtuoso-t is not on PATH")
        pytest.skip("virtuoso-t not on PATH: apt-get install virtuoso-opensource")
    from kgx.kg import EndpointKG
    from kgx.kg.virtuoso import VirtuosoServer

    questions = [demo(i) for i in ("demo-001", "demo-006", "demo-014", "demo-020", "demo-037")]
    questions.append(Question("x", "capital?", {AUSTRALIA: "Australia"}, [["Canberra"]]))
    with VirtuosoServer(store) as server:
        endpoint = EndpointKG(server.url, default_graph=server.graph)
        for horizon in (Horizon(2), Horizon(3, cvt_free=True)):
            for question in questions:
                there = answer(Reacher(endpoint, "virtuoso", None).check(question, horizon))
                assert there == answer(Reacher(kg, "oxigraph", None).check(question, horizon)), question.id


def metaqa_data() -> Path:
    """The shared MetaQA files, or a skip (a failure in CI, which must run this)."""
    data = Path(os.environ.get("KGX_DATA_DIR") or "/nonexistent") / "metaqa"
    if not (data / "kb.txt").is_file() or not (data / "2-hop").is_dir():
        message = "needs $KGX_DATA_DIR with metaqa/kb.txt and metaqa/2-hop"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the MetaQA reachability test, but it {message}")
        pytest.skip(message)
    return data


@pytest.mark.slow
def test_metaqa_two_hop_answers_are_reachable_at_depth_two(tmp_path_factory):
    from kgx.core.sources import name_id
    from kgx.datasets import dataset_config, load

    kg = EmbeddedKG(build_store([metaqa_data() / "kb.txt"], "metaqa", tmp_path_factory.mktemp("kg") / "metaqa"))
    questions = load(dataset_config("metaqa_2hop"))[:20]
    reacher = Reacher(kg, "metaqa", None)
    at_two = [reacher.check(q, Horizon(2)) for q in questions]
    at_one = [reacher.check(q, Horizon(1)) for q in questions]
    assert sum(r.reachable is True for r in at_two) >= 19
    assert sum(r.reachable is True for r in at_one) < sum(r.reachable is True for r in at_two)
    assert all(r.distance == 2 and r.queries <= 8 for r in at_two if r.reachable)
    for question, reach in zip(questions, at_two):
        assert set(reach.gold_ids) == {name_id(a) for answer in question.answers for a in answer}
        if reach.reachable:
            assert_walkable(kg, reach, question)
