"""KnowPath's prompts (paper App. F.2-F.5), in kgx's wording, with the paper's inputs and outputs.

Each prompt keeps the paper's inputs (question, topic entities, the inference path, candidate
relations or entities, the directed subgraph) and asks for the paper's output as JSON, so that
choices can be constrained to the candidates and replies checked: topic entities, triples, path
and answer (F.2); relations (F.3) and entities (F.4) per subgraph; answerable and answer (F.5).
The question comes last, on its own ``Question:`` line. The schemas of the F.2 and F.5 replies
stand beside their prompts, which name the same keys, and so do the reply sizes the two calls ask
for (``ipg_tokens``, ``evaluation_tokens``), which a small backbone's ``llm.max_tokens`` would cut.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from kgx.llm.messages import Messages
from kgx.methods.answers import answers_schema

PATH_FORMAT = "topic entity -> relation -> entity -> relation -> ... -> answer"
MAX_TOPICS = 5  # topic entities an IPG reply may name
MAX_PATHS = 3  # inference paths an IPG reply may give
REASONING_CHARS = 600  # the evaluation's reasoning

# Token budgets of reply parts, about twice what hand-written replies for the paper's Canberra case
# took, counted with litellm.token_counter(model="gpt-3.5-turbo", text=...) and SmolLM2's own
# tokenizer (in brackets): 15 triples such as "(Australian House of Representatives, majority party,
# Australian Labor Party)" took 8-14 tokens each as JSON strings, mean 11.4 (12.7); paths of 2-3
# hops 16-23 (the same); entity names 3-8; 510 characters of reasoning 114 (130), 3.9-4.5
# characters a token; braces, keys and separators 19, about 35 pretty-printed. The whole IPG reply
# (15 triples, 3 paths, one topic entity, one answer; FULL_IPG in tests/methods/test_knowpath.py)
# took 257 (264) tokens compact, 293 (300) with indent=2: more than llm=local's max_tokens of 256.
# SmolLM2-135M's own replies to demo-004..014 took 107-496 tokens, one looped to 685.
TRIPLE_TOKENS = 25
PATH_TOKENS = 50
NAME_TOKENS = 12  # a topic entity or an answer
CHARS_PER_TOKEN = 3
JSON_TOKENS = 40


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
        steps.append(
            f"2. From what you know, write {triples} knowledge triples (subject, relation, "
            f"object) about these entities, the ones that matter most for the question first."
        )
    steps.append(
        f"{len(steps) + 1}. Answer the question{' from these triples' if triples else ''} and give the "
        f"reasoning path that leads from a topic entity to the answer, one arrow between each "
        f"entity and relation, in the form: {PATH_FORMAT}"
    )
    keys = '"topic_entities", ' + ('"triples", ' if triples else "") + '"paths" and "answers"'
    return _messages(
        "You answer questions from your own knowledge and show the facts and the chain of reasoning "
        "that lead you to the answer.",
        "Work through the question below step by step.\n"
        + "\n".join(steps)
        + f"\nReply with a JSON object with the keys {keys}.\nQuestion: {question}",
    )


def ipg_schema(triples: int, max_answers: int) -> dict[str, Any]:
    """F.2's reply, as the prompt above names its keys (``triples`` only when asked for)."""
    strings = {"type": "string", "minLength": 1, "maxLength": 300}
    props: dict[str, Any] = {
        "topic_entities": {
            "type": "array",
            "items": {"type": "string", "maxLength": 120},
            "minItems": 1,
            "maxItems": MAX_TOPICS,
        }
    }
    if triples:
        props["triples"] = {"type": "array", "items": strings, "minItems": 1, "maxItems": triples}
    props["paths"] = {"type": "array", "items": strings, "minItems": 1, "maxItems": MAX_PATHS}
    props["answers"] = answers_schema(max_answers)
    return {"type": "object", "properties": props, "required": list(props)}


def ipg_tokens(triples: int, max_answers: int) -> int:
    """The tokens an F.2 reply may take in full: ``triples`` triples, every path, topic entity and
    answer the schema allows, and the JSON around them (budgets measured above); 685 for the
    paper's 15 triples and 5 answers."""
    return triples * TRIPLE_TOKENS + MAX_PATHS * PATH_TOKENS + (MAX_TOPICS + max_answers) * NAME_TOKENS + JSON_TOKENS


def _length(list_length: Optional[int]) -> str:
    """The end of the reply format: F.3's and F.4's "(length up to 5)" where a length is given."""
    return "." if list_length is None else f" (each list of length up to {list_length})."


def relations(
    question: str,
    topics: Sequence[str],
    inference: Optional[Sequence[str]],
    offers: Sequence[tuple[str, Sequence[str], Sequence[str]]],
    width: int,
    list_length: Optional[int] = None,
) -> Messages:
    """F.3: for each subgraph (key, entities at its frontier, candidate relations), up to
    ``width`` relations to follow next, each list at most ``list_length`` long where given."""
    blocks = []
    for key, frontier, candidates in offers:
        blocks.append(
            f'Subgraph "{key}", now at: {"; ".join(frontier)}\nCandidate relations:\n'
            + "\n".join(f"- {r}" for r in candidates)
        )
    return _messages(
        "You explore a knowledge graph to answer a question, choosing which relations to follow.",
        _context(topics, inference)
        + f"\nFor each subgraph below, choose up to {width} of its candidate relations that most likely "
        f"lead from its current entities toward the answer.\n\n"
        + "\n\n".join(blocks)
        + "\n\nReply with a JSON object that maps each subgraph name to the list of relations chosen for it"
        + _length(list_length)
        + f"\nQuestion: {question}",
    )


def entities(
    question: str,
    topics: Sequence[str],
    inference: Optional[Sequence[str]],
    chosen: Sequence[str],
    offers: Sequence[tuple[str, Sequence[tuple[str, str]]]],
    width: int,
    list_length: Optional[int] = None,
) -> Messages:
    """F.4: for each subgraph (key, candidates as (label, the edge that reached it)), up to
    ``width`` entities, given the relations chosen before; each list at most ``list_length``."""
    blocks = []
    for key, candidates in offers:
        blocks.append(
            f'Subgraph "{key}", candidate entities:\n'
            + "\n".join(f"- {label}   [{edge}]" for label, edge in candidates)
        )
    return _messages(
        "You explore a knowledge graph to answer a question, choosing which entities to keep.",
        _context(topics, inference)
        + f"\nRelations just followed: {'; '.join(chosen)}"
        + f"\nFor each subgraph below, choose up to {width} of its candidate entities that most likely "
        f"answer the question or lead toward the answer.\n\n"
        + "\n\n".join(blocks)
        + "\n\nReply with a JSON object that maps each subgraph name to the list of entities chosen for it"
        + _length(list_length)
        + f"\nQuestion: {question}",
    )


def evaluation(question: str, paths: Sequence[str], inference: Optional[Sequence[str]]) -> Messages:
    """F.5: is the question answerable from the directed subgraph and the model's own knowledge?"""
    lines = [f"  {p}" for p in paths] or ["  (no paths found yet)"]
    guide = ""
    if inference:
        guide = "\nYour inference path from your own knowledge (not checked against the graph):\n" + "\n".join(
            f"  {p}" for p in inference
        )
    return _messages(
        "You decide whether paths found in a knowledge graph, with your own knowledge, answer a question.",
        "Reasoning paths in the knowledge graph, each from a topic entity; '->' follows a relation from "
        "its subject to its object and '<-' goes against it:\n"
        + "\n".join(lines)
        + guide
        + "\nDecide whether the question can be answered from these paths and your own knowledge. Reply "
        'with a JSON object: "answerable" (true or false), "reasoning" (one or two sentences) and '
        '"answers" (the answer entities if answerable, else your best guess).' + f"\nQuestion: {question}",
    )


def evaluation_schema(max_answers: int) -> dict[str, Any]:
    """F.5's reply, as the prompt above names its keys."""
    return {
        "type": "object",
        "required": ["answerable", "reasoning", "answers"],
        "properties": {
            "answerable": {"type": "boolean"},
            "reasoning": {"type": "string", "maxLength": REASONING_CHARS},
            "answers": answers_schema(max_answers),
        },
    }


def evaluation_tokens(max_answers: int) -> int:
    """The tokens an F.5 reply may take in full (budgets measured above): 300 with 5 answers, so a
    long reasoning with many answers does not hit a 256-token backbone limit."""
    return REASONING_CHARS // CHARS_PER_TOKEN + max_answers * NAME_TOKENS + JSON_TOKENS
