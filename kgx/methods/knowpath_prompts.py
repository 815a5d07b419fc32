"""KnowPath's prompts (paper App. F.2-F.5), in kgx's wording, with the paper's inputs and outputs.

Each prompt keeps the paper's inputs (question, topic entities, the inference path, candidate
relations or entities, the directed subgraph) and asks for the paper's output as JSON, so that
choices can be constrained to the candidates and replies checked: topic entities, triples, path
and answer (F.2); relations (F.3) and entities (F.4) per subgraph; answerable and answer (F.5).
The question comes last, on its own ``Question:`` line. The schemas of the F.2 and F.5 replies
stand beside their prompts, which name the same keys.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from kgx.llm.client import Messages
from kgx.methods.kit import answers_schema

PATH_FORMAT = "topic entity -> relation -> entity -> relation -> ... -> answer"


def _messages(system: str, user: str) -> Messages:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _context(topics: Sequence[str], inference: Optional[Sequence[str]]) -> str:
    lines = [f"Topic entities: {'; '.join(topics) or '(none)'}"]
    if inference:
        lines.append("Inference path from your own knowledge (a guide, not checked against the graph):")
        lines += [f"  {path}" for path in inference]
    return "\n".join(lines)


def inference_paths(question: str, triples: int) -> Messages:
    """F.2: topic entities, ``triples`` knowledge triples by relevance, answer and reasoning path.
    With ``triples=0`` (Fig. 5a's first point) the triples step is left out."""
    steps = ["1. Name the topic entities of the question: the entities it is about."]
    if triples:
        steps.append(f"2. From what you know, write {triples} knowledge triples (subject, relation, "
                     f"object) about these entities, the ones that matter most for the question first.")
    steps.append(f"{len(steps) + 1}. Answer the question{' from these triples' if triples else ''} and give the "
                 f"reasoning path that leads from a topic entity to the answer, one arrow between each "
                 f"entity and relation, in the form: {PATH_FORMAT}")
    keys = '"topic_entities", ' + ('"triples", ' if triples else "") + '"paths" and "answers"'
    return _messages(
        "You answer questions from your own knowledge and show the facts and the chain of reasoning "
        "that lead you to the answer.",
        "Work through the question below step by step.\n" + "\n".join(steps)
        + f"\nReply with a JSON object with the keys {keys}.\nQuestion: {question}",
    )


def ipg_schema(triples: int, max_answers: int) -> dict[str, Any]:
    """F.2's reply, as the prompt above names its keys (``triples`` only when asked for)."""
    strings = {"type": "string", "minLength": 1, "maxLength": 300}
    props: dict[str, Any] = {"topic_entities": {"type": "array", "items": {"type": "string", "maxLength": 120},
                                                "minItems": 1, "maxItems": 5}}
    if triples:
        props["triples"] = {"type": "array", "items": strings, "minItems": 1, "maxItems": triples}
    props["paths"] = {"type": "array", "items": strings, "minItems": 1, "maxItems": 3}
    props["answers"] = answers_schema(max_answers)
    return {"type": "object", "properties": props, "required": list(props)}


def relations(question: str, topics: Sequence[str], inference: Optional[Sequence[str]],
              offers: Sequence[tuple[str, Sequence[str], Sequence[str]]], width: int) -> Messages:
    """F.3: for each subgraph (key, entities at its frontier, candidate relations), up to
    ``width`` relations to follow next."""
    blocks = []
    for key, frontier, candidates in offers:
        blocks.append(f'Subgraph "{key}", now at: {"; ".join(frontier)}\nCandidate relations:\n'
                      + "\n".join(f"- {r}" for r in candidates))
    return _messages(
        "You explore a knowledge graph to answer a question, choosing which relations to follow.",
        _context(topics, inference)
        + f"\nFor each subgraph below, choose up to {width} of its candidate relations that most likely "
          f"lead from its current entities toward the answer.\n\n" + "\n\n".join(blocks)
        + "\n\nReply with a JSON object that maps each subgraph name to the list of relations chosen for it."
        + f"\nQuestion: {question}",
    )


def entities(question: str, topics: Sequence[str], inference: Optional[Sequence[str]],
             chosen: Sequence[str], offers: Sequence[tuple[str, Sequence[tuple[str, str]]]],
             width: int) -> Messages:
    """F.4: for each subgraph (key, candidates as (label, the edge that reached it)), up to
    ``width`` entities, given the relations chosen before."""
    blocks = []
    for key, candidates in offers:
        blocks.append(f'Subgraph "{key}", candidate entities:\n'
                      + "\n".join(f"- {label}   [{edge}]" for label, edge in candidates))
    return _messages(
        "You explore a knowledge graph to answer a question, choosing which entities to keep.",
        _context(topics, inference) + f"\nRelations just followed: {'; '.join(chosen)}"
        + f"\nFor each subgraph below, choose up to {width} of its candidate entities that most likely "
          f"answer the question or lead toward the answer.\n\n" + "\n\n".join(blocks)
        + "\n\nReply with a JSON object that maps each subgraph name to the list of entities chosen for it."
        + f"\nQuestion: {question}",
    )


def evaluation(question: str, paths: Sequence[str], inference: Optional[Sequence[str]]) -> Messages:
    """F.5: is the question answerable from the directed subgraph and the model's own knowledge?"""
    lines = [f"  {p}" for p in paths] or ["  (no paths found yet)"]
    guide = ""
    if inference:
        guide = "\nYour inference path from your own knowledge (not checked against the graph):\n" + "\n".join(
            f"  {p}" for p in inference)
    return _messages(
        "You decide whether paths found in a knowledge graph, with your own knowledge, answer a question.",
        "Reasoning paths in the knowledge graph, each from a topic entity; '->' follows a relation from "
        "its subject to its object and '<-' goes against it:\n" + "\n".join(lines) + guide
        + "\nDecide whether the question can be answered from these paths and your own knowledge. Reply "
          'with a JSON object: "answerable" (true or false), "reasoning" (one or two sentences) and '
          '"answers" (the answer entities if answerable, else your best guess).'
        + f"\nQuestion: {question}",
    )


def evaluation_schema(max_answers: int) -> dict[str, Any]:
    """F.5's reply, as the prompt above names its keys."""
    return {"type": "object", "required": ["answerable", "reasoning", "answers"], "properties": {
        "answerable": {"type": "boolean"},
        "reasoning": {"type": "string", "maxLength": 600},
        "answers": answers_schema(max_answers)}}
