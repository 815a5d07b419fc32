"""The LLM client on the scripted backbone: metering, cache, retries, structured output."""

from __future__ import annotations

import litellm
import pytest

from kgx.core.config import LLMConfig
from kgx.core.trace import Trace
from kgx.llm.cache import ResponseCache
from kgx.llm.client import LLMClient
from kgx.llm.errors import LLMError, OutputError, check_keys
from kgx.llm.meter import Meter
from kgx.llm.question import QuestionLLM
from kgx.llm.structured import parse_json

QUESTION = [
    {
        "role": "user",
        "content": "Question: Which river flows through Canberra?\n"
        "Molonglo River flows through Canberra.\nSydney is a city.",
    }
]
ANSWERS = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
CHOICE = {
    "type": "object",
    "properties": {"relation": {"enum": ["people.person.gender", "geography.river.cities", "film.film.genre"]}},
    "required": ["relation"],
}


def scripted(**kw) -> LLMConfig:
    base = dict(
        name="scripted",
        model="kgx-scripted/overlap",
        structured_output=True,
        input_cost_per_token=1e-6,
        output_cost_per_token=2e-6,
        backoff_s=0.0,
    )
    return LLMConfig(**{**base, **kw})


def bound(cfg: LLMConfig, cache: ResponseCache | None = None, stages=None):
    client = LLMClient(cfg, stages or {}, cache, sleep=lambda s: None)
    meter, trace = Meter(), Trace()
    return QuestionLLM(client, meter, trace), meter, trace


def test_usage_is_the_providers_token_count_and_cost_follows_the_price():
    llm, meter, trace = bound(scripted())
    reply = llm("answer", QUESTION, schema=ANSWERS)
    assert reply == {"answer": "Molonglo River flows through Canberra."}
    u = meter.stages["answer"]
    expected_in = litellm.token_counter(model="gpt-3.5-turbo", messages=QUESTION)
    assert (u.calls, u.billed_calls, u.cached_calls, u.input_tokens) == (1, 1, 0, expected_in)
    assert u.output_tokens > 0 and u.output_tokens != 20  # a real count, not a placeholder
    assert u.cost == pytest.approx(u.input_tokens * 1e-6 + u.output_tokens * 2e-6)
    assert len(trace.events) == 1 and trace.events[0].stage == "answer"


def test_enum_choice_is_constrained_and_validated():
    llm, meter, _ = bound(scripted())
    assert llm("select", QUESTION, schema=CHOICE) == {"relation": "geography.river.cities"}


def test_unpriced_model_gives_unknown_cost_not_zero():
    llm, meter, _ = bound(scripted(input_cost_per_token=None, output_cost_per_token=None))
    llm("answer", QUESTION)
    u = meter.total()
    assert u.unpriced_calls == 1 and u.cost is None


def test_cache_serves_a_rerun_with_zero_billed_calls(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    first, m1, _ = bound(scripted(), cache)
    second, m2, t2 = bound(scripted(), ResponseCache(tmp_path / "c.sqlite"))  # as another process
    assert first("answer", QUESTION, schema=ANSWERS) == second("answer", QUESTION, schema=ANSWERS)
    a, b = m1.total(), m2.total()
    assert (a.billed_calls, a.cached_calls) == (1, 0)
    assert (b.billed_calls, b.cached_calls, b.billed_input_tokens, b.cost_usd) == (0, 1, 0, 0.0)
    assert b.input_tokens == a.input_tokens and b.output_tokens == a.output_tokens
    assert t2.events[0].cached


def test_samples_are_distinct_cache_entries(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    llm, meter, _ = bound(scripted(), cache)
    assert len(llm("answer", QUESTION, n=3, temperature=0.7)) == 3
    llm2, meter2, _ = bound(scripted(), cache)
    llm2("answer", QUESTION, n=3, temperature=0.7)
    assert meter.total().billed_calls == 3 and meter2.total().cached_calls == 3
    assert cache._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3


def test_cache_off_bills_every_call(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    for _ in range(2):
        llm, meter, _ = bound(scripted(cache=False), cache)
        llm("answer", QUESTION)
        assert meter.total().billed_calls == 1


def test_transient_failures_are_retried_and_counted():
    llm, meter, _ = bound(scripted(failure_rate=0.5, max_retries=8))
    for i in range(12):
        llm("answer", [{"role": "user", "content": f"Question: q{i}?"}])
    u = meter.total()
    assert u.billed_calls == 12 and u.retries > 0


def test_retry_budget_is_bounded():
    llm, meter, trace = bound(scripted(failure_rate=0.99, max_retries=2))
    with pytest.raises(LLMError, match="ServiceUnavailableError after 3 attempts"):
        llm("answer", QUESTION)
    assert meter.total().billed_calls == 0 and trace.events[-1].error


def test_invalid_output_is_retried_at_rising_temperature_then_given_up():
    llm, meter, trace = bound(scripted())

    def reject(value):
        raise ValueError(f"{value['relation']} is not a candidate")

    with pytest.raises(OutputError, match="after 6 tries"):
        llm("select", QUESTION, schema=CHOICE, validate=reject)
    temps = [e.temperature for e in trace.events]
    assert temps == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert meter.total().parse_failures == 6 and all(e.error for e in trace.events)


def test_validator_may_accept_on_a_later_try():
    llm, meter, trace = bound(scripted())
    seen = []

    def second_time(value):
        seen.append(value)
        if len(seen) < 2:
            raise ValueError("not yet")
        return value["relation"].upper()

    assert llm("select", QUESTION, schema=CHOICE, validate=second_time) == "GEOGRAPHY.RIVER.CITIES"
    assert meter.total().parse_failures == 1 and meter.total().calls == 2


def test_without_response_format_the_schema_is_prompted_and_parsed():
    llm, _, trace = bound(scripted(structured_output=False))
    with pytest.raises(OutputError):  # the scripted model ignores prompted schemas
        llm("answer", QUESTION, schema=ANSWERS)
    assert "JSON Schema" in trace.events[0].messages[-1]["content"]


def test_stage_backbones_are_metered_under_their_stage():
    other = scripted(name="other", input_cost_per_token=None, output_cost_per_token=None)
    llm, meter, trace = bound(scripted(), stages={"clues": other})
    llm("clues", QUESTION)
    llm("answer", QUESTION)
    assert meter.stages["clues"].unpriced_calls == 1 and meter.stages["answer"].unpriced_calls == 0


def test_missing_api_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    backbones = [
        scripted(),
        LLMConfig(name="deepseek_v3", model="deepseek/deepseek-chat", api_key_env="DEEPSEEK_API_KEY"),
    ]
    with pytest.raises(LLMError, match="DEEPSEEK_API_KEY"):
        check_keys(backbones)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "set")
    check_keys(backbones)


@pytest.mark.parametrize(
    "text, value",
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 2}\n```', {"a": 2}),
        ('Sure! {"a": 3} hope this helps', {"a": 3}),
        ('{"a": ["one\nline broken"]}', {"a": ["one\nline broken"]}),  # raw newline a small model wrote
    ],
)
def test_parse_json_finds_the_object(text, value):
    assert parse_json(text, {"type": "object"}) == value


@pytest.mark.parametrize(
    "text, message",
    [
        ("no json here", "no JSON"),
        ('{"a": ', "invalid JSON"),
        ('{"b": 1}', "schema"),
    ],
)
def test_parse_json_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        parse_json(text, {"type": "object", "required": ["a"]})


@pytest.mark.parametrize("name, prompted", [("gpt4o_mini", False), ("deepseek_v3", True), ("gpt35", True)])
def test_hosted_backbones_go_through_litellm_and_are_priced(monkeypatch, name, prompted):
    """Offline: litellm's mock_response runs the hosted call path without the network."""
    from kgx.run.spec import llm_config

    cfg = llm_config(name)
    monkeypatch.setenv(cfg.api_key_env, "test-key")
    cfg.extra = {"mock_response": '{"answer": "Molonglo River"}'}
    llm, meter, trace = bound(cfg)
    assert llm("answer", QUESTION, schema=ANSWERS) == {"answer": "Molonglo River"}
    u = meter.total()
    price = litellm.model_cost[cfg.model.split("/")[-1] if name != "deepseek_v3" else cfg.model]
    assert u.billed_calls == 1 and u.unpriced_calls == 0
    assert u.cost == pytest.approx(
        u.input_tokens * price["input_cost_per_token"] + u.output_tokens * price["output_cost_per_token"]
    )
    # gpt-4o-mini takes a JSON schema as response_format; the others get it in the prompt
    assert ("JSON Schema" in trace.events[0].messages[-1]["content"]) == prompted


def test_rate_limit_spaces_billed_calls_but_not_cache_hits(tmp_path):
    from kgx.llm.ratelimit import RateLimiter

    now = [0.0]
    cfg = scripted(rpm=2)
    client = LLMClient(cfg, {}, ResponseCache(tmp_path / "c.sqlite"))
    assert client.limiters[cfg.name].rpm == 2
    client.limiters[cfg.name] = RateLimiter(
        2, None, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s)
    )
    llm = QuestionLLM(client, Meter(), Trace())
    for i in range(3):
        llm("answer", [{"role": "user", "content": f"Question: q{i}?"}])
    assert now[0] == 60.0  # the third billed call waited for the window
    llm("answer", [{"role": "user", "content": "Question: q0?"}])  # a cache hit uses no budget
    assert now[0] == 60.0


def test_scripted_booleans_say_yes_when_one_line_outside_the_question_covers_half_its_words():
    import json

    from kgx.llm.scripted import reply

    schema = {"type": "object", "properties": {"answerable": {"type": "boolean"}}, "required": ["answerable"]}

    def answerable(content: str) -> bool:
        return json.loads(reply([{"role": "user", "content": content}], schema))["answerable"]

    assert answerable("Canberra <- location.country.capital <- Australia\nQuestion: What is the capital of Australia?")
    assert not answerable(
        "Australia -> location.country.currency_used -> Australian dollar\n"
        "Question: Which river flows through the capital of Australia?"
    )
    assert not answerable("Question: What is the capital of Australia?")
    assert not answerable("Canberra is a city.\nQuestion: Who is it?")  # no content words to cover
