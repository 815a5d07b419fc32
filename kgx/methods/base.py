"""What a method receives and the registry that maps ``method.name`` to it.

A method is a function ``answer(question, ctx) -> Prediction``. Everything it needs comes in
through ``ctx``, so a method file reads like its paper's algorithm and never touches litellm,
SPARQL or MLflow.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Optional

from kgx.config import MethodConfig
from kgx.kg.metered import MeteredKG
from kgx.llm.client import QuestionLLM
from kgx.trace import Trace
from kgx.types import Prediction, Question

Method = Callable[[Question, "Context"], Prediction]

METHODS: dict[str, Method] = {}
CHECKS: dict[str, Callable[[MethodConfig], None]] = {}


def register(name: str, check: Optional[Callable[[MethodConfig], None]] = None) -> Callable[[Method], Method]:
    """``check(params)`` runs once before any question, to fail early (e.g. a missing extra)."""
    def add(fn: Method) -> Method:
        METHODS[name] = fn
        if check is not None:
            CHECKS[name] = check
        return fn

    return add


def prepare(params: MethodConfig) -> None:
    get(params.name)
    if params.name in CHECKS:
        CHECKS[params.name](params)


def get(name: str) -> Method:
    if name not in METHODS:
        raise KeyError(f"method '{name}' is not implemented; known: {sorted(METHODS)}")
    return METHODS[name]


@dataclass
class Context:
    llm: QuestionLLM
    params: MethodConfig
    rng: random.Random
    trace: Trace
    kg: Optional[MeteredKG] = None


def braces(answers: list[str]) -> str:
    """The papers' answer format, ``{a, b}``, which ToG's scorer reads."""
    return "{" + ", ".join(answers) + "}"


def answers_schema(max_items: int = 5) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": 120},
        "minItems": 1,
        "maxItems": max_items,
    }
