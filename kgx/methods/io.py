"""Standard (IO) prompting: the question alone, no exemplars, no KG (ToG/KnowPath/LMP baseline)."""

from __future__ import annotations

from dataclasses import dataclass

from kgx.core.config import MethodConfig
from kgx.core.types import Prediction, Question
from kgx.methods.answers import answers_schema, braces, clean_answers
from kgx.methods.base import Context, register
from kgx.methods.fallbacks import no_answer
from kgx.methods.kit import ask

SYSTEM = (
    "You answer questions from your own knowledge. Give the answer entities only, most "
    "likely first, with no explanation."
)

SCHEMA = {"type": "object", "properties": {"answers": answers_schema()}, "required": ["answers"]}


@dataclass
class IOConfig(MethodConfig):
    name: str = "io"


@register("io", config=IOConfig, stages=("answer",))
def answer(question: Question, ctx: Context) -> Prediction:
    reply = ask(
        ctx,
        "answer",
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Question: {question.text}"}],
        schema=SCHEMA,
        fallback=lambda exc: no_answer(ctx, exc),
    )
    if isinstance(reply, Prediction):
        return reply
    answers = clean_answers(reply["answers"])
    return Prediction(answer=braces(answers), answers=answers)
