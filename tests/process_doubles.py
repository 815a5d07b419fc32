"""Stand-ins for ``kgx.run.answering.answerer`` in worker processes (tests/run/test_processes.py).

A worker process imports what it runs by name, so a test's monkeypatch does not reach it: a test
puts one of these in place of ``answerer`` instead, and the worker imports this module and
changes its own copy of the method."""

from __future__ import annotations

import dataclasses
import os

from kgx import methods
from kgx.core.types import Question
from kgx.kg.endpoint import KGUnavailable
from kgx.run.answering import answerer


def _swap(name: str, answer) -> None:
    methods.METHODS[name] = dataclasses.replace(methods.method(name), answer=answer)


def _number(question: Question) -> int:
    return int(question.id.split("-")[1])


def outage_answerer(*parts):
    """The KG endpoint is down from the fifth demo question on: every later question fails alike."""
    real = methods.get("cot")

    def down(question: Question, ctx):
        if _number(question) > 4:
            raise KGUnavailable("SPARQL endpoint http://127.0.0.1:9/sparql unreachable after 4 tries", "kg.unreachable")
        return real(question, ctx)

    _swap("cot", down)
    return answerer(*parts)


def dying_answerer(*parts):
    """The worker process that gets the sixth demo question dies on it (as native code or memory would)."""
    real = methods.get("cot")

    def die(question: Question, ctx):
        if _number(question) == 6:
            os._exit(3)
        return real(question, ctx)

    _swap("cot", die)
    return answerer(*parts)


def broken_answerer(*parts):
    raise FileNotFoundError("the KG store vanished")
