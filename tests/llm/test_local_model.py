"""The real local backbone (SmolLM2-135M through llama.cpp): run in CI, about half a minute.
The crash probe runs for real too, with its markers in a temp dir so it is not skipped."""
from __future__ import annotations

from dataclasses import replace

import pytest

from kgx.config import LocalModelConfig
from kgx.llm.client import LLMClient
from kgx.llm.usage import Meter
from kgx.spec import llm_config
from kgx.trace import Trace

pytestmark = pytest.mark.local_model

LOCAL = replace(llm_config("local"), cache=False, max_tokens=48)
MESSAGES = [{"role": "system", "content": "Pick the relation that answers the question."},
            {"role": "user", "content": "Question: What is the capital of Australia?"}]
RELATIONS = ["location.country.capital", "location.country.currency_used", "people.person.gender"]
SCHEMA = {"type": "object", "properties": {"relation": {"enum": RELATIONS}}, "required": ["relation"]}


@pytest.fixture(scope="module", autouse=True)
def _fresh_probe_markers(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KGX_LOCAL_PROBE_DIR", str(tmp_path_factory.mktemp("probes")))
        yield


def ask(llm=LOCAL, **kw):
    meter, trace = Meter(), Trace()
    value = LLMClient(llm, {}, None).bind(meter, trace)("select", MESSAGES, **kw)
    return value, meter.total(), trace.events[-1]


def test_schema_constrains_the_choice_and_usage_is_measured():
    value, usage, event = ask(schema=SCHEMA)
    assert value["relation"] in RELATIONS
    assert usage.billed_calls == 1 and usage.parse_failures == 0
    assert 30 < usage.input_tokens < 200 and 0 < usage.output_tokens <= 48
    assert event.latency_s > 0 and usage.cost == 0.0


def test_temperature_zero_is_deterministic_across_calls():
    first = ask()[2].response
    ask(schema=SCHEMA)  # something else in between must not leak into the next answer
    assert ask()[2].response == first and first


def test_options_choose_the_threads():
    value, usage, _ = ask(replace(LOCAL, local=LocalModelConfig(n_threads=1)), schema=SCHEMA)
    assert value["relation"] in RELATIONS and usage.parse_failures == 0
