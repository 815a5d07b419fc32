"""CGPE's prompts and reply schemas, in kgx's own words (the paper publishes no prompt text).

Each prompt gives the inputs Sec. 3 names and asks for the output it describes: the clues of a
question (Sec. 3.2); (relation, label) pairs kept for some unused clue (fuzzy matching);
(label, entity) pairs scored against the unused clues (rough matching); each (label, entity)
given its most compatible unused clue (exact matching); the answer from the path as triples.
The clues are written freely, constrained only in form (a list of short strings), with the
question's phrases as a hint; every other reply chooses from enums of the offered options. The
question comes last, on its own ``Question:`` line.
"""

from __future__ import annotations

from typing import Any

from kgx.methods.answers import answers_schema

Messages = list[dict[str, str]]

CHARS_PER_WORD = 16  # a clue's length in the schema, per word of method.max_clue_words

# The one clue left to match when an initial node used every clue: its step looks for the answer.
ASKED = "the answer to the question"

SYSTEM = (
    "You help answer questions from a knowledge graph by following a path of nodes that "
    "match clues taken from the question. Reply in JSON only."
)

CLUES = """Write the clues of the question: the entities it names and the words that stand for a \
relation or for a kind of thing on the way from those entities to the answer. Do not sort them into \
entities and relations: a word such as "capital" can be either, and both kinds are clues. Write \
the names first, then the other clues, each clue once, as a short phrase in the question's own \
words; a name or title is one clue, whole, with its small words and commas ("Good Will Hunting", \
"After Dark, My Sweet").
For example, "What is the population of the capital of China?" has the clues China, capital and \
population: China is in the graph, its capital is one step away, and the capital's population \
one more.
Phrases of the question that may be clues (a hint: other phrases of its words may fit better):
{phrases}"""

FUZZY = """We are at the node {node} on a path through the knowledge graph.
Clues the path has not used yet: {clues}
Its neighbours, grouped as (relation, label): the relation that leads to them ("(reverse)" when \
the edge points to this node) and their type ("none" when the graph gives no type):
{options}
Keep every (relation, label) that may lead to something one of the unused clues describes; \
leave out those unrelated to all of them."""

ROUGH = """We are at the node {node} on a path through the knowledge graph.
Clues the path has not used yet: {clues}
Candidates for the next node, as (label, entity):
{options}
Score how well each candidate matches one of the unused clues, from 1 (a weak match) to 10 (the \
clue names it). Leave out the candidates that match no clue: they count as 0."""

EXACT = """We are at the node {node} on a path through the knowledge graph.
Clues the path has not used yet: {clues}
Candidates for the next node, as (label, entity):
{options}
For each candidate that matches an unused clue, give the clue it matches best. Leave out the \
candidates that match none of the clues."""

ANSWER = """Knowledge from the graph, as (subject, relation, object) triples:
{triples}
Answer the question with the help of these triples. Give every answer the question asks for, \
each as an entity name, most likely first."""

NO_KNOWLEDGE = """No path in the knowledge graph matched the question's clues. Answer it from your \
own knowledge. Give every answer the question asks for, each as an entity name, most likely first."""


def _messages(body: str, question: str) -> Messages:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"{body}\nQuestion: {question}"}]


def _lines(options: list[str]) -> str:
    return "\n".join(f"- {o}" for o in options)


def clues(question: str, phrases: list[str]) -> Messages:
    return _messages(CLUES.format(phrases=_lines(phrases)), question)


def clue_chars(max_words: int) -> int:
    """The longest clue the schema lets a model write: room for ``max_words`` long words."""
    return CHARS_PER_WORD * max_words


def clues_schema(phrases: list[str], max_clues: int, max_words: int, pattern: str) -> dict[str, Any]:
    """A list of short strings of the question's words (the form only: ``pattern``); the phrases
    ride along as ``examples``, JSON Schema's annotation for values that fit, which constrains
    nothing (the scripted and oracle doubles read them as the hint the prompt gives)."""
    longest = clue_chars(max_words)
    return {
        "type": "object",
        "properties": {
            "clues": {
                "type": "array",
                "items": {
                    "type": "string",
                    "pattern": pattern,
                    "maxLength": longest,
                    "examples": [p for p in phrases if len(p) <= longest],
                },
                "minItems": 1,
                "maxItems": max_clues,
            }
        },
        "required": ["clues"],
    }


def fuzzy(question: str, node: str, unused: list[str], pairs: list[str]) -> Messages:
    return _messages(FUZZY.format(node=node, clues="; ".join(unused), options=_lines(pairs)), question)


def fuzzy_schema(pairs: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"keep": {"type": "array", "items": {"enum": pairs}, "minItems": 0, "maxItems": len(pairs)}},
        "required": ["keep"],
    }


def rough(question: str, node: str, unused: list[str], options: list[str]) -> Messages:
    return _messages(ROUGH.format(node=node, clues="; ".join(unused), options=_lines(options)), question)


def rough_schema(options: list[str]) -> dict[str, Any]:
    score = {
        "type": "object",
        "properties": {"candidate": {"enum": options}, "score": {"type": "integer", "minimum": 0, "maximum": 10}},
        "required": ["candidate", "score"],
    }
    return {
        "type": "object",
        "properties": {"scores": {"type": "array", "items": score, "minItems": 0, "maxItems": len(options)}},
        "required": ["scores"],
    }


def exact(question: str, node: str, unused: list[str], options: list[str]) -> Messages:
    return _messages(EXACT.format(node=node, clues="; ".join(unused), options=_lines(options)), question)


def exact_schema(options: list[str], unused: list[str]) -> dict[str, Any]:
    match = {
        "type": "object",
        "properties": {"candidate": {"enum": options}, "clue": {"enum": unused}},
        "required": ["candidate", "clue"],
    }
    return {
        "type": "object",
        "properties": {"matches": {"type": "array", "items": match, "minItems": 0, "maxItems": len(options)}},
        "required": ["matches"],
    }


def answer(question: str, triples: list[str]) -> Messages:
    body = ANSWER.format(triples="\n".join(triples)) if triples else NO_KNOWLEDGE
    return _messages(body, question)


def answer_schema(max_answers: int) -> dict[str, Any]:
    return {"type": "object", "properties": {"answers": answers_schema(max_answers)}, "required": ["answers"]}
