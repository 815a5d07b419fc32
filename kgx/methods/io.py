"""Standard (IO) prompting: the question, no KG (ToG/KnowPath/LMP baseline). Zero-shot by default;
``method.shots`` input-output pairs before it, each an exemplar question of ``method.exemplars``
(:mod:`kgx.methods.cot`) with its answers alone: LMP's IO "gives LLMs some specific input-output
pairs as examples" (App. B.1), as ToG's released IO prompt does with six.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgx.core.config import MethodConfig
from kgx.core.run_identity import added
from kgx.core.types import Prediction, Question
from kgx.llm.messages import Messages
from kgx.methods.answers import answers_schema, braces, clean_answers
from kgx.methods.base import Context, register
from kgx.methods.cot import EXEMPLARS, check_shots
from kgx.methods.fallbacks import no_answer
from kgx.methods.kit import ask, few_shot

SYSTEM = (
    "You answer questions from your own knowledge. Give the answer entities only, most "
    "likely first, with no explanation."
)

SCHEMA = {"type": "object", "properties": {"answers": answers_schema()}, "required": ["answers"]}


@dataclass
class IOConfig(MethodConfig):
    name: str = "io"
    shots: int = added(0)  # input-output pairs before the question (LMP App. B.1; ToG's released IO prompt: 6)
    exemplars: str = added("kgx")  # whose exemplar questions: kgx (3) | tog (6), as for CoT

    def __post_init__(self) -> None:
        super().__post_init__()
        check_shots(self.shots, self.exemplars)


def messages(question: Question, shots: int, exemplars: str) -> Messages:
    pairs = [(f"Question: {q}", {"answers": a}) for q, _, a in EXEMPLARS[exemplars][:shots]]
    return few_shot(SYSTEM, pairs, f"Question: {question.text}")


@register("io", config=IOConfig, stages=("answer",))
def answer(question: Question, ctx: Context) -> Prediction:
    p = ctx.params
    reply = ask(
        ctx,
        "answer",
        messages(question, p.shots, p.exemplars),
        schema=SCHEMA,
        fallback=lambda exc: no_answer(ctx, exc),
    )
    if isinstance(reply, Prediction):
        return reply
    answers = clean_answers(reply["answers"])
    return Prediction(answer=braces(answers), answers=answers)
