"""The LLM-only baselines: prompts, answer format, and self-consistency's vote."""

from __future__ import annotations

import json
import random

import pytest

from kgx.core.config import ConfigError
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.methods import Context, cot, get
from kgx.methods.cot import CoTConfig
from kgx.methods.io import IOConfig
from kgx.methods.sc import SCConfig
from tests.doubles import FakeLLM

Q = Question(id="q1", text="What is the capital of Australia?", answers=[["Canberra"]])


def ctx(llm, params):
    return Context(llm=llm, params=params, rng=random.Random(0), trace=Trace())


def test_io_asks_once_and_formats_answers_in_braces():
    llm = FakeLLM(answer=[{"answers": [" Canberra ", "Sydney"]}])
    p = get("io")(Q, ctx(llm, IOConfig()))
    assert p.answers == ["Canberra", "Sydney"] and p.answer == "{Canberra, Sydney}"
    [call] = llm.calls
    assert call.stage == "answer" and call.prompt == f"Question: {Q.text}" and call.schema is not None


@pytest.mark.parametrize("shots", [0, 1, 3])
def test_cot_prompt_carries_the_requested_exemplars(shots):
    messages = cot.messages(Q, shots)
    assert len(messages) == 2 + 2 * shots
    assert [m["role"] for m in messages[1:-1]] == ["user", "assistant"] * shots
    assert messages[-1]["content"] == f"Question: {Q.text}"


def test_cot_answer_keeps_the_reasoning_and_the_braced_answer():
    llm = FakeLLM(answer=[{"reasoning": "Australia's capital is Canberra.", "answers": ["Canberra"]}])
    p = get("cot")(Q, ctx(llm, CoTConfig()))
    assert p.answer == "Australia's capital is Canberra. So the answer is {Canberra}."
    assert p.answers == ["Canberra"]


def test_self_consistency_takes_the_majority_after_normalisation():
    samples = [
        {"reasoning": "r", "answers": a}
        for a in (["Sydney"], ["canberra"], ["The Canberra."], ["Sydney"], ["Canberra"])
    ]
    llm = FakeLLM(answer=samples)
    p = get("sc")(Q, ctx(llm, SCConfig(n=5, temperature=0.7)))
    assert p.answers == ["canberra"] and p.reason == "majority 3/5"
    assert [call.sample for call in llm.calls] == [0, 1, 2, 3, 4]  # one call with n=5: five samples
    assert {call.temperature for call in llm.calls} == {0.7}


def test_io_with_shots_gives_input_output_pairs_before_the_question():
    """LMP App. B.1: IO "gives LLMs some specific input-output pairs as examples"; ToG's released
    IO prompt has six, the questions of its CoT prompt with their answers alone."""
    llm = FakeLLM(answer=[{"answers": ["Canberra"]}])
    get("io")(Q, ctx(llm, IOConfig(shots=6, exemplars="tog")))
    [call] = llm.calls
    pairs = call.messages[1:-1]
    assert len(pairs) == 12 and [m["role"] for m in pairs] == ["user", "assistant"] * 6
    assert pairs[0]["content"] == f"Question: {cot.EXEMPLARS['tog'][0][0]}"
    assert json.loads(pairs[1]["content"]) == {"answers": ["Danube"]}  # the answer alone, no reasoning
    assert call.prompt == f"Question: {Q.text}"


def test_the_tog_exemplars_reason_first_second_then_answer_as_knowpath_s_appendix():
    """KnowPath's appendix CoT prompt (ToG's released one): six exemplars, "First, ... Second, ..."."""
    messages = cot.messages(Q, 6, "tog")
    replies = [json.loads(m["content"]) for m in messages[2:-1:2]]
    assert len(replies) == 6 and all(r["reasoning"].startswith("First, ") for r in replies)
    assert all(" Second, " in r["reasoning"] and r["answers"] for r in replies)


@pytest.mark.parametrize(
    "config, kwargs, message",
    [
        (CoTConfig, {"shots": 4}, r"method.shots=4: must lie in \[0, 3\] \(the exemplars of method.exemplars=kgx\)"),
        (IOConfig, {"shots": 7, "exemplars": "tog"}, r"method.shots=7: must lie in \[0, 6\]"),
        (SCConfig, {"exemplars": "mine"}, "method.exemplars"),
    ],
)
def test_more_shots_than_exemplars_or_an_unknown_set_is_refused(config, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        config(**kwargs)
