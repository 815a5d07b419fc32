"""StructGPT's KGQA prompts (Jiang et al., 2023; released RUCAIBox/StructGPT, prompts ``chat_v1``
of ``prompt_for_webqsp.json``), in kgx's wording, and the JSON its replies must be.

The released prompts are zero-shot and each carries what one step of the iterative
reading-then-reasoning loop needs:

- relation selection: the linearised candidate relations (``"r1", "r2", ...``), the question, the
  entity the search starts from and the relations already followed; output: the relation(s) to
  follow, constrained here to the candidates;
- constraints (the released ``choose_constraints``): per relation of the unnamed (CVT) nodes
  reached, the values they hold; output: ``relation: value`` pairs the question pins down, or none;
- reasoning (``ask_final_answer_or_next_question``): the linearised triples and the question;
  output: the final answer, or "need further information" (here ``sufficient: false``);
- answer (``final_query_template``): "according to existing information", the question; here
  with the triples read, when there are any.

Replies are JSON (answers.sufficiency_schema, answers.answer_schema, choices constrained to the candidates).
"""

from __future__ import annotations

from kgx.methods.kit import few_shot

SYSTEMS = {
    "relation_selection": (
        "You answer a question by reading a knowledge graph step by step. Given the relations around the "
        "entities reached so far, choose the relation to follow next: the one whose meaning the question "
        "needs. A relation marked (reverse) points at the entity: the entity is its object."
    ),
    "constraints": (
        "You narrow down a knowledge graph search. Some facts are held by unnamed nodes (shown CVT_0, "
        "CVT_1, ...), each with attributes. Given the attributes and their values, choose the values the "
        "question pins down (a year, a role, a place), at most one per attribute, or none when the question "
        "gives no such hint."
    ),
    "reasoning": (
        "You answer a question from knowledge graph triples (head, relation, tail). If the triples are "
        "enough to answer, say so and give the answer entities, taken from the triples; if they are not, "
        "say that further information is needed."
    ),
    "answer": (
        "You answer a question according to the information you have: the knowledge graph triples read "
        "so far, if any, and what you know. Think step by step, then give the answer entities."
    ),
}


def quoted(items: list[str]) -> str:
    """The released linearisation of a list: ``"r1", "r2", ...`` (a literal keeps its own quotes)."""
    return ", ".join(item if item.startswith('"') and item.endswith('"') else f'"{item}"' for item in items)


def relation_prompt(question: str, start: list[str], followed: list[str], candidates: list[str], k: int) -> str:
    chain = " -> ".join(followed) if followed else "(none yet)"
    return (
        f"The candidate relations: {quoted(candidates)}.\nThe search starts from {quoted(start)}.\n"
        f"Relations already followed: {chain}\nChoose {k} relation{'s' if k > 1 else ''} present in the "
        f"candidates.\nQuestion: {question}"
    )


def constraints_prompt(question: str, start: list[str], values: list[tuple[str, list[str]]]) -> str:
    lines = "\n".join(f"{quoted([relation])}: [{quoted(options)}]" for relation, options in values)
    return (
        f"Attributes of the unnamed nodes and their values:\n{lines}\nThe search started from "
        f"{quoted(start)}.\nQuestion: {question}"
    )


def triples_text(lines: list[str]) -> str:
    return "\n".join(lines) or "(no triples were read)"


def reasoning_prompt(question: str, lines: list[str]) -> str:
    return f"The triples are:\n{triples_text(lines)}\nQuestion: {question}"


def answer_prompt(question: str, lines: list[str]) -> str:
    return f"Existing information, the triples read:\n{triples_text(lines)}\nQuestion: {question}"


def messages(stage: str, content: str) -> list[dict[str, str]]:
    return few_shot(SYSTEMS[stage], [], content)
