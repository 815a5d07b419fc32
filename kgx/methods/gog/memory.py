"""What Generate-on-Graph knows of one question: the entities met and their labels, the triples
read from the KG or generated, and the Thought / Action / Observation steps so far.

Kept apart from the algorithm (``__init__.py``) so that it reads as the paper's loop. The history is the
context every Thinking step sees (the released code rebuilds the prompt from its records each
step); the triples are what a Generate action chooses its known triples from (BM25 against the
thought, Sec. 5.3), the evidence of the answer and the explanation graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from kgx.core.graph import Graph
from kgx.kg.freebase import is_literal
from kgx.methods import kit
from kgx.methods.samplers import bm25_rank


@dataclass(frozen=True)
class Fact:
    """A triple in the KG's direction, by the labels GoG shows: read from the KG (with its node
    ids) or generated (``generated``; ids only where its entities were linked)."""

    subject: str
    relation: str
    object: str
    ids: tuple[str, str] = ("", "")
    generated: bool = False

    def text(self) -> str:
        return kit.triple_text(self.subject, self.relation, self.object)


@dataclass
class Step:
    """One Thought / Action / Observation of the loop; a Search also keeps the entities it reached
    first (what Finish[unknown] searches next, one hop further)."""

    thought: str
    action: str
    kind: str  # search | generate | finish
    observation: str = ""
    reached: list[str] = field(default_factory=list)


class Memory:
    """One question's entities, triples and steps."""

    def __init__(self, topics: dict[str, str]):
        self.labels: dict[str, str] = {}  # id -> the label shown (names shared by two ids numbered [2] ...)
        self.ids: dict[str, str] = {}  # label -> id
        self.depth: dict[str, int] = {}  # id -> hop from a topic entity where it was met
        self.order: list[str] = []  # ids in the order met: the entities a Search may read
        self.searched: set[str] = set()
        self.facts: list[Fact] = []
        self.steps: list[Step] = []
        self.topics = list(topics)
        self.know(topics, 0)

    def know(self, names: dict[str, str], depth: int) -> None:
        """Label the ids not met yet, at ``depth``; a name another id already has is numbered."""
        for node, name in names.items():
            if node in self.labels:
                continue
            label, number = name, 1
            while label in self.ids:
                number += 1
                label = f"{name} [{number}]"
            self.labels[node], self.ids[label], self.depth[node] = label, node, depth
            self.order.append(node)

    def label(self, node: str) -> str:
        return self.labels.get(node, node)

    def searchable(self) -> list[str]:
        """The labels a Search may read: the topic entities first, as the released prompt asks for
        the first search; then every entity met and not searched yet (no value: a literal has no
        triples of its own)."""
        first = [t for t in self.topics if t not in self.searched]
        if not self.steps:
            return [self.labels[t] for t in first]
        rest = [x for x in self.order if x not in self.searched and x not in first and not is_literal(x)]
        return [self.labels[x] for x in [*first, *rest]]

    def add(self, facts: Iterable[Fact]) -> list[Fact]:
        """The facts not known yet, now known."""
        seen = {f.text() for f in self.facts}
        new: list[Fact] = []
        for fact in facts:
            if fact.text() not in seen:
                seen.add(fact.text())
                new.append(fact)
        self.facts.extend(new)
        return new

    def related(self, thought: str, k: int) -> list[str]:
        """The ``k`` triples read from the KG closest to ``thought`` by BM25 (Sec. 5.3, "Choosing";
        the released code chooses among the searched triples only, never the generated ones)."""
        return [text for text, _ in bm25_rank(thought, self.evidence(), k)]

    def last_search(self) -> Optional[Step]:
        """The last Search once the Generate steps after it are rolled back (Finish[unknown])."""
        while self.steps and self.steps[-1].kind == "generate":
            self.steps.pop()
        return self.steps[-1] if self.steps and self.steps[-1].kind == "search" else None

    def history(self) -> str:
        return "\n".join(
            f"Thought {i}: {s.thought}\nAction {i}: {s.action}\nObservation {i}: {s.observation}"
            for i, s in enumerate(self.steps, 1)
        )

    def evidence(self) -> list[str]:
        """The KG triples read: what an answer from the KG rests on (generated ones are no evidence)."""
        return [f.text() for f in self.facts if not f.generated]

    def generated(self) -> list[str]:
        return [f.text() for f in self.facts if f.generated]

    def picture(self, title: str, answers: Iterable[str], side: list[str]) -> Graph:
        """The triples read (generated ones with both ends linked too), each entity at the hop where
        it was met; the generated triples are listed beside the graph."""
        triples = [(f.ids[0], f.relation, f.ids[1]) for f in self.facts if all(f.ids)]
        drawn = {x for s, _, o in triples for x in (s, o)} | set(self.topics)
        depth = {x: d for x, d in self.depth.items() if x in drawn}
        notes = [*side, *(f"generated: {text}" for text in self.generated())]
        return kit.picture(title, triples, self.labels, depth, self.topics, answers, "\n".join(self.evidence()), notes)
