"""What a method receives, and the one place a method is registered.

A method is a function ``answer(question, ctx) -> Prediction``. Everything it needs comes in
through ``ctx``, so a method file reads like its paper's algorithm and never touches litellm,
SPARQL or MLflow. ``@register`` beside it names the method, its config schema (the single
source of its defaults: Hydra's ``method=<name>`` is built from it) and the LLM stages it calls,
which is what ``llm.stages.<stage>`` is checked against.
"""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

from kgx.core.config import MethodConfig
from kgx.core.registry import Registry
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


# kgx's own methods and every installed package's, through the entry-point group ``kgx.methods``.
METHODS: Registry[Method] = Registry("method", "kgx.methods")


def register(
    name: str,
    config: type[MethodConfig],
    stages: tuple[str, ...],
    check: Optional[Callable[[MethodConfig], None]] = None,
) -> Callable[[Answer], Answer]:
    """Register ``answer`` as method ``name`` with its config schema, the LLM stages it calls and
    an optional check run once before any question. The module holding it is an entry point of
    the group ``kgx.methods`` (kgx's own in its pyproject.toml, a plugin's in the plugin's)."""

    def add(fn: Answer) -> Answer:
        METHODS.register(name, Method(name, fn, config, tuple(stages), check), fn.__module__)
        return fn

    return add


def method(name: str) -> Method:
    """The method registered as ``name`` (a RegistryError names the closest ones)."""
    return METHODS.named(name)


def get(name: str) -> Answer:
    return method(name).answer


def call_bound(params: MethodConfig) -> Optional[float]:
    """The method's bound on LLM calls per question, where its module defines one
    (``call_bound(params)``, e.g. ToG's 2ND + D + 1); None otherwise. The estimate's prior on calls
    and a sweep's announced time on the local model (kgx.run.sweep_preflight) read it."""
    bound = getattr(importlib.import_module(method(params.name).answer.__module__), "call_bound", None)
    return None if bound is None else float(bound(params))


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
