"""LMP's prompts (paper App. A.3-A.6), in kgx's wording, with the paper's inputs and outputs.

Each operation keeps the paper's inputs (question, topic, previous layer's facts, options or
aggregated facts) and its output (K relations; K summaries in the facts' order; a list of
answers), returned as JSON lists so that the choices can be constrained and counted.
"""

from __future__ import annotations

from typing import Sequence

from kgx.llm.messages import Messages


def _user(text: str) -> Messages:
    return [{"role": "user", "content": text}]


def sample_first(question: str, topic: str, options: Sequence[str], k: int) -> Messages:
    """Layer 1: only the topic's own relations exist yet."""
    return _user(
        f"We explore a knowledge graph from the topic of a question.\n"
        f"Question: {question}\n"
        f"topic: {topic}\n"
        f"Choose the {k} relations below that are most useful to explore from the topic to answer "
        f"the question, most useful first. Reply with the chosen relations only.\n"
        f"options: {'; '.join(options)}"
    )


def sample_deeper(question: str, topic: str, facts: Sequence[tuple[str, Sequence[str]]], k: int) -> Messages:
    """Layer 2+: each summarised fact of the previous layer, with the relations leaving it."""
    lines = "\n".join(f"{i}. fact: {fact} options: {'; '.join(options)}" for i, (fact, options) in enumerate(facts, 1))
    return _user(
        f"We explore a knowledge graph from the topic of a question and have summarised what we "
        f"found so far.\n"
        f"Question: {question}\n"
        f"topic: {topic}\n"
        f"Choose the {k} relations among the options below that are most useful to explore next to "
        f"answer the question, most useful first. Reply with the chosen relations only.\n{lines}"
    )


def transform(question: str, topic: str, aggregated: Sequence[str], background: Sequence[str]) -> Messages:
    """Summarise each aggregated fact, keeping only what bears on the question, in order."""
    k = len(aggregated)
    context = f"background: {' '.join(background)}\n" if background else ""
    facts = "\n".join(f"{i}. {text}" for i, text in enumerate(aggregated, 1))
    return _user(
        f"Here are {k} facts about the topic of a question"
        f"{' and some background from earlier steps' if background else ''}.\n"
        f"Question: {question}\n"
        f"topic: {topic}\n{context}"
        f"Summarise each fact on its own, keeping every detail that helps answer the question and "
        f"dropping the rest. Reply with exactly {k} summaries, in the same order as the facts.\n"
        f"facts:\n{facts}"
    )


def answer(question: str, knowledge: str, style: str) -> Messages:
    """App. A.6; ``style="f1"`` drops "all the possible answers" (App. D.1)."""
    want = (
        "Give all the possible answers, each as short as possible."
        if style == "hits"
        else "Give the answer as short as possible."
    )
    return _user(
        f"Answer the question from the facts below and your own knowledge. {want}\n"
        f"facts:\n{knowledge}\n"
        f"Question: {question}"
    )
