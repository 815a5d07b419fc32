"""No silent traps: a run whose KG lacks its questions' topic entities stops
before any LLM call, one's own questions and KB run with two overrides (WC2014-shaped files
here), and ``python -m kgx`` explains itself and refuses what it cannot run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgx.core.config import ConfigError
from kgx.core.sources import name_id
from kgx.run.execute import execute
from kgx.run.spec import to_run_spec
from tests import wc2014
from tests.helpers import kgx_env, swap_method
from tests.inprocess import kgx_main

SCRIPTED = ("llm=scripted", "run.progress=false")


def questions_by_id(folder: Path, *rows: tuple[str, dict]) -> Path:
    """A JSON-lines question file whose topic entities are ``{id: name}`` objects."""
    path = folder / "q.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": qid, "question": f"{qid}?", "answers": [["x"]], "topic_entities": topics}) + "\n"
            for qid, topics in rows
        )
    )
    return path


@pytest.fixture
def no_llm(monkeypatch):
    """Any LLM call, pre-flight included, or any question answered fails the test."""
    from kgx.llm.client import LLMClient

    def called(*_, **__):
        raise AssertionError("an LLM call or a question ran before the coverage check stopped the run")

    monkeypatch.setattr(LLMClient, "preflight", called)
    swap_method(monkeypatch, "lmp", called)


def test_wc2014_runs_with_two_overrides_and_no_code(compose_cfg, in_tmp, capsys):
    kb, questions = wc2014.write(in_tmp)
    spec = to_run_spec(
        compose_cfg(
            *SCRIPTED,
            "method=lmp",
            "method.depth=2",
            "dataset=custom",
            f"dataset.path={questions}",
            "kg=custom",
            f"kg.sources=[{kb}]",
            "kg.drop_inverse=_inverse",
        )
    )
    outcome = execute(spec, in_tmp)
    assert outcome.status == "FINISHED" and capsys.readouterr().err == ""  # depth 2 covers the 2-hop line
    # The log is in the order questions finished: read it in dataset order.
    rows = sorted(
        (json.loads(line) for line in (outcome.out_dir / "predictions.jsonl").read_text().splitlines()),
        key=lambda r: r["id"],
    )
    assert [r["id"] for r in rows] == ["custom-00001", "custom-00002", "custom-00003"]
    assert [r["status"] for r in rows] == ["ok", "ok", "ok"]  # topic names resolved: no fallback
    assert [r["gold"] for r in rows] == [
        [["Club_Norte", "Club Norte"]],
        [["Atlantis"]],
        [["Ana_ROCHA", "Ana ROCHA"], ["Bo_LINDQVIST", "Bo LINDQVIST"]],
    ]
    # LMP makes 2*L*T + 1 calls at most: L=2 layers, T topic entities (two on the conjunctive line).
    assert [r["calls"] for r in rows[:2]] == [5, 5] and 1 < rows[2]["calls"] <= 9
    assert "Club_Norte" in rows[0]["prediction"]["answers"][0]
    assert "(Ana_ROCHA, plays_in_club, Club_Norte)" in rows[0]["prediction"]["evidence"]
    assert all(r["scores"]["answer_recall"] == 1.0 for r in rows)
    assert outcome.summary["fallback_rate"] == 0.0


def test_too_shallow_a_depth_for_the_questions_is_warned(compose_cfg, in_tmp, capsys):
    kb, questions = wc2014.write(in_tmp)
    execute(
        to_run_spec(
            compose_cfg(
                *SCRIPTED,
                "method=lmp",
                "dataset=custom",
                f"dataset.path={questions}",
                "kg=custom",
                f"kg.sources=[{kb}]",
            )
        ),
        in_tmp,
    )
    assert (
        "kgx: warning: questions of dataset 'custom' reach up to 2 hops from their topic entities (meta hops) "
        "but method.depth=1: set method.depth=2"
    ) in capsys.readouterr().err


def test_missing_topic_entities_stop_the_run_before_any_llm_call(compose_cfg, in_tmp, no_llm):
    path = questions_by_id(in_tmp, ("a", {name_id("Ana_ROCHA"): "Ana_ROCHA"}), ("b", {"m.0_kk": "Australia"}))
    spec = to_run_spec(
        compose_cfg(*SCRIPTED, "method=lmp", "dataset=custom", f"dataset.path={path}", "dataset.kg=metaqa")
    )
    with pytest.raises(ConfigError) as info:
        execute(spec, in_tmp)
    message = str(info.value)
    assert message.startswith(
        f"dataset 'custom' on kg 'demo': 1 of 2 questions start from topic entities the KG "
        f"does not hold ({name_id('Ana_ROCHA')} (Ana_ROCHA)); every KG method"
    )
    assert message.endswith(
        "Its KG: kg=metaqa. Or kg.allow_missing_topics=true (or kg=demo on the command line) to run on this KG anyway"
    )
    assert not (in_tmp / "outputs").exists()


def test_allow_missing_topics_runs_them_as_fallbacks(compose_cfg, in_tmp, capsys):
    path = questions_by_id(in_tmp, ("a", {name_id("Ana_ROCHA"): "Ana_ROCHA"}))
    outcome = execute(
        to_run_spec(
            compose_cfg(
                *SCRIPTED, "method=lmp", "dataset=custom", f"dataset.path={path}", "kg.allow_missing_topics=true"
            )
        ),
        in_tmp,
    )
    assert [r.status for r in outcome.records] == ["fallback"]
    assert "kgx: warning: dataset 'custom' on kg 'demo': 1 of 1 questions" in capsys.readouterr().err


NONE_HELD = (
    "kgx: error: kg 'demo' holds no topic entity of dataset 'custom' (2 questions checked): a KG method would "
    "answer every question from the model's own knowledge (status fallback). Ways out: {own}kg=subgraph for a file "
    "in RoG's parquet schema; choose a KG that holds the dataset's topic entities (kg=...); a KG served by python -m "
    "kgx.kg serve (kg=sparql kg.endpoint=URL); or kg.allow_missing_topics=true to run anyway"
)


@pytest.mark.parametrize(
    "chosen, own",
    [(("kg=demo",), ""), (("dataset.kg=demo",), ""), (("dataset.kg=metaqa",), "its own KG, kg=metaqa; ")],
    ids=["kg-on-the-command-line", "the-datasets-own-kg", "another-kg"],
)
def test_a_kg_holding_no_topic_entity_of_any_question_stops_the_run_whoever_chose_it(in_tmp, no_llm, chosen, own):
    """Chosen on the command line or the dataset's own, a KG holding none of the topic entities
    would give a run of fallbacks only: it stops before any LLM call, in one line."""
    path = questions_by_id(
        in_tmp,
        ("a", {name_id("Ana_ROCHA"): "Ana_ROCHA"}),
        ("b", {name_id("Bo_LINDQVIST"): "Bo_LINDQVIST", "m.0abc": "Atlantis"}),
        ("c", {}),
    )
    done = kgx_main(in_tmp, *SCRIPTED, "method=lmp", "dataset=custom", f"dataset.path={path}", *chosen)
    assert (done.returncode, done.stderr.strip()) == (1, NONE_HELD.format(own=own))
    assert not (in_tmp / "outputs" / "runs").exists()


def test_a_sweep_on_such_a_kg_is_stopped_by_its_pre_flight_naming_the_ways_out_once(in_tmp, no_llm):
    path = questions_by_id(in_tmp, ("a", {name_id("Ana_ROCHA"): "Ana_ROCHA"}), ("b", {"m.0abc": "Atlantis"}))
    done = kgx_main(in_tmp, "-m", *SCRIPTED, "method=lmp,tog", "dataset=custom", f"dataset.path={path}", "kg=demo")
    assert done.returncode == 1
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("  - kg 'demo' holds no topic entity")]
    assert line.count("kg=subgraph") == 1 and line.endswith("or kg.allow_missing_topics=true to run anyway")
    assert "(status fallback) (2 jobs: method=lmp, method=tog): kg=subgraph for a file in RoG's" in line
    assert not list(in_tmp.glob("outputs/runs/*"))


def test_a_kg_holding_some_topic_entities_still_warns_when_chosen(in_tmp):
    path = questions_by_id(in_tmp, ("a", {name_id("Ana_ROCHA"): "Ana_ROCHA"}), ("b", {"m.0_kk": "Australia"}))
    done = kgx_main(in_tmp, *SCRIPTED, "method=lmp", "dataset=custom", f"dataset.path={path}", "kg=demo")
    assert done.returncode == 0
    assert "kgx: warning: dataset 'custom' on kg 'demo': 1 of 2 questions start from topic entities" in done.stderr


def test_unknown_topic_names_stop_the_run_with_near_matches(compose_cfg, in_tmp, no_llm):
    kb, _ = wc2014.write(in_tmp)
    path = in_tmp / "q.txt"
    path.write_text(wc2014.ONE_HOP + wc2014.ONE_HOP.replace("Ana_ROCHA", "Ana ROCHA"))
    spec = to_run_spec(
        compose_cfg(
            *SCRIPTED, "method=lmp", "dataset=custom", f"dataset.path={path}", "kg=custom", f"kg.sources=[{kb}]"
        )
    )
    with pytest.raises(ConfigError) as info:
        execute(spec, in_tmp)
    assert str(info.value).startswith(
        f"dataset 'custom' ({path}) on kg 'custom': 1 of its 2 topic entity names "
        f"name no entity of the KG: 'Ana ROCHA' (question custom-00002; near: Ana_ROCHA"
    )
    assert "Spell them as the KG names them, or set kg.allow_missing_topics=true" in str(info.value)


def test_a_kg_holding_none_of_the_names_suggests_the_kg(compose_cfg, in_tmp, no_llm):
    _, questions = wc2014.write(in_tmp)
    spec = to_run_spec(compose_cfg(*SCRIPTED, "method=lmp", "dataset=custom", f"dataset.path={questions}"))
    with pytest.raises(
        ConfigError,
        match=r"4 of its 4 topic entity names .* The KG has none of them\. Choose the KG "
        r"that holds them \(your own KB: kg=custom kg.sources=\[FILE.tsv\]\)",
    ):
        execute(spec, in_tmp)


def test_prompting_baselines_skip_the_check(compose_cfg, in_tmp):
    _, questions = wc2014.write(in_tmp)
    outcome = execute(
        to_run_spec(compose_cfg(*SCRIPTED, "method=cot", "dataset=custom", f"dataset.path={questions}")), in_tmp
    )
    assert outcome.status == "FINISHED" and len(outcome.records) == 3


# --------------------------------------------------------------------------- python -m kgx as a user runs it


def kgx(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgx", *args], cwd=cwd, capture_output=True, text=True, env=kgx_env(), timeout=300
    )


def test_help_is_kgx_own(tmp_path):
    done = kgx(tmp_path, "--help")
    assert done.returncode == 0 and done.stderr == ""
    text = done.stdout
    for expected in (
        "method      lmp (default), cgpe, cot, fidelis, gog, io,",
        "dataset     demo (default), custom, cwq,",
        "kg          the dataset's own (default), custom, demo, embedded, endpoint, freebase,",
        "llm         local (default),",
        "+experiment",
        "+sweeps",
        "python -m kgx.report",
        "python -m kgx.ui",
        "python -m kgx.score",
        "python -m kgx.datasets",
        "python -m kgx.kg",
        "outputs/runs/",
        "mlruns/",
    ):
        assert expected in text, expected
    assert "base_" not in text and "Powered by Hydra" not in text


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["method=base_io"],
            "kgx: error: method=base_io: base_io is the schema that conf/method/io.yaml extends, "
            "not a method; use method=io",
        ),
        (
            ["dataset=custom", "dataset.path={questions}"],
            "kgx: error: dataset 'custom' ({questions}) on kg 'demo': "
            "4 of its 4 topic entity names name no entity of the KG",
        ),
        (
            ["kg=pathquestion", "kg.sources=[{kb}]", "kg.store={tmp}/pq"],
            "kgx: error: {kb}:1: unknown PathQuestion relation 'plays_in_club'",
        ),
    ],
)
def test_what_cannot_run_is_one_error_line(tmp_path, args, message):
    kb, questions = wc2014.write(tmp_path)
    fill = dict(kb=kb, questions=questions, tmp=tmp_path)
    done = kgx_main(tmp_path, "llm=scripted", *(a.format(**fill) for a in args))  # an uncaught error raises here
    assert done.returncode == 1 and message.format(**fill) in done.stderr.splitlines()[-1]
    assert "Traceback" not in done.stderr and not (tmp_path / "outputs" / "runs").exists()


@pytest.mark.slow
def test_a_kg_chosen_on_the_command_line_runs_with_warnings(tmp_path):
    path = questions_by_id(tmp_path, ("a", {name_id("Ana_ROCHA"): "Ana_ROCHA"}), ("b", {"m.0_kk": "Australia"}))
    done = kgx_main(tmp_path, *SCRIPTED, f"dataset.path={path}", "kg=demo")
    assert done.returncode == 0, done.stderr
    assert (
        f"kgx: warning: dataset.path={path} runs your file as the demo dataset: named 'demo', with the demo's "
        f"dataset.limit=16 and KG; for your own questions use dataset=custom dataset.path={path}"
    ) in done.stderr
    assert "kgx: warning: dataset 'demo' on kg 'demo': 1 of 2 questions start from topic entities" in done.stderr
    assert "fallback 50.0%" in done.stdout
