"""The real local backbone (SmolLM2-135M through llama.cpp): run in CI, about a minute.
The crash probe runs for real too, with its markers in a temp dir so it is not skipped."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from kgx.core.config import DatasetConfig, LocalModelConfig
from kgx.core.trace import Trace
from kgx.datasets import load
from kgx.llm.client import LLMClient
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.methods import Context
from kgx.methods.knowpath import KnowPathConfig, generate_inference_paths
from kgx.run.spec import llm_config

pytestmark = pytest.mark.local_model

LOCAL = replace(llm_config("local"), cache=False, max_tokens=48)
MESSAGES = [
    {"role": "system", "content": "Pick the relation that answers the question."},
    {"role": "user", "content": "Question: What is the capital of Australia?"},
]
RELATIONS = ["location.country.capital", "location.country.currency_used", "people.person.gender"]
SCHEMA = {"type": "object", "properties": {"relation": {"enum": RELATIONS}}, "required": ["relation"]}


@pytest.fixture(scope="module", autouse=True)
def _fresh_probe_markers(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KGX_LOCAL_PROBE_DIR", str(tmp_path_factory.mktemp("probes")))
        yield


def ask(llm=LOCAL, **kw):
    meter, trace = Meter(), Trace()
    value = QuestionLLM(LLMClient(llm, {}, None), meter, trace)("select", MESSAGES, **kw)
    return value, meter.total(), trace.events[-1]


def test_schema_constrains_the_choice_and_usage_is_measured():
    value, usage, event = ask(schema=SCHEMA)
    assert value["relation"] in RELATIONS
    assert usage.billed_calls == 1 and usage.parse_failures == 0
    assert 30 < usage.input_tokens < 200 and 0 < usage.output_tokens <= 48
    assert event.latency_s > 0 and usage.cost == 0.0


def test_choices_holding_quotes_and_backslashes_are_offered_intact():
    """llama-cpp-python's own converter leaves backslashes unescaped: such a choice (a KG literal
    keeps its quotes) gave an unparsable grammar and a segfault at the first decode."""
    odd = ['"1961-01-21"', "C:\\Temp", '"Weird Al" Yankovic']
    value, usage, _ = ask(schema={"type": "object", "properties": {"value": {"enum": odd}}, "required": ["value"]})
    assert value["value"] in odd and usage.parse_failures == 0


def test_temperature_zero_is_deterministic_across_calls():
    first = ask()[2].response
    ask(schema=SCHEMA)  # something else in between must not leak into the next answer
    assert ask()[2].response == first and first


def test_options_choose_the_threads():
    value, usage, _ = ask(replace(LOCAL, local=LocalModelConfig(n_threads=1)), schema=SCHEMA)
    assert value["relation"] in RELATIONS and usage.parse_failures == 0


def test_knowpaths_ipg_reply_fits_the_room_it_asks_for():
    """At llm=local's max_tokens of 256 this reply (262 tokens, about 20 s) was cut."""
    [question] = [q for q in load(DatasetConfig()) if q.id == "demo-007"]
    meter, trace = Meter(), Trace()
    ctx = Context(
        llm=QuestionLLM(LLMClient(replace(llm_config("local"), cache=False), {}, None), meter, trace),
        params=KnowPathConfig(),
        rng=random.Random(0),
        trace=trace,
        kg=None,
    )
    generate_inference_paths(question, ctx)
    [event] = [e for e in trace.events if e.kind == "llm"]
    assert event.max_tokens == 685 and 256 < event.output_tokens < 685
    assert not event.truncated and not event.error and meter.total().truncated == 0
