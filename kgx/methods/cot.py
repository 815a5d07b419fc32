"""Chain-of-thought prompting (Wei et al. 2022): few-shot multi-hop exemplars, then the question.

Two sets of exemplars, each written for kgx and ending in the same JSON reply the model must give:

- ``kgx`` (3): each reasons hop by hop to entities in prose;
- ``tog`` (6): the form of the CoT prompt ToG's released code sends (CoT/prompt_list.py) and
  KnowPath's appendix prints ("CoT Prompt"): six multi-hop questions, each answered
  "First, ... Second, ..." and then the answer. The papers' CoT (and IO) figures for ChatGPT are
  ToG's, made with that prompt. Its questions, with their answers alone, are the input-output
  pairs of the IO prompt (``method=io method.shots=6``; LMP App. B.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgx.core.config import ConfigError, MethodConfig, check_choice
from kgx.core.run_identity import added
from kgx.core.types import Prediction, Question
from kgx.llm.messages import Messages
from kgx.methods.answers import answers_schema, clean_answers, conclusion
from kgx.methods.base import Context, register
from kgx.methods.fallbacks import no_answer
from kgx.methods.kit import ask, few_shot

Exemplar = tuple[str, str, list[str]]  # question, reasoning, answers

EXEMPLARS: dict[str, list[Exemplar]] = {
    "kgx": [
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
    ],
    "tog": [
        (
            "Which river flows through the capital of Hungary?",
            "First, the capital of Hungary is Budapest. Second, the Danube flows through Budapest.",
            ["Danube"],
        ),
        (
            "Who was the head coach of the team that won Super Bowl 50?",
            "First, the Denver Broncos won Super Bowl 50. Second, the head coach of the Denver Broncos then was "
            "Gary Kubiak.",
            ["Gary Kubiak"],
        ),
        (
            "What language is spoken in the country that won the 2010 FIFA World Cup?",
            "First, Spain won the 2010 FIFA World Cup. Second, the language spoken in Spain is Spanish.",
            ["Spanish"],
        ),
        (
            "In which country was the director of Spirited Away born?",
            "First, Spirited Away was directed by Hayao Miyazaki. Second, Hayao Miyazaki was born in Tokyo, Japan.",
            ["Japan"],
        ),
        (
            "Which universities did the author of On the Origin of Species attend?",
            "First, On the Origin of Species was written by Charles Darwin. Second, Charles Darwin studied at "
            "the University of Edinburgh and at Christ's College, Cambridge.",
            ["University of Edinburgh", "University of Cambridge"],
        ),
        (
            "What currency is used in the country where the Eiffel Tower stands?",
            "First, the Eiffel Tower stands in Paris, France. Second, France uses the euro.",
            ["Euro"],
        ),
    ],
}


def check_shots(shots: int, exemplars: str) -> None:
    """``method.shots`` exemplars of the set ``method.exemplars``: no more than it holds."""
    check_choice("method.exemplars", exemplars, tuple(EXEMPLARS))
    if not 0 <= shots <= len(EXEMPLARS[exemplars]):
        raise ConfigError(
            f"method.shots={shots}: must lie in [0, {len(EXEMPLARS[exemplars])}] "
            f"(the exemplars of method.exemplars={exemplars})"
        )


@dataclass
class CoTConfig(MethodConfig):
    name: str = "cot"
    shots: int = 3  # few-shot multi-hop exemplars in the prompt
    exemplars: str = added("kgx")  # kgx: 3 written for kgx | tog: 6 in the form of ToG's released CoT prompt

    def __post_init__(self) -> None:
        super().__post_init__()
        check_shots(self.shots, self.exemplars)


SYSTEM = (
    "You answer questions from your own knowledge. Think step by step, one fact per step, "
    "then give the answer entities, most likely first."
)

SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string", "maxLength": 600}, "answers": answers_schema()},
    "required": ["reasoning", "answers"],
}


def messages(question: Question, shots: int, exemplars: str = "kgx") -> Messages:
    pairs = [(f"Question: {q}", {"reasoning": r, "answers": a}) for q, r, a in EXEMPLARS[exemplars][:shots]]
    return few_shot(SYSTEM, pairs, f"Question: {question.text}")


def to_prediction(reply: dict[str, Any]) -> Prediction:
    """The reasoning, then the answers in braces; each answer once."""
    answers = clean_answers(reply["answers"])
    return Prediction(answer=conclusion(reply["reasoning"], answers), answers=answers)


@register("cot", config=CoTConfig, stages=("answer",))
def answer(question: Question, ctx: Context) -> Prediction:
    p = ctx.params
    reply = ask(
        ctx,
        "answer",
        messages(question, p.shots, p.exemplars),
        schema=SCHEMA,
        fallback=lambda exc: no_answer(ctx, exc),
    )
    return reply if isinstance(reply, Prediction) else to_prediction(reply)
