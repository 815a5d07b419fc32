"""One answer format for every method, written once so that scores compare across methods.

- :func:`answers_schema`, :func:`sufficiency_schema`, :func:`answer_schema`: the JSON a method
  asks for when it wants answers, a verdict on its evidence, or the final answer;
- :func:`clean_answers` and :func:`unnumbered`: answer strings without the list numbers, sentences,
  braces and quotes models wrap them in;
- :func:`conclusion` and :func:`braces`: the papers' answer text, which ToG's scorer reads;
- :func:`final_answer`: the ``answer`` call a search ends with.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Optional

from kgx.core.metrics import normalize
from kgx.core.types import Prediction
from kgx.llm.messages import Messages
from kgx.methods import kit
from kgx.methods.fallbacks import no_answer

if TYPE_CHECKING:
    from kgx.methods.base import Context

NUMBERING = re.compile(r"^\s*\d+[.)]\s+(?=\S)")
SENTENCE = re.compile(r"^(?:based on [^,]*,\s*)?the (?:final )?answer(?: to the question .*)? is:?\s+", re.I)


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


def sufficiency_schema(max_answers: int) -> dict[str, Any]:
    """A verdict on the evidence so far: enough to answer? then the answers (ToG, PoG, StructGPT)."""
    answers = {**answers_schema(max_answers), "minItems": 0}
    return {
        "type": "object",
        "required": ["sufficient", "reasoning", "answers"],
        "properties": {
            "sufficient": {"type": "boolean"},
            "reasoning": {"type": "string", "maxLength": 600},
            "answers": answers,
        },
    }


def answer_schema(max_answers: int) -> dict[str, Any]:
    """The final answer with its reasoning."""
    return {
        "type": "object",
        "required": ["reasoning", "answers"],
        "properties": {"reasoning": {"type": "string", "maxLength": 600}, "answers": answers_schema(max_answers)},
    }


def final_answer(
    ctx: "Context",
    messages: Messages,
    evidence: list[str],
    reason: str,
    *,
    temperature: Optional[float],
    max_answers: int,
) -> Prediction:
    """The ``answer`` call a search ends with: from ``evidence`` (status ``ok``), or with none from
    the model's own knowledge (status ``fallback``); invalid output gives no answer
    (kgx.methods.fallbacks)."""
    reply = kit.ask(
        ctx,
        "answer",
        messages,
        schema=answer_schema(max_answers),
        temperature=temperature,
        fallback=lambda exc: no_answer(ctx, exc, evidence, reason),
    )
    if isinstance(reply, Prediction):
        return reply
    answers = clean_answers(reply["answers"], max_answers)
    return Prediction(
        answer=conclusion(reply["reasoning"], answers),
        answers=answers,
        evidence=evidence,
        status="ok" if evidence else "fallback",
        reason=reason,
    )


def unnumbered(text: str) -> str:
    """Small models echo the numbered-list habit ("1. Canberra") inside JSON strings."""
    return NUMBERING.sub("", text).strip()


def clean_answers(values: Iterable[Any], limit: Optional[int] = None) -> list[str]:
    """Answer strings as a method returns them: without list numbers, the sentence a model wraps
    them in ("The answer is X."), braces or quotes; empty ones dropped; each answer once (after
    :func:`~kgx.core.metrics.normalize`), best first, at most ``limit``."""
    out: dict[str, None] = {}
    seen: set[str] = set()
    for value in values:
        text = SENTENCE.sub("", unnumbered(str(value))).strip()
        if text != str(value).strip():  # a wrapped answer may end its sentence with a full stop
            text = text.rstrip(".")
        text = text.strip("{}[]\"'").strip()
        key = normalize(text) or text
        if text and key not in seen:
            seen.add(key)
            out[text] = None
    answers = list(out)
    return answers if limit is None else answers[:limit]


def conclusion(reasoning: str, answers: list[str]) -> str:
    """The papers' answer text: the reasoning, then the answers in braces (ToG's scorer reads them)."""
    return f"{reasoning.strip()} So the answer is {braces(answers)}.".strip()
