"""Think-on-Graph's prompts, in kgx's wording, and the JSON its replies must be.

One system prompt and one worked example per stage, as the published prompts carry them; the
candidates are listed one per line (``- ...``) and the question comes last. Relation and entity
scores come back as scored selections constrained to the candidates, and the checks below refuse
what a schema cannot: a candidate scored twice, one left unscored, relation scores none of which
is positive. Relation scores that do not add up to 1 are normalised, not refused.
"""

from __future__ import annotations

from typing import Any, Callable

from kgx.methods.kit import few_shot

EXPLORE = "You help answer a question by walking a knowledge graph, one hop at a time."

RELATION_TASK = (
    EXPLORE + " Given a topic entity and the relations at it, choose the relations most likely to lead "
    "to the answer and score how much each helps, from 0 to 1, the scores adding up to 1. A relation "
    "marked (reverse) points at the topic entity: the entity is its object, not its subject."
)
ENTITY_TASK = (
    EXPLORE + " Given the entities reached from a topic entity through some relations, score each "
    "entity from 0 to 1 for how likely it is the answer or lies on the way to it."
)
REASONING_TASK = (
    "You answer questions from knowledge graph triples (subject, relation, object) and what you know. "
    "Say whether the triples, with your own knowledge, are enough to answer the question; if they are, "
    "give the answer entities, most likely first."
)
ANSWER_TASK = (
    "You answer questions from knowledge graph triples (subject, relation, object) and what you know. "
    "Think step by step, then give the answer entities, most likely first."
)


def relation_prompt(question: str, topic: str, labels: list[str], k: int) -> str:
    return (
        f"Topic entity: {topic}\nRelations:\n"
        + "\n".join(f"- {label}" for label in labels)
        + f"\nChoose up to {k} relations.\nQuestion: {question}"
    )


def entity_prompt(question: str, topic: str, groups: list[tuple[str, list[str]]]) -> str:
    blocks = [f"Through {relation}:\n" + "\n".join(f"- {label}" for label in labels) for relation, labels in groups]
    return f"Topic entity: {topic}\n" + "\n".join(blocks) + "\nScore every entity listed, once.\nQuestion: " + question


def triples_prompt(question: str, triples: str) -> str:
    return f"Triples:\n{triples}\nQuestion: {question}"


# Worked examples written for kgx, one or two per stage, as the published prompts carry them.
EXAMPLES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "relation_prune": [
        (
            relation_prompt(
                "Which currency is used in the country whose capital is Nairobi?",
                "Nairobi",
                [
                    "location.location.containedby",
                    "location.location.geolocation",
                    "location.country.capital (reverse)",
                    "people.person.place_of_birth (reverse)",
                    "travel.travel_destination.tourist_attractions",
                ],
                3,
            ),
            {
                "relations": [
                    {"relation": "location.country.capital (reverse)", "score": 0.6},
                    {"relation": "location.location.containedby", "score": 0.3},
                    {"relation": "people.person.place_of_birth (reverse)", "score": 0.1},
                ]
            },
        )
    ],
    "entity_score": [
        (
            entity_prompt(
                "Which film directed by Kathryn Bigelow won the Academy Award for Best Picture?",
                "Kathryn Bigelow",
                [
                    (
                        "film.film.directed_by (reverse)",
                        ["Point Break", "Strange Days", "The Hurt Locker", "Zero Dark Thirty"],
                    )
                ],
            ),
            {
                "scores": [
                    {"entity": "Point Break", "score": 0.0},
                    {"entity": "Strange Days", "score": 0.0},
                    {"entity": "The Hurt Locker", "score": 0.9},
                    {"entity": "Zero Dark Thirty", "score": 0.1},
                ]
            },
        )
    ],
    "reasoning": [
        (
            triples_prompt(
                "Which currency is used in the country whose capital is Nairobi?",
                "1. (Kenya, location.country.capital, Nairobi); "
                "(Kenya, location.country.currency_used, Kenyan shilling)",
            ),
            {
                "sufficient": True,
                "reasoning": "Nairobi is the capital of Kenya, and Kenya uses the Kenyan shilling.",
                "answers": ["Kenyan shilling"],
            },
        ),
        (
            triples_prompt(
                "Which river flows through the capital of Hungary?",
                "1. (Hungary, location.country.capital, Budapest)\n"
                "2. (Hungary, location.country.official_language, Hungarian language)",
            ),
            {
                "sufficient": False,
                "reasoning": "The triples give Budapest as the capital of Hungary but say "
                "nothing about the rivers through Budapest.",
                "answers": [],
            },
        ),
    ],
    "answer": [
        (
            triples_prompt(
                "Which language is spoken in the country whose capital is Lima?",
                "1. (Peru, location.country.capital, Lima); (Peru, location.country.official_language, "
                "Spanish Language)",
            ),
            {
                "reasoning": "Lima is the capital of Peru, whose official language is Spanish.",
                "answers": ["Spanish Language"],
            },
        )
    ],
}

SYSTEMS = {
    "relation_prune": RELATION_TASK,
    "entity_score": ENTITY_TASK,
    "reasoning": REASONING_TASK,
    "answer": ANSWER_TASK,
}


def messages(stage: str, content: str, exemplars: bool) -> list[dict[str, str]]:
    return few_shot(SYSTEMS[stage], EXAMPLES[stage] if exemplars else [], content)


def scored_schema(field: str, key: str, labels: list[str], low: int, high: int) -> dict[str, Any]:
    """``field``: low to high items {key: one of labels, score: 0..1}, ToG's scored selections."""
    item = {
        "type": "object",
        "required": [key, "score"],
        "properties": {key: {"enum": labels}, "score": {"type": "number", "minimum": 0, "maximum": 1}},
    }
    return {
        "type": "object",
        "required": [field],
        "properties": {field: {"type": "array", "items": item, "minItems": low, "maxItems": high}},
    }


# --------------------------------------------------------------------------- replies


def unique_choices(items: list[dict[str, Any]], key: str, labels: list[str]) -> dict[str, float]:
    """{label: score} of a scored selection; an unknown or repeated label is invalid."""
    scores: dict[str, float] = {}
    for item in items:
        label = item[key]
        if label not in labels:
            raise ValueError(f"{label!r} is not a candidate")
        if label in scores:
            raise ValueError(f"{label!r} is scored twice")
        scores[label] = float(item["score"])
    return scores


def relation_scores(labels: list[str]) -> Callable[[Any], tuple[list[tuple[str, float]], float]]:
    """The chosen relations in the reply's order, their scores as shares of their sum, and that
    sum. The paper asks for scores adding up to 1; a small model's often do not, yet their
    ranking is still its choice, so they are normalised (the caller notes a sum off 1), not
    refused and re-asked. A reply with no positive score leaves nothing to rank by: invalid."""

    def check(reply: Any) -> tuple[list[tuple[str, float]], float]:
        scores = unique_choices(reply["relations"], "relation", labels)
        total = sum(scores.values())
        if total <= 0:
            raise ValueError("no relation has a positive score")
        return [(label, score / total) for label, score in scores.items()], total

    return check


def entity_scores(labels: list[str]) -> Callable[[Any], dict[str, float]]:
    """One score per candidate: every candidate scored, each once."""

    def check(reply: Any) -> dict[str, float]:
        scores = unique_choices(reply["scores"], "entity", labels)
        missing = [label for label in labels if label not in scores]
        if missing:
            raise ValueError(f"{len(missing)} candidates not scored, e.g. {missing[0]!r}")
        return scores

    return check
