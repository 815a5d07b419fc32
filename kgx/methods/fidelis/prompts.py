"""FiDeLiS's prompts, in kgx's wording, and the JSON its replies must be.

The released code (Y-Sui/FiDeLiS, ``src/prompts``) sends five prompts: the plan (keywords,
planning steps and the question as a declarative statement with a placeholder for the answer),
the beam step (choose the best k of the candidate paths), the path rewritten as a sentence, the
deductive check (can the statement, the placeholder filled with the path's end, be deduced from
that sentence?) and the answer from the reasoning paths. Each keeps those inputs and outputs
here; the beam step and the answer carry one worked example each, as the released prompts do.
A candidate next step is shown as ``(relation, entity)``, the relation marked ``(reverse)`` when
the step walks it from its object to its subject.
"""

from __future__ import annotations

from typing import Any

from kgx.methods.kit import few_shot

PLACEHOLDER = "*placeholder*"
KEYWORDS = "retrieval_keywords"  # the plan's keywords (the oracle writes the gold relations here)
STEPS = "beam_steps"  # the beam step's choice (the oracle takes steps to gold-path entities first)

PLANNING_TASK = (
    "You plan how to find the answer to a question in a knowledge graph. Reply with: keywords, "
    "the words and relation names you would search the graph with to find the path from the "
    "question's entity to its answer (cover every path that might lead there); planning_steps, "
    "the steps that trace that path, one sentence each; and statement, the question turned into "
    f"a declarative sentence with {PLACEHOLDER} where the answer goes ('Which language do "
    f"Jamaicans speak?' becomes 'Jamaicans speak {PLACEHOLDER}.')."
)
BEAM_TASK = (
    "You extend reasoning paths in a knowledge graph one step at a time. Given a plan, the paths "
    "so far and the candidate next steps of each, written (relation, entity), choose the next "
    "steps most likely to lead to a path that answers the question. A relation marked (reverse) "
    "is walked from its object to its subject."
)
STATEMENT_TASK = (
    "Rewrite a reasoning path from a knowledge graph as one plain sentence that states what the "
    "path says. A relation marked (reverse) is walked from its object to its subject."
)
VERIFICATION_TASK = (
    "Decide whether a conclusion can be deduced from a premise: true only when the premise, taken "
    "as true, makes the conclusion true."
)
ANSWER_TASK = (
    "You answer a question from reasoning paths found in a knowledge graph and from what you know. "
    "Think step by step, then give the answer entities, most likely first."
)


def planning(question: str) -> list[dict[str, str]]:
    return few_shot(PLANNING_TASK, [], f"Question: {question}")


def beam_prompt(question: str, plan: list[str], groups: list[tuple[str, list[str]]], k: int) -> str:
    """The plan, each path so far with its candidate next steps, and how many to choose."""
    blocks = [
        f"Path {i}: {path}\n" + "\n".join(f"- {step}" for step in steps) for i, (path, steps) in enumerate(groups, 1)
    ]
    return (
        f"Plan: {' '.join(plan) or '(none)'}\n" + "\n".join(blocks) + f"\nChoose {k} next steps.\nQuestion: {question}"
    )


def statement(path: str) -> list[dict[str, str]]:
    return few_shot(STATEMENT_TASK, [], f"Path: {path}")


def verification(premise: str, conclusion: str) -> list[dict[str, str]]:
    return few_shot(VERIFICATION_TASK, [], f"Premise: {premise}\nConclusion: {conclusion}")


def paths_prompt(question: str, paths: list[str]) -> str:
    listed = "\n".join(f"{i}. {p}" for i, p in enumerate(paths, 1)) or "(no path was found)"
    return f"Reasoning paths:\n{listed}\nQuestion: {question}"


# Worked examples written for kgx, one per stage that the released prompts give examples for.
BEAM_EXAMPLE = (
    beam_prompt(
        "What team did Tim Tebow play for in college?",
        ["Find the sports teams Tim Tebow played for.", "Keep the college team."],
        [
            (
                "Tim Tebow",
                [
                    "(people.person.sibling_s, m.05v4ns_)",
                    "(sports.pro_athlete.teams, m.0hpc6gc)",
                    "(people.person.education, m.04hx1d3)",
                    "(people.person.place_of_birth, Makati)",
                ],
            )
        ],
        2,
    ),
    {STEPS: ["(sports.pro_athlete.teams, m.0hpc6gc)", "(people.person.education, m.04hx1d3)"]},
)
ANSWER_EXAMPLE = (
    paths_prompt(
        "Where did Selena Gomez live in 2010?",
        ["Selena Gomez -> people.person.places_lived -> m.04hmnxs -> people.place_lived.location -> New York City"],
    ),
    {
        "reasoning": "The path gives New York City as a place Selena Gomez lived.",
        "answers": ["New York City"],
    },
)


def beam(question: str, plan: list[str], groups: list[tuple[str, list[str]]], k: int) -> list[dict[str, str]]:
    return few_shot(BEAM_TASK, [BEAM_EXAMPLE], beam_prompt(question, plan, groups, k))


def answer(question: str, paths: list[str]) -> list[dict[str, str]]:
    return few_shot(ANSWER_TASK, [ANSWER_EXAMPLE], paths_prompt(question, paths))


# --------------------------------------------------------------------------- replies

PLAN: dict[str, Any] = {
    "type": "object",
    "required": [KEYWORDS, "planning_steps", "statement"],
    "properties": {
        KEYWORDS: {"type": "array", "items": {"type": "string", "maxLength": 100}, "minItems": 1, "maxItems": 12},
        "planning_steps": {
            "type": "array",
            "items": {"type": "string", "maxLength": 300},
            "minItems": 1,
            "maxItems": 6,
        },
        "statement": {"type": "string", "maxLength": 300},
    },
}
STATEMENT: dict[str, Any] = {
    "type": "object",
    "required": ["statement"],
    "properties": {"statement": {"type": "string", "maxLength": 1000}},
}
VERDICT: dict[str, Any] = {
    "type": "object",
    "required": ["deducible"],
    "properties": {"deducible": {"type": "boolean"}},
}
