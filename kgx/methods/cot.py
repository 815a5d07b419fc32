"""Chain-of-thought prompting (Wei et al. 2022): few-shot multi-hop exemplars, then the question.

The exemplars are written for kgx; each reasons hop by hop to entities, the way the papers'
CoT baselines are prompted, and ends in the same JSON reply the model must give.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kgx.core.config import ConfigError, MethodConfig
from kgx.core.types import Prediction, Question
from kgx.methods.answers import answers_schema, clean_answers, conclusion
from kgx.methods.base import Context, register
from kgx.methods.fallbacks import no_answer
from kgx.methods.kit import ask


@dataclass
class CoTConfig(MethodConfig):
    name: str = "cot"
    shots: int = 3  # few-shot multi-hop exemplars in the prompt

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.shots < 0:
            raise ConfigError(f"method.shots={self.shots}: must be >= 0")


SYSTEM = (
    "You answer questions from your own knowledge. Think step by step, one fact per step, "
    "then give the answer entities, most likely first."
)

EXEMPLARS: list[tuple[str, str, list[str]]] = [
    (
        "Which language is official in the country whose capital is Lima?",
        "Lima is the capital of Peru. The official languages of Peru are Spanish, Quechua and Aymara.",
        ["Spanish", "Quechua", "Aymara"],
    ),
    (
        "Who directed the film in which Tom Hanks played Forrest Gump?",
        "Tom Hanks played Forrest Gump in the film Forrest Gump (1994). That film was directed by Robert Zemeckis.",
        ["Robert Zemeckis"],
    ),
    (
        "In which city was the author of Pride and Prejudice born?",
        "Pride and Prejudice was written by Jane Austen. Jane Austen was born in Steventon, Hampshire, England.",
        ["Steventon"],
    ),
]

SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string", "maxLength": 600}, "answers": answers_schema()},
    "required": ["reasoning", "answers"],
}


def messages(question: Question, shots: int) -> list[dict[str, str]]:
    out = [{"role": "system", "content": SYSTEM}]
    for text, reasoning, answers in EXEMPLARS[:shots]:
        out.append({"role": "user", "content": f"Question: {text}"})
        out.append({"role": "assistant", "content": json.dumps({"reasoning": reasoning, "answers": answers})})
    out.append({"role": "user", "content": f"Question: {question.text}"})
    return out


def to_prediction(reply: dict[str, Any]) -> Prediction:
    """The reasoning, then the answers in braces; each answer once."""
    answers = clean_answers(reply["answers"])
    return Prediction(answer=conclusion(reply["reasoning"], answers), answers=answers)


@register("cot", config=CoTConfig, stages=("answer",))
def answer(question: Question, ctx: Context) -> Prediction:
    reply = ask(
        ctx, "answer", messages(question, ctx.params.shots), schema=SCHEMA, fallback=lambda exc: no_answer(ctx, exc)
    )
    return reply if isinstance(reply, Prediction) else to_prediction(reply)
