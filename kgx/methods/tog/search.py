"""The state of Think-on-Graph's beam search: the paths it keeps and the names of what they reach.

Kept apart from the algorithm (``__init__.py``) so that it reads as the paper's stages; what lives
here is how paths grow, which of them the LLM sees, and how they become evidence, the
``Triples:`` text of the prompts and the explanation graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from kgx.core.graph import Graph
from kgx.kg.freebase import is_literal
from kgx.methods import kit
from kgx.methods.kit import Arc, Hop


@dataclass(frozen=True)
class Path:
    """A walk from a topic entity; ``score`` ranks it within the beam of its depth."""

    topic: str
    steps: tuple[Arc, ...] = ()
    score: float = 1.0  # of its last step: relation score x entity score

    @property
    def end(self) -> str:
        return self.steps[-1].target if self.steps else self.topic

    def extend(self, step: Arc, score: float) -> "Path":
        return Path(self.topic, (*self.steps, step), score)


@dataclass
class Candidate:
    """An entity reached from a frontier path through one kept relation."""

    path: Path
    hop: Hop
    relation_score: float
    entity: str
    label: str = ""  # how the entity_score prompt names it (unique within the call)


class Search:
    """One question's search: the names of the nodes seen, the paths kept at each depth, how many
    relation scorings were normalised and how many LLM calls were made."""

    def __init__(self, names: dict[str, str]):
        self.names = dict(names)
        self.kept: list[Path] = []
        self.reached = set(names)  # topic entities and the ends of kept paths: not candidates again
        self.normalised = 0  # relation_prune replies whose scores were normalised (stat.scores_normalised)
        self.calls = 0  # LLM calls the question has made, for method.max_calls

    def keep(self, beam: list[Path]) -> None:
        self.kept.extend(beam)
        self.reached.update(p.end for p in beam)

    def name(self, node: str) -> str:
        return self.names.get(node, node)

    def paths(self) -> list[Path]:
        """The kept paths no other kept path extends: what the LLM reasons over."""
        prefixes = {p.steps[:i] for p in self.kept for i in range(len(p.steps))}
        return [p for p in self.kept if p.steps not in prefixes]

    def triple(self, step: Arc) -> str:
        s, r, o = step.triple()
        return kit.triple_text(self.name(s), r, self.name(o))

    def evidence(self) -> list[str]:
        return list(dict.fromkeys(self.triple(s) for p in self.paths() for s in p.steps))

    def text(self) -> str:
        lines = [f"{i}. " + "; ".join(self.triple(s) for s in p.steps) for i, p in enumerate(self.paths(), 1)]
        return "\n".join(lines) or "(no triples were found)"

    def picture(self, title: str, answers: Iterable[str], side: list[str]) -> Graph:
        """The paths the LLM saw: each entity at its hop from its topic entity."""
        depth: dict[str, int] = {}
        for path in self.paths():
            depth.setdefault(path.topic, 0)
            for hops, step in enumerate(path.steps, 1):
                depth.setdefault(step.target, hops)
        triples = [s.triple() for p in self.paths() for s in p.steps]
        topics = [p.topic for p in self.paths()]
        return kit.picture(title, triples, self.names, depth, topics, answers, self.text(), side)


def frontier_of(beam: list[Path]) -> list[Path]:
    """The best path to each distinct entity the beam ends in; literals end a path."""
    best: dict[str, Path] = {}
    for path in beam:
        if not is_literal(path.end):
            best.setdefault(path.end, path)
    return list(best.values())


def labelled(candidates: list[Candidate], search: Search) -> list[Candidate]:
    """One label per distinct entity (an entity reached through two relations is scored once):
    its name, numbered [2], [3] ... when different entities share it."""
    labels: dict[str, str] = {}
    used: set[str] = set()
    for c in candidates:
        if c.entity not in labels:
            name = label = search.name(c.entity)
            number = 1
            while label in used:
                number += 1
                label = f"{name} [{number}]"
            labels[c.entity] = label
            used.add(label)
        c.label = labels[c.entity]
    return candidates
