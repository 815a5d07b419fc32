"""How a question's gold reaches the oracle backbone, and no other: the question's LLM sets it around
each call (:func:`given`), and the client puts it in an oracle request's parameters (:func:`gold_params`),
which its cache key holds too. The gold is no parameter of ``LLMClient.complete``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Optional

from kgx.llm.errors import LLMError

if TYPE_CHECKING:
    from kgx.core.config import LLMConfig
    from kgx.diagnose.gold_path import GoldHint

GOLD_PARAM = "kgx_gold"  # the request parameter the client puts the hint in (oracle requests only)
NO_GOLD = (
    "llm=oracle needs the question's gold: the run passes it per question (QuestionLLM(client, meter, trace, gold=))"
)
QUESTION_GOLD: ContextVar[Optional["GoldHint"]] = ContextVar("kgx_question_gold", default=None)
"""The gold of the question whose call is being made, in this thread: set by the question's LLM
(:func:`given`) around each call, read by the client for an oracle backbone only. The gold is no
parameter of the client's ``complete``: no other backbone's call can carry it, or need to."""


@contextmanager
def given(gold: Optional["GoldHint"]) -> Iterator[None]:
    """The calls made inside are the question's with this gold (for an oracle backbone)."""
    token = QUESTION_GOLD.set(gold)
    try:
        yield
    finally:
        QUESTION_GOLD.reset(token)


def gold_params(cfg: "LLMConfig") -> dict[str, Any]:
    """The parameter that carries the question's gold (:func:`given`) in an oracle request (the
    client adds it to no other)."""
    gold = QUESTION_GOLD.get()
    if gold is None:
        raise LLMError(f"llm '{cfg.name}' ({cfg.model}): {NO_GOLD}", "llm.oracle")
    return {GOLD_PARAM: gold.to_dict()}
