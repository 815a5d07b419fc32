"""Plan-on-Graph's prompts, in kgx's wording, and the JSON its replies must be.

Each stage takes the inputs the paper and its released code (liyichen-cly/PoG) give it: the
question and its sub-objectives; the entity explored and its relations; the entities reached per
relation; the memory (what is known per sub-objective) and the triples found; the entities to be
explored next and the entities seen earlier. Outputs are the released ones as JSON: a list of
sub-objectives, chosen relations and entities (constrained to the candidates), the memory keyed
by sub-objective number, a sufficiency verdict with answers, and the reflection's add/reason.
One worked example per stage (two for reasoning), written for kgx; the question comes last.
"""

from __future__ import annotations

import re
from typing import Any

from kgx.methods.answers import clean_answers
from kgx.methods.kit import few_shot

SEARCH = "You help answer a question by searching a knowledge graph, one hop at a time, following a plan."

SYSTEMS = {
    "decomposition": (
        "You plan how to answer a question with a knowledge graph. Split the question into the fewest "
        "sub-objectives it needs, each a short instruction naming one thing to find or check, in the order "
        "they have to be solved."
    ),
    "relation_exploration": (
        SEARCH + " Given the question, its sub-objectives, one entity and the relations at it, choose the "
        "fewest relations that lead towards a sub-objective not yet solved. A relation marked (reverse) "
        "points at the entity: the entity is its object, not its subject."
    ),
    "entity_pruning": (
        SEARCH + " Given the entities reached from one entity through some relations, keep for each relation "
        "the fewest entities that can serve the question and meet its constraints; keep none for a relation "
        "where none fits."
    ),
    "memory": (
        "You keep the notes of a knowledge graph search. Given the question, its sub-objectives, the notes so "
        "far and the triples just found, rewrite the notes: for every sub-objective, what is now known that "
        "settles it (entities, values), or that it is still open. Trust the triples first and your own "
        "knowledge only where they say nothing."
    ),
    "reasoning": (
        "You judge a knowledge graph search. Given the notes per sub-objective and the triples (subject, "
        "relation, object) found so far, say whether they, with your own knowledge, are enough to answer the "
        "question; if they are, give the answer entities, most likely first. Where the triples and the notes "
        "disagree, the triples win."
    ),
    "reflection": (
        "You check the course of a knowledge graph search that has not answered its question yet. Given the "
        "entities it would explore next, the notes and the triples, say whether entities met earlier in the "
        "search should be explored next as well (the next entities lead away from the answer, or some needed "
        "ones were left behind), and why."
    ),
    "backtrack": (
        "You correct a knowledge graph search. Among the entities it met earlier, choose the fewest that "
        "should be explored next to answer the question, given why the search needs them and its notes."
    ),
    "answer": (
        "You answer a question from the notes and the knowledge graph triples of a finished search and from "
        "what you know. Think step by step, then give the answer entities, most likely first."
    ),
}


def listed(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def plan(subobjectives: list[str]) -> str:
    return "Sub-objectives:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(subobjectives, 1))


def notes(memory: dict[str, str]) -> str:
    return "Notes:\n" + ("\n".join(f"{k}. {v}" for k, v in memory.items()) or "(none yet)")


def triples_block(lines: list[str], title: str = "Triples") -> str:
    return f"{title}:\n" + ("\n".join(lines) or "(no triples were found)")


def decomposition_prompt(question: str) -> str:
    return f"Question: {question}"


def relation_prompt(question: str, subobjectives: list[str], entity: str, labels: list[str], k: int) -> str:
    return (
        f"{plan(subobjectives)}\nEntity: {entity}\nRelations:\n{listed(labels)}\n"
        f"Choose at most {k} relations.\nQuestion: {question}"
    )


def entity_prompt(
    question: str, subobjectives: list[str], entity: str, groups: list[tuple[str, list[str]]], k: int
) -> str:
    blocks = "\n".join(f"Through {relation}:\n{listed(labels)}" for relation, labels in groups)
    return (
        f"{plan(subobjectives)}\nEntity: {entity}\n{blocks}\n"
        f"Keep at most {k} entities per relation.\nQuestion: {question}"
    )


def memory_prompt(question: str, subobjectives: list[str], memory: dict[str, str], new: list[str]) -> str:
    return f"{plan(subobjectives)}\n{notes(memory)}\n{triples_block(new, 'New triples')}\nQuestion: {question}"


def reasoning_prompt(question: str, memory: dict[str, str], lines: list[str]) -> str:
    return f"{notes(memory)}\n{triples_block(lines)}\nQuestion: {question}"


def reflection_prompt(question: str, upcoming: list[str], memory: dict[str, str], lines: list[str]) -> str:
    return (
        f"Next entities to explore:\n{listed(upcoming) or '(none)'}\n{notes(memory)}\n"
        f"{triples_block(lines)}\nQuestion: {question}"
    )


def backtrack_prompt(question: str, reason: str, candidates: list[str], memory: dict[str, str], k: int) -> str:
    return (
        f"Why more entities are needed: {reason}\nEntities met earlier:\n{listed(candidates)}\n"
        f"{notes(memory)}\nChoose at most {k} entities.\nQuestion: {question}"
    )


def answer_prompt(question: str, memory: dict[str, str], lines: list[str]) -> str:
    return f"{notes(memory)}\n{triples_block(lines)}\nQuestion: {question}"


# --------------------------------------------------------------------------- worked examples

NAIROBI = "Which currency is used in the country whose capital is Nairobi?"
NAIROBI_PLAN = ["Find the country whose capital is Nairobi", "Find the currency used in that country"]
KENYA = ["(Kenya, location.country.capital, Nairobi)", "(Nairobi, location.location.containedby, Kenya)"]
VIENNA = "Which countries border the country whose capital is Vienna?"
VIENNA_NOTES = {"1": "Vienna is the capital of Austria.", "2": "Open: no border of Austria is known yet."}
VIENNA_TRIPLES = ["(Austria, location.country.capital, Vienna)", "(Danube, geography.river.cities, Vienna)"]

EXAMPLES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "decomposition": [(decomposition_prompt(NAIROBI), {"subobjectives": NAIROBI_PLAN})],
    "relation_exploration": [
        (
            relation_prompt(
                NAIROBI,
                NAIROBI_PLAN,
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
            {"relations": ["location.country.capital (reverse)", "location.location.containedby"]},
        )
    ],
    "entity_pruning": [
        (
            entity_prompt(
                "Which team coached by Pep Guardiola won the 2009 Champions League final?",
                ["Find the teams Pep Guardiola coached", "Find which of them won the 2009 final"],
                "Pep Guardiola",
                [
                    ("sports.sports_team_coach.teams_coached", ["FC Barcelona", "Bayern Munich", "Manchester City"]),
                    ("people.person.places_lived", ["Barcelona", "Munich", "Manchester"]),
                ],
                3,
            ),
            {"sports.sports_team_coach.teams_coached": ["FC Barcelona"], "people.person.places_lived": []},
        )
    ],
    "memory": [
        (
            memory_prompt(NAIROBI, NAIROBI_PLAN, {}, KENYA),
            {"1": "Nairobi is the capital of Kenya.", "2": "Open: the triples do not give Kenya's currency yet."},
        )
    ],
    "reasoning": [
        (
            reasoning_prompt(NAIROBI, {"1": "Nairobi is the capital of Kenya.", "2": "Open."}, KENYA),
            {
                "sufficient": False,
                "reasoning": "The country is Kenya, but no triple gives its currency yet.",
                "answers": [],
            },
        ),
        (
            reasoning_prompt(
                NAIROBI,
                {"1": "Nairobi is the capital of Kenya.", "2": "Kenya uses the Kenyan shilling."},
                KENYA + ["(Kenya, location.country.currency_used, Kenyan shilling)"],
            ),
            {
                "sufficient": True,
                "reasoning": "Nairobi is the capital of Kenya, whose currency is the Kenyan shilling.",
                "answers": ["Kenyan shilling"],
            },
        ),
    ],
    "reflection": [
        (
            reflection_prompt(VIENNA, ["Danube"], VIENNA_NOTES, VIENNA_TRIPLES),
            {
                "add": True,
                "reason": "The Danube leads away from the question; Austria, met earlier, is the country "
                "whose neighbours are asked for.",
            },
        )
    ],
    "backtrack": [
        (
            backtrack_prompt(
                VIENNA,
                "Austria, met earlier, is the country whose neighbours are asked for.",
                ["Austria", "Europe", "Vienna State Opera"],
                VIENNA_NOTES,
                3,
            ),
            {"entities": ["Austria"]},
        )
    ],
    "answer": [
        (
            answer_prompt(
                VIENNA,
                {
                    "1": "Vienna is the capital of Austria.",
                    "2": "Austria borders Germany, Czech Republic and Slovakia, among others.",
                },
                [
                    "(Austria, location.country.capital, Vienna)",
                    "(Austria, location.location.adjoin_s, Germany)",
                    "(Austria, location.location.adjoin_s, Czech Republic)",
                ],
            ),
            {
                "reasoning": "Vienna is Austria's capital; the triples name Germany and the Czech Republic as "
                "neighbours, and Austria also borders Slovakia, Hungary, Slovenia, Italy, Switzerland and "
                "Liechtenstein.",
                "answers": ["Germany", "Czech Republic", "Slovakia", "Hungary", "Slovenia"],
            },
        )
    ],
}


def messages(exemplars: bool, stage: str, content: str) -> list[dict[str, str]]:
    return few_shot(SYSTEMS[stage], EXAMPLES[stage] if exemplars else [], content)


# --------------------------------------------------------------------------- reply schemas


def text(max_length: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_length}


def decomposition_schema(most: int) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["subobjectives"],
        "properties": {"subobjectives": {"type": "array", "items": text(200), "minItems": 1, "maxItems": most}},
    }


def memory_schema(count: int) -> dict[str, Any]:
    keys = [str(i) for i in range(1, count + 1)]
    return {"type": "object", "required": keys, "properties": {k: text(300) for k in keys}}


def reflection_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["add", "reason"],
        "properties": {"add": {"type": "boolean"}, "reason": {"type": "string", "maxLength": 300}},
    }


# --------------------------------------------------------------------------- replies

ID = re.compile(r"^[mg]\.[0-9a-z_]+$")


def usable(answers: list[Any], most: int) -> list[str]:
    """Answers as the released stop rule accepts them: no "null"/"none", no bare Freebase ids."""
    return [a for a in clean_answers(answers, most) if a.lower() not in ("null", "none") and not ID.match(a)]
