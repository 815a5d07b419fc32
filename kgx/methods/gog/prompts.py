"""Generate-on-Graph's prompts, in kgx's wording, and the JSON its replies must be.

The paper's prompts (Xu et al., EMNLP 2024, App. C, Table 9; released as YaooXu/GoG
``prompts_v2``) give the inputs and outputs kept here: the Thinking step sees the question, its
topic entities and the Thought / Action / Observation steps so far, and writes a thought and one
action (Search, Generate or Finish); relation filtering sees the thought, the entity and its
relations; generation sees the thought and the known triples chosen for it; verification sees the
thought and every generated set; entity linking sees the generated name and the KG's candidates
with their types. Where the released prompts parse free text (``Search[a | b]``), kgx asks for JSON
whose choices are constrained to the offered candidates: the entities a Search may read, the
relations a filter may keep, the generated triples a verification may keep, the ids a link may
take. The worked examples are kgx's own, one trajectory split at each kind of action, as the
paper's three shots show each.
"""

from __future__ import annotations

from typing import Any

from kgx.methods.answers import answers_schema
from kgx.methods.kit import few_shot, triple_text

ACTIONS = ("Search", "Generate", "Finish")  # the order offered (and the scripted double's first choice)
UNKNOWN = "unknown"  # Finish[unknown]: not enough information, even after generating

THINK = (
    "You answer a question over a knowledge graph in steps of Thought, Action and Observation. In each "
    "step, first think: break the question into sub-questions and say which one to solve next, or that "
    "you can answer now. Then take one action:\n"
    "- Search: read the one-hop triples of entities in the knowledge graph. Name them exactly as they "
    "are offered; the first search starts from the topic entities.\n"
    "- Generate: when the triples read so far lack a fact your thought needs, write new triples for it "
    "from what you know and from reasoning over the known triples.\n"
    "- Finish: give the answers, as entity names written in the triples, most likely first; give "
    f"'{UNKNOWN}' if you cannot tell.\n"
    "An entity written as (attribute: value; ...) is a compound value node joining several facts: "
    "search it to read them; it is never an answer itself."
)
FILTER = (
    "You choose where to read next in a knowledge graph. Given a thought and an entity with its "
    "relations, pick the relations most likely to hold what the thought needs, best first, or none if no "
    "relation does. A relation marked (reverse) points at the entity: the entity is its object."
)
GENERATE = (
    "You complete a knowledge graph. Given a thought and some known triples (subject, relation, object), "
    "write the new triples the thought needs, from what you know and from reasoning over the known "
    "triples. Write only facts you hold to be true; name entities as the knowledge graph would."
)
VERIFY = (
    "You check generated knowledge. Several attempts generated triples for the same thought; keep the "
    "triples that are relevant to it and most likely true, and drop the others."
)
LINK = (
    "You link a name to a knowledge graph. Given a thought, an entity name and the graph's entities "
    "of that name with their types, choose the entity the name means in the thought."
)
ANSWER = (
    "You answer questions from what you know. Think step by step, then give the answer entities, most likely first."
)


# --------------------------------------------------------------------------- the Thinking step


def think_prompt(question: str, topics: list[str], history: str, searchable: list[str], step: int) -> str:
    offered = "\n".join(f"- {name}" for name in searchable) or "(none)"
    return (
        f"Question: {question}\nTopic entities: [{' | '.join(topics)}]\n"
        + (history + "\n" if history else "")
        + f"Entities you can search:\n{offered}\nThought {step}:"
    )


def think_schema(actions: list[str], searchable: list[str], most: int, max_answers: int) -> dict[str, Any]:
    """A thought and one action: ``entities`` for Search, among the offered ones (absent when none
    is left to search), ``answers`` for Finish."""
    props: dict[str, Any] = {
        "thought": {"type": "string", "minLength": 1, "maxLength": 400},
        "action": {"enum": list(actions)},
        "answers": {**answers_schema(max_answers), "minItems": 0},
    }
    if searchable:
        props["entities"] = {
            "type": "array",
            "items": {"enum": list(searchable)},
            "minItems": 0,
            "maxItems": min(most, len(searchable)),
        }
    return {"type": "object", "required": list(props), "properties": props}


HISTORY_EXAMPLE = (
    "Thought 1: First I need the capital of Hungary.\nAction 1: Search[Hungary]\n"
    "Observation 1: (Hungary, location.country.capital, Budapest)\n"
    "(Hungary, location.country.official_language, Hungarian language)\n"
    "Thought 2: Budapest is the capital; now I need the river that flows through Budapest.\n"
    "Action 2: Search[Budapest]\n"
    "Observation 2: (Budapest, location.location.containedby, Hungary)\n"
    "(Budapest, location.location.time_zones, Central European Time Zone)"
)
QUESTION_EXAMPLE = "Which river flows through the capital of Hungary?"
THINK_EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    (
        think_prompt(QUESTION_EXAMPLE, ["Hungary"], "", ["Hungary"], 1),
        {"thought": "First I need the capital of Hungary.", "action": "Search", "entities": ["Hungary"], "answers": []},
    ),
    (
        think_prompt(
            QUESTION_EXAMPLE, ["Hungary"], HISTORY_EXAMPLE, ["Hungarian language", "Central European Time Zone"], 3
        ),
        {
            "thought": "The triples of Budapest name no river; I know which river flows through Budapest.",
            "action": "Generate",
            "entities": [],
            "answers": [],
        },
    ),
    (
        think_prompt(
            QUESTION_EXAMPLE,
            ["Hungary"],
            HISTORY_EXAMPLE
            + "\nThought 3: The triples of Budapest name no river; I know which river flows through Budapest.\n"
            "Action 3: Generate[The triples of Budapest name no river; I know which river flows through Budapest.]\n"
            "Observation 3: (Danube, geography.river.cities, Budapest)",
            ["Hungarian language", "Central European Time Zone", "Danube"],
            4,
        ),
        {
            "thought": "The Danube flows through Budapest, the capital of Hungary.",
            "action": "Finish",
            "entities": [],
            "answers": ["Danube"],
        },
    ),
]


def think_messages(content: str, exemplars: bool) -> list[dict[str, str]]:
    return few_shot(THINK, THINK_EXAMPLES if exemplars else [], content)


def action_text(action: str, argument: str) -> str:
    """An action as the released prompts write it in the history: ``Search[a | b]``."""
    return f"{action}[{argument}]"


# --------------------------------------------------------------------------- Search: filtering


def filter_prompt(thought: str, entity: str, labels: list[str], k: int) -> str:
    return (
        f"Thought: {thought}\nEntity: {entity}\nRelations:\n"
        + "\n".join(f"- {label}" for label in labels)
        + f"\nChoose up to {k} relations."
    )


FILTER_EXAMPLES = [
    (
        filter_prompt(
            "First I need the capital of Hungary.",
            "Hungary",
            [
                "location.country.capital",
                "location.country.currency_used",
                "location.country.official_language",
                "location.location.containedby",
                "sports.sports_team.location (reverse)",
            ],
            3,
        ),
        {"relations": ["location.country.capital", "location.location.containedby"]},
    )
]


def filter_messages(content: str, exemplars: bool) -> list[dict[str, str]]:
    return few_shot(FILTER, FILTER_EXAMPLES if exemplars else [], content)


# --------------------------------------------------------------------------- Generate: generating, verifying, linking


def generate_prompt(thought: str, known: list[str], most: int) -> str:
    return (
        f"Thought: {thought}\nKnown triples:\n"
        + ("\n".join(known) or "(none)")
        + f"\nWrite at most {most} new triples."
    )


def generate_schema(most: int) -> dict[str, Any]:
    text = {"type": "string", "minLength": 1, "maxLength": 120}
    triple = {
        "type": "object",
        "required": ["subject", "relation", "object"],
        "properties": {"subject": text, "relation": text, "object": text},
    }
    return {
        "type": "object",
        "required": ["generated"],
        "properties": {"generated": {"type": "array", "items": triple, "minItems": 0, "maxItems": most}},
    }


GENERATE_EXAMPLES = [
    (
        generate_prompt(
            "The triples of Budapest name no river; I know which river flows through Budapest.",
            [
                triple_text("Hungary", "location.country.capital", "Budapest"),
                triple_text("Budapest", "location.location.containedby", "Hungary"),
            ],
            3,
        ),
        {"generated": [{"subject": "Danube", "relation": "geography.river.cities", "object": "Budapest"}]},
    )
]


def generate_messages(content: str, exemplars: bool) -> list[dict[str, str]]:
    return few_shot(GENERATE, GENERATE_EXAMPLES if exemplars else [], content)


def verify_prompt(thought: str, attempts: list[list[str]], most: int) -> str:
    blocks = [f"### {i}\n" + ("\n".join(triples) or "(none)") for i, triples in enumerate(attempts, 1)]
    return f"Thought: {thought}\nGenerated triples:\n" + "\n".join(blocks) + f"\nKeep at most {most} triples."


VERIFY_EXAMPLES = [
    (
        verify_prompt(
            "The triples of Budapest name no river; I know which river flows through Budapest.",
            [
                [triple_text("Danube", "geography.river.cities", "Budapest")],
                [triple_text("Tisza", "geography.river.cities", "Budapest")],
                [triple_text("Danube", "geography.river.cities", "Budapest")],
            ],
            3,
        ),
        {"verified": [triple_text("Danube", "geography.river.cities", "Budapest")]},
    )
]


def verify_messages(content: str, exemplars: bool) -> list[dict[str, str]]:
    return few_shot(VERIFY, VERIFY_EXAMPLES if exemplars else [], content)


def link_prompt(thought: str, name: str, candidates: list[tuple[str, str, str]]) -> str:
    """``candidates``: (id, name, type) of the KG's entities named so, as the released prompt lists
    each entity's id with its types."""
    lines = [f"- {node}: {label}" + (f" ({kind})" if kind else "") for node, label, kind in candidates]
    return f"Thought: {thought}\nEntity name: {name}\nCandidates:\n" + "\n".join(lines) + "\nChoose one entity."


LINK_EXAMPLES = [
    (
        link_prompt(
            "The triples of Budapest name no river; I know which river flows through Budapest.",
            "Danube",
            [("m.0k3b", "Danube", "River"), ("m.05mz7j", "Danube", "Film"), ("m.02r5kr", "Danube", "Ship")],
        ),
        {"entity": ["m.0k3b"]},
    )
]


def link_messages(content: str, exemplars: bool) -> list[dict[str, str]]:
    return few_shot(LINK, LINK_EXAMPLES if exemplars else [], content)


# --------------------------------------------------------------------------- answering without the KG


def answer_prompt(question: str, topics: list[str]) -> str:
    return f"Topic entities: [{' | '.join(topics)}]\nQuestion: {question}"


ANSWER_EXAMPLES = [
    (
        answer_prompt(QUESTION_EXAMPLE, ["Hungary"]),
        {"reasoning": "The capital of Hungary is Budapest, and the Danube flows through it.", "answers": ["Danube"]},
    )
]


def answer_messages(content: str, exemplars: bool) -> list[dict[str, str]]:
    return few_shot(ANSWER, ANSWER_EXAMPLES if exemplars else [], content)
