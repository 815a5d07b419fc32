"""Paths-over-Graph's prompts, in kgx's wording, and the JSON its replies must be.

One system prompt and one worked example per stage, as the released prompts carry them
(SteveTANTAN/PoG ``cot_prompt_list.py``: split questions, path selection, summary, answering).
Every prompt shows what the question analysis gave: the topic entities, the indicator (the chain
from the topic entities to the answer) and the split questions. Candidate paths are listed as
``Path N: ...`` (``Branch N: ...`` for branches) and chosen by their labels, constrained to the
offered ones by the schema, as the released prompts ask for ``top_list: {Path 1, Path 3}``. A path
is ``Tokyo -> location.country.capital (reverse) -> Japan``, ``{A | B}`` a set of entities the same
relations reach. The question comes last.
"""

from __future__ import annotations

from typing import Any

from kgx.methods.kit import few_shot

KG = "You answer questions with a knowledge graph whose facts are (subject, relation, object) triples."
PATHS = (
    " A path walks the graph from a topic entity: entity -> relation -> entity; a relation marked "
    "(reverse) is walked from its object to its subject, and {A | B} is a set of entities the same "
    "relations reach."
)

ANALYSIS_TASK = (
    KG + " Before the graph is searched, analyse the question. Write the indicator: the chain of "
    "reasoning from the topic entities to the answer, alternating entities and relations, that "
    "passes through every topic entity and marks the answer as 'answer (its type)'. Then split the "
    "question into simpler questions, one per topic entity."
)
BRANCH_TASK = (
    KG + PATHS + " Candidate paths branch at their first or last hop. Choose the branches most "
    "likely to lie on the way to the answer."
)
SELECTION_TASK = KG + PATHS + " Choose the candidate paths most likely to lead to the answer."
SUMMARY_TASK = (
    KG + PATHS + " Summarise the paths into chains of reasoning from the topic entities toward the "
    "answer, one chain per line of reasoning. Use only entities and relations the paths name and "
    "skip no step."
)
REASONING_TASK = (
    KG + PATHS + " Say whether the paths, with your own knowledge, are enough to answer the "
    "question. If they are, give the answer entities, most likely first, named as the paths name them."
)
SUPPLEMENT_TASK = (
    KG + PATHS + " The paths found so far do not answer the question. From them and your own "
    "knowledge, predict the answers and, for each, the chain of reasoning from the topic entities "
    "that leads to it, naming the entities it passes through."
)
ANSWER_TASK = (
    KG + PATHS + " Answer the question from the paths and your own knowledge. Think step by step, "
    "then give the answer entities, most likely first."
)


def context(question: str, topics: list[str], indicator: list[str], split: list[str]) -> str:
    """What every prompt after the analysis starts with."""
    lines = [f"Topic entities: {'; '.join(topics)}"]
    if indicator:
        lines.append("Indicator: " + " - ".join(indicator))
    lines += ["Split questions:", *(f"- {s}" for s in split)] if split else []
    return "\n".join(lines)


def listing(label: str, texts: list[str]) -> str:
    return "\n".join(f"{label} {i}: {text}" for i, text in enumerate(texts, 1))


def analysis_prompt(question: str, topics: list[str]) -> str:
    return f"Topic entities: {'; '.join(topics)}\nQuestion: {question}"


def branch_prompt(head: str, branches: list[str], keep: int, question: str) -> str:
    return f"{head}\nBranches:\n{listing('Branch', branches)}\nChoose up to {keep} branches.\nQuestion: {question}"


def selection_prompt(head: str, known: list[str], candidates: list[str], keep: int, question: str) -> str:
    found = f"Paths found so far:\n{listing('Found', known)}\n" if known else ""
    return (
        f"{head}\n{found}Candidate paths:\n{listing('Path', candidates)}\n"
        f"Choose up to {keep} paths.\nQuestion: {question}"
    )


def paths_prompt(head: str, paths: list[str], summaries: list[str], question: str) -> str:
    shown = listing("Path", paths) if paths else "(no path was found)"
    summary = f"\nSummary:\n{listing('Chain', summaries)}" if summaries else ""
    return f"{head}\nPaths:\n{shown}{summary}\nQuestion: {question}"


def labels(label: str, count: int) -> list[str]:
    return [f"{label} {i}" for i in range(1, count + 1)]


# --------------------------------------------------------------------------- schemas


def strings(low: int, high: int, longest: int = 300) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": longest},
        "minItems": low,
        "maxItems": high,
    }


def analysis_schema(depth: int, topics: int) -> dict[str, Any]:
    """The indicator (entity, relation, entity, ...: at most 2 * depth hops, the answer between
    two topic entities at most depth from each) and the split questions."""
    return {
        "type": "object",
        "required": ["indicator", "split_questions"],
        "properties": {
            "indicator": strings(3, 4 * depth + 1, 80),
            "split_questions": strings(1, max(1, topics) + 1),
        },
    }


def summary_schema(width: int) -> dict[str, Any]:
    return {"type": "object", "required": ["chains"], "properties": {"chains": strings(1, width, 600)}}


def supplement_schema(predictions: int) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["answers", "chains"],
        "properties": {
            "answers": strings(1, predictions, 120),
            "chains": strings(1, predictions, 600),
        },
    }


# --------------------------------------------------------------------------- worked examples

TOPIC = ["Nijmegen", "France"]
INDICATOR = ["Nijmegen", "served by", "airport", "located in", "answer (country)", "borders", "France"]
SPLIT = ["Which country has an airport that serves Nijmegen?", "Which country borders France?"]
QUESTION = "Which country bordering France contains an airport that serves Nijmegen?"
HEAD = context(QUESTION, TOPIC, INDICATOR, SPLIT)
FOUND = [
    "Nijmegen -> aviation.airport.serves (reverse) -> Weeze Airport -> location.location.containedby -> "
    "Germany -> location.location.adjoins -> France",
    "Nijmegen -> location.location.containedby -> Netherlands -> location.location.containedby -> "
    "Europe -> location.location.contains -> France",
    "Nijmegen -> location.location.containedby -> Netherlands -> location.country.languages_spoken -> "
    "Dutch Language -> language.human_language.countries_spoken_in -> {Belgium | Suriname} -> "
    "location.location.adjoins -> France",
]
EXAMPLES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "question_analysis": [(analysis_prompt(QUESTION, TOPIC), {"indicator": INDICATOR, "split_questions": SPLIT})],
    "branch_selection": [
        (
            branch_prompt(
                HEAD,
                [
                    "Nijmegen -> aviation.airport.serves (reverse) -> ...",
                    "Nijmegen -> location.location.containedby -> ...",
                    "Nijmegen -> people.person.place_of_birth (reverse) -> ...",
                ],
                2,
                QUESTION,
            ),
            {"branches": ["Branch 1", "Branch 2"]},
        )
    ],
    "path_selection": [(selection_prompt(HEAD, [], FOUND, 1, QUESTION), {"paths": ["Path 1"]})],
    "path_summary": [
        (
            paths_prompt(HEAD, FOUND[:2], [], QUESTION),
            {
                "chains": [
                    "Nijmegen is served by Weeze Airport, which is in Germany, and Germany borders France.",
                ]
            },
        )
    ],
    "reasoning": [
        (
            paths_prompt(HEAD, FOUND[:1], [], QUESTION),
            {
                "sufficient": True,
                "reasoning": "Weeze Airport serves Nijmegen and lies in Germany, which borders France.",
                "answers": ["Germany"],
            },
        ),
        (
            paths_prompt(HEAD, FOUND[1:2], [], QUESTION),
            {
                "sufficient": False,
                "reasoning": "The path joins Nijmegen and France through Europe; no airport is named.",
                "answers": [],
            },
        ),
    ],
    "supplement": [
        (
            paths_prompt(HEAD, FOUND[1:2], [], QUESTION),
            {
                "answers": ["Germany", "Belgium"],
                "chains": [
                    "Nijmegen is served by Weeze Airport in Germany, which borders France.",
                    "Nijmegen is served by Brussels Airport in Belgium, which borders France.",
                ],
            },
        )
    ],
    "answer": [
        (
            paths_prompt(HEAD, FOUND[:1], [], QUESTION),
            {
                "reasoning": "Weeze Airport serves Nijmegen and lies in Germany, which borders France.",
                "answers": ["Germany"],
            },
        )
    ],
}

SYSTEMS = {
    "question_analysis": ANALYSIS_TASK,
    "branch_selection": BRANCH_TASK,
    "path_selection": SELECTION_TASK,
    "path_summary": SUMMARY_TASK,
    "reasoning": REASONING_TASK,
    "supplement": SUPPLEMENT_TASK,
    "answer": ANSWER_TASK,
}


def messages(stage: str, content: str, exemplars: bool) -> list[dict[str, str]]:
    return few_shot(SYSTEMS[stage], EXAMPLES[stage] if exemplars else [], content)
