"""Reading KnowPath's inference-paths reply (IPG, Sec. 2.2, App. F.2).

The paper's reasoning path, ``entity -> relation -> entity -> ... -> answer``, is free text even
inside JSON, and models write it loosely: bullets and labels (``Reasoning path:``), unicode
arrows, annotations such as ``(topic entity)``, a closing ``end``, or an echo of the format
itself. Only a path that parses guides the exploration, and only its last entity may stand in
for the answer, so a path is accepted only when it is a real chain of entities and relations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from kgx.methods.answers import clean_answers

ARROW = re.compile(r"\s*(->|→|=>|<-|←)\s*")
ANNOTATION = re.compile(r"\((?:topic entity|final answer|answer|end)\)", re.I)
PLACEHOLDER = re.compile(r"^[.…\s]*$")
LEAD = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*(?:(?:\w+\s+)*path\s*:)?\s*", re.I)  # "- ", "2. ", "Reasoning path:"


@dataclass
class InferencePath:
    """What IPG produced; ``paths`` holds only the paths that parsed, rendered ``a -> r -> b``."""

    paths: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    triples: list[str] = field(default_factory=list)
    topic_entities: list[str] = field(default_factory=list)


def parse_path(text: str) -> tuple[Optional[str], str]:
    """``entity -> relation -> entity -> ...`` rendered with plain arrows (``->`` or ``<-`` as the
    model wrote them), or None and why it does not parse.

    A leading bullet or label (``Reasoning path:``), annotations such as ``(topic entity)`` and a
    closing ``end`` are dropped; an echo of the format (``...`` elements) or a chain that ends on
    a relation is not a path."""
    text = ANNOTATION.sub("", LEAD.sub("", text.strip().strip("[]\"'"), count=1))
    pieces = ARROW.split(text)
    parts = [piece.strip().strip("\"'") for piece in pieces[::2]]
    arrows = ["<-" if arrow in ("<-", "←") else "->" for arrow in pieces[1::2]]
    if not arrows:
        return None, "no arrows"
    if parts[-1].lower() == "end":
        parts, arrows = parts[:-1], arrows[:-1]
    if any(PLACEHOLDER.match(part) for part in parts):
        return None, "an empty or placeholder element"
    if len(parts) < 3:
        return None, "fewer elements than entity -> relation -> entity"
    if len(parts) % 2 == 0:
        return None, "it ends on a relation, not an entity"
    return parts[0] + "".join(f" {arrow} {part}" for arrow, part in zip(arrows, parts[1:])), ""


def path_end(path: str) -> str:
    """The last entity of a parsed path: where the model's reasoning arrived, its answer."""
    return ARROW.split(path)[-1].strip()


def arrow_lines(text: str) -> list[str]:
    """The lines of a reply that never became valid JSON that may still hold a path."""
    return [line for line in text.splitlines() if ARROW.search(line)]


def read_reply(reply: dict[str, Any], max_answers: int) -> tuple[InferencePath, list[tuple[str, str]]]:
    """The inference path of a reply, and each path text that did not parse with why. Without a
    listed answer, the end of the first parsed path is the answer (where the reasoning arrived)."""
    found = InferencePath(
        triples=[str(t) for t in reply.get("triples", [])],
        topic_entities=[str(t) for t in reply.get("topic_entities", [])],
    )
    unparsed = []
    for text in map(str, reply.get("paths", [])):
        path, why = parse_path(text)
        if path is None:
            unparsed.append((text, why))
        else:
            found.paths.append(path)
    found.answers = clean_answers(reply.get("answers", []), max_answers) or clean_answers(
        [path_end(path) for path in found.paths], 1
    )
    return found, unparsed
