"""StructGPT on the bundled demo KG: the reading-then-reasoning loop in order, its call bound, the
linearisation (CVTs included), the constraints step, discarded inventions, fallbacks and the config."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from kgx import datasets
from kgx.core.config import ConfigError, DatasetConfig
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.methods import Context, get, structgpt
from kgx.methods.structgpt import StructGPTConfig
from kgx.run.spec import to_run_spec
from tests.doubles import FakeLLM
from tests.inprocess import kgx_main

DEMO = {q.id: q for q in datasets.load(DatasetConfig())}
TOKYO = DEMO["demo-015"]  # What currency is used in the country whose capital is Tokyo?
RFK = DEMO["demo-014"]  # What government offices did Robert F. Kennedy hold? (two CVTs)
HAMLET = DEMO["demo-016"]  # Who influenced the author of Hamlet?


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("kg"))


def run(kg, question: Question, params: StructGPTConfig, llm: FakeLLM):
    trace = llm.trace or Trace()
    ctx = Context(llm=llm, params=params, rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))
    return get("structgpt")(question, ctx), trace


def offered(call) -> list[str]:
    return call.schema["properties"]["relations"]["items"]["enum"]


def unsure(call):
    """Follows the first relation offered, never pins a constraint, never has enough."""
    if call.stage == "relation_selection":
        return {"relations": offered(call)[:1]}
    if call.stage == "constraints":
        return {key: [] for key in call.schema["properties"]}
    if call.stage == "reasoning":
        return {"sufficient": False, "reasoning": "Not enough.", "answers": []}
    return {"reasoning": "From the triples.", "answers": ["Japanese yen"]}


def tokyo(call):
    """The right path: Tokyo is the capital of Japan, whose currency is the yen."""
    if call.stage == "relation_selection":
        want = (
            "location.country.capital (reverse)"
            if "Tokyo" in call.prompt.split("\n")[1] and not call.prompt.count("->")
            else "location.country.currency_used"
        )
        return {"relations": [want if want in offered(call) else offered(call)[0]]}
    if call.stage == "reasoning":
        done = "Japanese yen" in call.prompt
        return {
            "sufficient": done,
            "reasoning": "Japan uses the yen." if done else "Not yet.",
            "answers": ["Japanese yen"] if done else [],
        }
    return unsure(call)


def notes(trace: Trace, stage: str) -> list[str]:
    return [n.message for n in trace.notes(stage)]


def neighbour_queries(trace: Trace) -> list[tuple[str, str, str]]:
    return [
        (e.arguments["entity"], e.arguments["relation"], e.arguments["direction"])
        for e in trace.events
        if getattr(e, "operation", "") == "neighbors"
    ]


# --------------------------------------------------------------------------- the loop and its bound


def test_reads_then_reasons_step_by_step_with_an_exact_call_count(kg):
    llm = FakeLLM(default=tokyo)
    p, trace = run(kg, TOKYO, StructGPTConfig(), llm)
    assert llm.stages() == ["relation_selection", "reasoning", "relation_selection", "reasoning"]
    first, second = llm.prompts("relation_selection")
    assert first.startswith(
        'The candidate relations: "location.location.containedby", "location.country.capital (reverse)"'
    )
    assert 'The search starts from "Tokyo".\nRelations already followed: (none yet)' in first
    assert "Relations already followed: location.country.capital (reverse)" in second
    assert '"location.country.capital"' not in second  # the way back to Tokyo is not offered
    assert llm.prompts("reasoning")[0] == (
        "The triples are:\n(Japan, location.country.capital, Tokyo)\nQuestion: " + TOKYO.text
    )
    assert p.answers == ["Japanese yen"] and p.status == "ok" and p.reason == "answered at step 2"
    assert "(Japan, location.country.currency_used, Japanese yen)" in p.evidence
    assert p.stats == {"steps": 2.0, "answered_in_loop": 1.0}
    assert {n["label"] for n in trace.explanation["nodes"]} >= {"Tokyo", "Japan", "Japanese yen"}
    assert all(c.temperature == 0.0 for c in llm.calls)


def test_call_bound_follows_the_algorithm():
    assert structgpt.call_bound(StructGPTConfig()) == 10  # S(2 + 1) + 1 at S = 3
    assert structgpt.call_bound(StructGPTConfig(constraints=False)) == 7
    assert structgpt.call_bound(StructGPTConfig(depth=1)) == 4


def test_the_bound_is_reached_when_every_step_runs_every_call(kg):
    params = StructGPTConfig(constraints=False)
    llm = FakeLLM(default=unsure)
    p, _ = run(kg, RFK, params, llm)
    assert len(llm.calls) == structgpt.call_bound(params) == 7
    assert p.reason == "max depth: answered from the triples read" and p.status == "ok"


@pytest.mark.parametrize("constraints", [True, False])
def test_calls_stay_within_the_bound_on_every_demo_question(kg, constraints):
    params = StructGPTConfig(constraints=constraints)
    for question in DEMO.values():
        llm = FakeLLM(default=unsure)
        p, trace = run(kg, question, params, llm)
        assert 0 < len(llm.calls) <= structgpt.call_bound(params), question.id
        assert llm.stages()[-1] == "answer" and notes(trace, "answer") == [p.reason]
        assert ("constraints" in llm.stages()) <= constraints


# --------------------------------------------------------------------------- linearisation and CVTs


def test_cvts_are_read_one_hop_further_and_linearised_on_one_line(kg):
    llm = FakeLLM(default=unsure)
    run(kg, RFK, StructGPTConfig(depth=1, constraints=False), llm)
    assert offered(llm.calls[0])[0] == "government.politician.government_positions_held"
    [prompt] = llm.prompts("reasoning")
    lines = prompt.splitlines()[1:-1]
    assert len(lines) == 2  # one line per CVT reached
    senator = next(line for line in lines if "Senator" in line)
    assert senator.startswith("(Robert F. Kennedy, government.politician.government_positions_held, CVT_")
    assert "(CVT_1, government.government_position_held.basic_title, Senator)" in senator
    assert "office_holder, Robert F. Kennedy" not in prompt  # the CVT's way back to Robert F. Kennedy


def test_constraints_keep_the_cvts_the_question_pins_down(kg):
    def senate(call):
        if call.stage == "constraints":
            return {key: ["Senator"] if key.endswith("basic_title") else [] for key in call.schema["properties"]}
        return unsure(call)

    llm = FakeLLM(default=senate)
    p, trace = run(kg, RFK, StructGPTConfig(depth=1), llm)
    assert llm.stages() == ["relation_selection", "constraints", "reasoning", "answer"]
    [offer] = llm.prompts("constraints")
    assert '"government.government_position_held.basic_title": ["Attorney general", "Senator"]' in offer
    assert '"1961-01-21"' in offer and '""1961' not in offer  # a literal keeps its own quotes, once
    [prompt] = llm.prompts("reasoning")
    assert "Senator" in prompt and "Attorney general" not in prompt
    assert notes(trace, "constraints") == ["step 1: 1 of 2 CVTs kept"]


def test_a_constraint_no_cvt_holds_keeps_them_all(kg):
    def impossible(call):
        if call.stage == "constraints":
            first_title = {
                key: options["items"]["enum"][:1]
                for key, options in call.schema["properties"].items()
                if key.endswith("basic_title")
            }
            second_body = {
                key: options["items"]["enum"][-1:]
                for key, options in call.schema["properties"].items()
                if key.endswith("governmental_body")
            }
            return {key: [] for key in call.schema["properties"]} | first_title | second_body
        return unsure(call)

    llm = FakeLLM(default=impossible)
    _, trace = run(kg, RFK, StructGPTConfig(depth=1), llm)
    assert notes(trace, "constraints") == ["step 1: no CVT holds the constraints; all kept"]
    [prompt] = llm.prompts("reasoning")
    assert "Senator" in prompt and "Attorney general" in prompt


def test_the_word_budget_cuts_the_triples_and_says_so(kg):
    llm = FakeLLM(default=unsure)
    _, trace = run(kg, RFK, StructGPTConfig(depth=1, constraints=False, max_input_words=60), llm)
    [prompt] = llm.prompts("reasoning")
    assert len(prompt.splitlines()) == 3  # header, one line of triples, the question
    [cut] = [n for n in trace.notes("reasoning") if n.message == "triples cut at the word budget"]
    assert (cut.data["total"], cut.data["kept"], cut.data["budget"]) == (2, 1, 60)  # lines of 46 and 37 words


# --------------------------------------------------------------------------- bad input


def test_invented_relations_are_discarded_counted_and_never_read(kg):
    trace = Trace()
    llm = FakeLLM(
        default=lambda call: (
            {"relations": ["location.country.invented_relation"]}
            if call.stage == "relation_selection"
            else unsure(call)
        ),
        trace=trace,
        check_schema=False,
    )
    p, trace = run(kg, TOKYO, StructGPTConfig(), llm)
    assert {(stage, data.get("choice")) for stage, _, data in llm.discards} == {
        ("relation_selection", "location.country.invented_relation")
    }
    assert len(llm.discards) == 1 and llm.stages() == ["relation_selection", "answer"]
    assert not any("invented" in r for _, r, _ in neighbour_queries(trace))
    assert p.status == "fallback" and p.reason == (
        "no relation chosen at step 1: no KG facts, answered from the model's own knowledge"
    )


def test_without_a_topic_entity_the_answer_is_a_recorded_fallback(kg):
    llm = FakeLLM(default=unsure)
    p, trace = run(kg, Question("q", "Who painted the Mona Lisa?", {}, [["Leonardo da Vinci"]]), StructGPTConfig(), llm)
    assert llm.stages() == ["answer"] and "(no triples were read)" in llm.prompts("answer")[0]
    assert p.status == "fallback" and p.evidence == []
    assert p.reason == "no topic entity: no KG facts, answered from the model's own knowledge"
    assert notes(trace, "relation_selection") == ["the question names no topic entity: nothing to read"]


@pytest.mark.parametrize(
    "topics, note",
    [
        ({"m.nothere": "Nowhere"}, []),
        ({"not an id!": "Bad"}, ["cannot read the relations of not an id!: not a Freebase id: 'not an id!'"]),
    ],
)
def test_without_kg_facts_the_answer_is_a_recorded_fallback(kg, topics, note):
    llm = FakeLLM(default=unsure)
    p, trace = run(kg, Question("q", "Where is nowhere?", topics, [["x"]]), StructGPTConfig(), llm)
    assert llm.stages() == ["answer"]
    assert p.status == "fallback" and p.evidence == []
    assert p.reason == "no relation to follow at step 1: no KG facts, answered from the model's own knowledge"
    assert notes(trace, "relation_selection") == note


@pytest.mark.parametrize("filtered, shown", [(True, False), (False, True)])
def test_schema_relations_are_filtered_as_released(tmp_path, filtered, shown):
    unfiltered = open_kg(EmbeddedKGConfig(name="demo-unfiltered", filters=[]), tmp_path)
    llm = FakeLLM(default=unsure)
    run(unfiltered, TOKYO, StructGPTConfig(depth=1, filter_relations=filtered), llm)
    prompt = llm.prompts("relation_selection")[0]
    assert ('"type.object.name"' in prompt) == shown and ('"common.topic.notable_types"' in prompt)


# --------------------------------------------------------------------------- config and whole runs


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"depth": 0}, "method.depth"),
        ({"width": 0}, "method.width"),
        ({"temperature": 3.0}, "method.temperature"),
        ({"max_input_words": 0}, "method.max_input_words"),
        ({"max_retries": -1}, "method.max_retries"),
    ],
)
def test_out_of_range_values_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        StructGPTConfig(**kwargs)


def test_the_method_composes_with_the_released_defaults(compose_cfg):
    params = to_run_spec(compose_cfg("method=structgpt")).method
    assert type(params) is StructGPTConfig and params == StructGPTConfig()
    assert (params.width, params.temperature, params.max_triples_per_relation, params.max_input_words) == (
        1,
        0.0,
        60,
        3400,
    )


@pytest.mark.parametrize("dataset, depth", [("webqsp", 2), ("cwq", 3)])
def test_the_experiments_compose(compose_cfg, dataset, depth):
    spec = to_run_spec(compose_cfg(f"+experiment=structgpt_{dataset}"))
    assert type(spec.method) is StructGPTConfig and spec.method.depth == depth
    assert (spec.dataset.name, spec.kg.name) == (dataset, "freebase")


@pytest.mark.slow
def test_a_whole_run_stays_within_the_bound(tmp_path):
    done = kgx_main(
        tmp_path,
        "method=structgpt",
        "llm=scripted",
        "kg=demo",
        "dataset.limit=4",
        "run.progress=false",
        "run.explain=1",
    )
    assert done.returncode == 0, done.stderr
    assert "over 4 questions (0 errors)" in done.stdout
    [folder] = (tmp_path / "outputs" / "runs").glob("structgpt-demo-scripted-*")
    records = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(0 < r["calls"] <= structgpt.call_bound(StructGPTConfig()) for r in records)
    assert list(folder.glob("explanations/demo-001.png"))


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("KGX_DATA_DIR"), reason="needs $KGX_DATA_DIR (MetaQA 2-hop and its KB)")
def test_metaqa_2hop_questions_stay_within_the_bound(compose_cfg, in_tmp: Path, tmp_path_factory):
    from kgx.run.execute import execute

    cache = tmp_path_factory.getbasetemp() / "structgpt-metaqa-cache"
    outcome = execute(
        to_run_spec(
            compose_cfg(
                "run.progress=false",
                "method=structgpt",
                "kg=metaqa",
                "dataset=metaqa_2hop",
                "dataset.limit=20",
                "llm=scripted",
                f"run.cache_dir={cache}",
            )
        ),
        in_tmp,
    )
    assert outcome.status == "FINISHED" and len(outcome.records) == 20
    bound = structgpt.call_bound(StructGPTConfig())
    assert all(r.calls <= bound for r in outcome.records), [r.calls for r in outcome.records]
    assert "answer_recall" in outcome.summary and all("answer_recall" in r.scores for r in outcome.records)
