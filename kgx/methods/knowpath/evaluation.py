"""KnowPath's evaluation-based answering (Zhao et al., Sec. 2.4, App. F.5; Table 2 for w/o SE):
after each exploration round one call says whether the subgraph and the model's knowledge answer
the question; when the rounds run out unanswered, the inference path's answer is the answer.

Kept apart so that ``__init__.py`` reads as the algorithm: inference paths generation, subgraph
exploration, and the loop of rounds that calls :func:`evaluate` after each. What lives here is the
verdict, every way a question ends (:func:`fallback`, :func:`finish`), and the evidence and the
explanation graph a prediction carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from kgx.core.graph import Graph
from kgx.core.types import Prediction, Status
from kgx.methods import kit
from kgx.methods.answers import braces, clean_answers, conclusion
from kgx.methods.base import Context
from kgx.methods.knowpath import prompts as prompts
from kgx.methods.knowpath.exploration_graph import Exploration, depths
from kgx.methods.knowpath.parse import InferencePath


@dataclass
class Verdict:
    answerable: bool
    answers: list[str]
    reasoning: str


def evaluate(state: Exploration, ctx: Context) -> Optional[Verdict]:
    """Sec. 2.4 / F.5, one call at the answering temperature, with room for its longest reply
    (``prompts.evaluation_tokens``); None when it never gives valid output."""
    p = ctx.params  # KnowPathConfig

    def valid(reply: Any) -> Verdict:
        answers = clean_answers(reply["answers"], p.max_answers)
        if reply["answerable"] and not answers:
            raise ValueError("answerable, but no answer given")
        return Verdict(bool(reply["answerable"]), answers, reply["reasoning"].strip())

    return kit.ask(
        ctx,
        "evaluation",
        prompts.evaluation(state.question.text, state.lines(), state.guide),
        temperature=p.temperature_answer,
        schema=prompts.evaluation_schema(p.max_answers),
        validate=valid,
        max_tokens=prompts.evaluation_tokens(p.max_answers),
        note="no valid verdict; taken as not answerable",
    )


def fallback(
    state: Exploration,
    inference: Optional[InferencePath],
    verdict: Optional[Verdict],
    evaluated: bool,
    rounds: int,
    ctx: Context,
) -> Prediction:
    """Sec. 2.4: not answerable after the last round -> the inference path's answer. Without one
    (w/o IPG, or IPG gave none), the last verdict's best guess; if exploration ended before any
    evaluation, one evaluation of what was found, so that the question still gets an answer
    within 1 + 3 x rounds calls."""
    why = f"not answerable from the subgraph after {rounds} round(s)"
    if inference is not None and inference.answers:
        return finish(
            state,
            inference,
            inference.answers,
            from_path(inference),
            "fallback",
            f"{why}: answered from the inference path",
            rounds,
            "inference path",
            ctx,
        )
    source = "last evaluation's best guess"
    if not evaluated:
        verdict = evaluate(state, ctx)
        source = "an evaluation of the subgraph as found"
    if verdict is None or not verdict.answers:
        return finish(
            state,
            inference,
            [],
            "",
            "fallback",
            f"{why}; no inference path answer and no evaluation answer",
            rounds,
            "none",
            ctx,
        )
    return finish(
        state,
        inference,
        verdict.answers,
        conclusion(verdict.reasoning, verdict.answers),
        "fallback",
        f"{why}; no inference path answer: {source}",
        rounds,
        source,
        ctx,
    )


def from_inference_path(state: Exploration, inference: InferencePath, ctx: Context) -> Prediction:
    """Table 2, w/o SE: the inference path's answer is the method's answer."""
    if not inference.answers:
        return finish(
            state,
            inference,
            [],
            "",
            "fallback",
            "exploration=false and inference paths generation gave no answer",
            0,
            "none",
            ctx,
        )
    return finish(
        state,
        inference,
        inference.answers,
        from_path(inference),
        "ok",
        "exploration=false: answered from the inference path",
        0,
        "inference path",
        ctx,
    )


def from_path(inference: InferencePath) -> str:
    """The inference paths as the reasoning, then their answer."""
    return conclusion("; ".join(inference.paths) + "." if inference.paths else "", inference.answers)


def finish(
    state: Exploration,
    inference: Optional[InferencePath],
    answers: list[str],
    text: str,
    status: Status,
    reason: str,
    rounds: int,
    source: str,
    ctx: Context,
) -> Prediction:
    """The prediction, with the rounds used and the answer's source noted in the trace and kept
    as stats (a run logs ``stat.rounds`` and the share of answers from each source)."""
    ctx.trace.note("answer", reason, rounds=rounds, source=source)
    ctx.trace.explanation = explanation(state, inference, answers, f"Outcome: {reason}.").to_dict()
    stats = {
        "rounds": float(rounds),
        "answer_from_subgraph": float(source == "subgraph"),
        "answer_from_inference_path": float(source == "inference path"),
    }
    return Prediction(answer=text, answers=answers, evidence=evidence(state), status=status, reason=reason, stats=stats)


def evidence(state: Exploration) -> list[str]:
    """The subgraphs' triples with entity names, which ``answer_recall`` reads."""
    return list(
        dict.fromkeys(
            kit.triple_text(state.name(head), relation, state.name(tail))
            for sg in state.subgraphs
            for head, relation, tail in sg.triples()
        )
    )


def explanation(state: Exploration, inference: Optional[InferencePath], answers: list[str], outcome: str) -> Graph:
    """The directed subgraph as the paper draws it (Figs. 6-8), the inference path beside."""
    if inference is None:
        side = ["Inference path: none (ipg=false)."]
    else:
        side = [
            "Inference path (the LLM's own knowledge):",
            *(inference.paths or ["(none parsed)"]),
            f"Its answer: {braces(inference.answers)}.",
        ]
    return kit.picture(
        state.question.text,
        [t for sg in state.subgraphs for t in sg.triples()],
        state.names,
        depths(state.subgraphs),
        [sg.topic for sg in state.subgraphs],
        answers,
        "\n".join(state.lines()),
        side + [outcome],
    )
