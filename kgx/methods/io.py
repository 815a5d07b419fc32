"""Standard (IO) prompting: the question alone, no exemplars, no KG (ToG/KnowPath/LMP baseline)."""
from __future__ import annotations

from kgx.methods.base import Context, answers_schema, braces, register
from kgx.types import Prediction, Question

SYSTEM = (
    "You answer questions from your own knowledge. Give the answer entities only, most "
    "likely first, with no explanation."
)

SCHEMA = {"type": "object", "properties": {"answers": answers_schema()}, "required": ["answers"]}


@register("io")
def answer(question: Question, ctx: Context) -> Prediction:
    reply = ctx.llm(
        "answer",
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Question: {question.text}"}],
        schema=SCHEMA,
    )
    answers = [a.strip() for a in reply["answers"] if a.strip()]
    return Prediction(answer=braces(answers), answers=answers)
