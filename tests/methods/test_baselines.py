"""The LLM-only baselines: prompts, answer format, and self-consistency's vote."""
from __future__ import annotations

import random

import pytest

from kgx.methods.cot import CoTConfig
from kgx.methods.io import IOConfig
from kgx.methods.sc import SCConfig
from kgx.methods import Context, get
from kgx.methods import cot
from kgx.trace import Trace
from kgx.types import Question

Q = Question(id="q1", text="What is the capital of Australia?", answers=[["Canberra"]])


class FakeLLM:
    """Returns canned replies in order and records what it was asked."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls = []

    def __call__(self, stage, messages, **kw):
        self.calls.append((stage, messages, kw))
        n = kw.get("n", 1)
        if n > 1:
            return [self.replies.pop(0) for _ in range(n)]
        return self.replies.pop(0)


def ctx(llm, params):
    return Context(llm=llm, params=params, rng=random.Random(0), trace=Trace())


def test_io_asks_once_and_formats_answers_in_braces():
    llm = FakeLLM({"answers": [" Canberra ", "Sydney"]})
    p = get("io")(Q, ctx(llm, IOConfig()))
    assert p.answers == ["Canberra", "Sydney"] and p.answer == "{Canberra, Sydney}"
    stage, messages, kw = llm.calls[0]
    assert stage == "answer" and messages[-1]["content"] == f"Question: {Q.text}" and "schema" in kw


@pytest.mark.parametrize("shots", [0, 1, 3])
def test_cot_prompt_carries_the_requested_exemplars(shots):
    messages = cot.messages(Q, shots)
    assert len(messages) == 2 + 2 * shots
    assert [m["role"] for m in messages[1:-1]] == ["user", "assistant"] * shots
    assert messages[-1]["content"] == f"Question: {Q.text}"


def test_cot_answer_keeps_the_reasoning_and_the_braced_answer():
    llm = FakeLLM({"reasoning": "Australia's capital is Canberra.", "answers": ["Canberra"]})
    p = get("cot")(Q, ctx(llm, CoTConfig()))
    assert p.answer == "Australia's capital is Canberra. So the answer is {Canberra}."
    assert p.answers == ["Canberra"]


def test_self_consistency_takes_the_majority_after_normalisation():
    samples = [{"reasoning": "r", "answers": a} for a in (["Sydney"], ["canberra"], ["The Canberra."],
                                                            ["Sydney"], ["Canberra"])]
    llm = FakeLLM(*samples)
    p = get("sc")(Q, ctx(llm, SCConfig(n=5, temperature=0.7)))
    assert p.answers == ["canberra"] and p.reason == "majority 3/5"
    assert llm.calls[0][2]["n"] == 5 and llm.calls[0][2]["temperature"] == 0.7
