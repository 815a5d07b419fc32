"""What a method receives, and the one place a method is registered.

A method is a function ``answer(question, ctx) -> Prediction``. Everything it needs comes in
through ``ctx``, so a method file reads like its paper's algorithm and never touches litellm,
SPARQL or MLflow. ``@register`` beside it names the method, its config schema (the single
source of its defaults: Hydra's ``method=<name>`` is built from it) and the LLM stages it calls,
which is what ``llm.stages.<stage>`` is checked against.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

from kgx.core.config import MethodConfig
from kgx.core.trace import Trace
from kgx.core.types import Prediction, Question
from kgx.kg.metered import MeteredKG

if TYPE_CHECKING:  # the client imports litellm: composing a config or printing help need not
    from kgx.llm.question import QuestionLLM

Answer = Callable[[Question, "Context"], Prediction]


@dataclass(frozen=True)
class Method:
    """A registered method: its algorithm, schema, stages and an optional early check."""

    name: str
    answer: Answer
    config: type[MethodConfig]
    stages: tuple[str, ...]
    check: Optional[Callable[[MethodConfig], None]] = None  # runs once before any question (e.g. an extra)


METHODS: dict[str, Method] = {}


def register(
    name: str,
    config: type[MethodConfig],
    stages: tuple[str, ...],
    check: Optional[Callable[[MethodConfig], None]] = None,
) -> Callable[[Answer], Answer]:
    def add(fn: Answer) -> Answer:
        if METHODS.get(name) is not None and METHODS[name].answer is not fn:
            raise ValueError(f"method '{name}' is registered twice")
        METHODS[name] = Method(name, fn, config, tuple(stages), check)
        return fn

    return add


def method(name: str) -> Method:
    if name not in METHODS:
        raise KeyError(f"method '{name}' is not implemented; known: {sorted(METHODS)}")
    return METHODS[name]


def get(name: str) -> Answer:
    return method(name).answer


def prepare(params: MethodConfig) -> None:
    found = method(params.name)
    if found.check is not None:
        found.check(params)


@dataclass
class Context:
    llm: QuestionLLM
    params: MethodConfig
    rng: random.Random
    trace: Trace
    kg: Optional[MeteredKG] = None
