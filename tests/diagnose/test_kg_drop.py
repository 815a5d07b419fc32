"""kg.drop, GoG's incomplete KGs for every method: the crucial pairs of a question's gold path, the
seeded draw, the view without them (relations, neighbours, edges, CVT labels), the refusals, and a
run's record of it: the params and metrics it logs, the oracle's knowledge from the whole KG and the
failure labels from the view."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgx.core.config import ConfigError
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.core.usage import KGUsage
from kgx.diagnose import crucial
from kgx.kg import open_kg
from kgx.kg.noise import Noise, pair
from tests.films import (
    DIRECTORS,
    HEAT,
    LUMET,
    MANN,
    PACINO,
    SERPICO,
    films_config,
    oracle_overrides,
    records,
    write_questions,
)
from tests.helpers import mlflow_run
from tests.inprocess import kgx_main

CRUCIAL = sorted([pair(PACINO, HEAT), pair(PACINO, SERPICO), pair(HEAT, MANN), pair(SERPICO, LUMET)])


config = films_config


def test_the_crucial_pairs_are_the_gold_chain_walked_to_the_gold_answers(films_kg):
    assert crucial.crucial_pairs(DIRECTORS, films_kg, "metaqa") == CRUCIAL
    no_chain = Question("q2", "what is Heat", {HEAT: "Heat"}, [["1995"]])
    assert crucial.crucial_pairs(no_chain, films_kg, "metaqa") == []


def test_a_view_without_pairs_loses_every_edge_between_them_and_only_there(films_kg):
    view = films_kg.without(frozenset([pair(PACINO, HEAT), pair(HEAT, MANN)]))
    assert view.neighbors(PACINO, "film.film.starring", "in") == [SERPICO]
    assert films_kg.neighbors(PACINO, "film.film.starring", "in") == sorted([HEAT, SERPICO])  # the whole KG is intact
    assert "film.film.directed_by" not in view.relations(HEAT, "out")
    assert view.relations(HEAT, "out") == ["film.film.release_year", "film.film.starring"]
    assert "film.film.directed_by" in films_kg.relations(HEAT, "out")
    assert (HEAT, "film.film.directed_by", MANN) not in view.edges([HEAT], "out")
    assert view.view != films_kg.view and view.without(frozenset()) is view


def test_an_unnamed_node_is_not_described_by_a_neighbour_cut_from_it(tmp_path):
    demo = open_kg(EmbeddedKGConfig(), tmp_path)
    rfk, office = "m.08qesu", "m.0irs7"  # Robert F. Kennedy and one of his positions held (a CVT)
    assert "office_holder: Robert F. Kennedy" in demo.names([office])[office]
    assert "Robert F. Kennedy" not in demo.without(frozenset([pair(rfk, office)])).names([office])[office]


def test_every_pair_dropped_at_one_and_none_at_zero(films_kg, films_kb):
    whole = crucial.cut(DIRECTORS, films_kg, config(films_kb, drop=1.0), run_seed=0)
    assert whole.removed == tuple(CRUCIAL) and whole.crucial == 4 and whole.triples == 4
    assert whole.kg.relations(PACINO, "in") == []  # no film of his is left
    nothing = crucial.cut(DIRECTORS, films_kg, config(films_kb), run_seed=0)
    assert nothing.kg is films_kg and nothing.crucial == 0 and not nothing.removed


def test_the_draw_is_seeded_by_drop_seed_else_the_run_seed(films_kg, films_kb):
    def removed(seed, run_seed=0, share=0.5):
        return crucial.cut(DIRECTORS, films_kg, config(films_kb, drop=share, drop_seed=seed), run_seed).removed

    draws = {seed: removed(seed) for seed in range(12)}
    assert removed(3) == draws[3] and len(set(draws.values())) > 1  # the seed decides, and decides again alike
    assert removed(None, run_seed=5) == draws[5] and removed(5, run_seed=7) == draws[5]
    assert all(set(r) <= set(CRUCIAL) for r in draws.values())
    shares = [len(removed(seed, share=0.25)) for seed in range(200)]
    assert 0.2 < sum(shares) / (4 * len(shares)) < 0.3  # each pair with probability kg.drop


def test_the_noise_cut_leaves_random_noise_as_it_was():
    noisy = Noise(drop_relations=0.3, seed=1)
    assert not Noise().cuts_edges and noisy.cuts_edges and Noise(cut=frozenset([("a", "b")])).cuts_edges
    assert Noise(cut=frozenset([("a", "b")])).drops_edge("b", "r", "a")
    edges = [("s", "r", str(i)) for i in range(50)]
    assert [noisy.drops_edge(*e) for e in edges] == [
        Noise(drop_relations=0.3, seed=1, cut=frozenset()).drops_edge(*e) for e in edges
    ]


def test_what_was_dropped_is_counted_and_noted(films_kg, films_kb):
    cut, usage, trace = crucial.cut(DIRECTORS, films_kg, config(films_kb, drop=1.0), 0), KGUsage(), Trace()
    crucial.record(cut, usage, trace)
    assert (usage.crucial, usage.cut, usage.dropped) == (4, 4, 4)
    assert [n.message for n in trace.notes("kg")] == ["kg.drop: 4 of 4 crucial entity pairs removed (4 triples)"]


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_a_share_outside_zero_to_one_is_refused(share):
    with pytest.raises(ConfigError, match=rf"kg.drop={share}: must lie in \[0, 1\]"):
        EmbeddedKGConfig(drop=share)


def test_a_dataset_without_gold_paths_is_refused_with_the_reason(films_kb):
    no_chain = Question("q2", "what is Heat", {HEAT: "Heat"}, [["1995"]])
    crucial.check(config(films_kb, drop=0.4), "films", [DIRECTORS])  # a gold chain: accepted
    crucial.check(config(films_kb), "films", [no_chain])  # no drop: nothing to check
    with pytest.raises(ConfigError, match=r"kg.drop=0.4: 1 of 2 questions of dataset 'films' have no gold path.*q2"):
        crucial.check(config(films_kb, drop=0.4), "films", [DIRECTORS, no_chain])


# --------------------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def questions(films_kb) -> Path:
    return write_questions(films_kb.parent, [["Michael Mann"], ["John Frankenheimer"]])


def films_run(tmp_path: Path, films_kb: Path, questions: Path, *overrides: str):
    return kgx_main(tmp_path, *oracle_overrides(films_kb, questions, tmp_path / "cache"), *overrides)


def test_a_run_logs_the_share_and_what_it_removed(tmp_path, films_kb, questions):
    done = films_run(tmp_path, films_kb, questions, "method=tog", "kg.drop=1.0", "kg.drop_seed=3")
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split("mlflow run ")[1].split()[0]
    run = mlflow_run(tmp_path, run_id)
    assert run.data.params["kg.drop"] == "1.0" and run.data.params["kg.drop_seed"] == "3"
    assert run.data.metrics["kg_dropped_share"] == 100.0 and run.data.metrics["kg_dropped_per_q"] == 4.0
    assert run.data.metrics["hits1"] == 0.0  # ToG reads only the KG: every gold film is cut off
    for record in records(tmp_path).values():
        # the failure labels come from the KG the method read: no gold answer is reachable there
        assert record["kg"]["cut"] == 4 and record["reach"]["reachable"] is False
        assert record["breakdown"] == "fallback" and record["prediction"]["answers"] == ["unknown"]


def test_without_a_drop_nothing_is_logged_of_it(tmp_path, films_kb, questions):
    done = films_run(tmp_path, films_kb, questions, "method=tog")
    assert done.returncode == 0, done.stderr
    run = mlflow_run(tmp_path, done.stdout.split("mlflow run ")[1].split()[0])
    assert "kg_dropped_per_q" not in run.data.metrics and run.data.metrics["hits1"] == 100.0


def test_a_drop_on_a_dataset_without_gold_paths_stops_before_any_question(tmp_path):
    done = kgx_main(tmp_path, "method=tog", "llm=scripted", "kg.drop=0.4", f"run.cache_dir={tmp_path / 'cache'}")
    assert done.returncode != 0
    line = done.stderr.strip().splitlines()[-1]
    assert "kg.drop=0.4" in line and "have no gold path" in line and "Traceback" not in done.stderr
    assert not list(tmp_path.glob("outputs/runs/*/predictions.jsonl"))


def test_a_share_outside_zero_to_one_stops_the_run_with_one_line(tmp_path):
    done = kgx_main(tmp_path, "method=tog", "llm=scripted", "kg.drop=1.5")
    assert done.returncode != 0 and "kg.drop=1.5: must lie in [0, 1]" in done.stderr
    assert "Traceback" not in done.stderr


def test_runs_on_the_whole_kg_keep_their_config_hash(compose_cfg):
    """kg.drop enters a run's identity only when set: every run from before it keeps its hash."""
    from kgx.run.lifecycle import config_hash
    from kgx.run.spec import to_run_spec

    whole = to_run_spec(compose_cfg("llm=scripted"))
    assert not {"drop", "drop_seed"} & set(whole.identity()["kg"])
    dropped = to_run_spec(compose_cfg("llm=scripted", "kg.drop=0.4"))
    seeded = to_run_spec(compose_cfg("llm=scripted", "kg.drop=0.4", "kg.drop_seed=1"))
    assert dropped.identity()["kg"]["drop"] == 0.4 and seeded.identity()["kg"]["drop_seed"] == 1
    assert len({config_hash(whole), config_hash(dropped), config_hash(seeded)}) == 3
