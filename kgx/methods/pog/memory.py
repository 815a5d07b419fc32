"""The state of one Plan-on-Graph question ("Memory Updating", Fig. 2): the sub-objectives, the
explored subgraph, every entity met (the pool reflection backtracks to), the memory text per
sub-objective and the reflection decisions.

Kept apart from the algorithm (``__init__.py``) so that it reads as the paper's stages; what lives here
is how the subgraph grows, how it is written in prompts and evidence, and how it is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from kgx.core.graph import Graph
from kgx.kg.freebase import is_literal
from kgx.methods import kit
from kgx.methods.kit import Arc, Hop


@dataclass(frozen=True)
class Link(Arc):
    """One hop from ``source`` through ``hop`` to ``target``, found at ``depth``."""

    depth: int


@dataclass
class Memory:
    """Everything one question's search knows; the released code keeps the same in files per question."""

    topics: list[str]
    names: dict[str, str]
    subobjectives: list[str] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)  # sub-objective number -> what is known so far
    depth_of: dict[str, int] = field(default_factory=dict)  # the explored subgraph's entities, at their depth
    links: list[Link] = field(default_factory=list)  # the explored subgraph's triples, in the order kept
    fresh: list[Link] = field(default_factory=list)  # kept since the last memory update
    seen: dict[str, Link] = field(default_factory=dict)  # every candidate met, by its first link
    walked: dict[str, set[Hop]] = field(default_factory=dict)  # hops already explored from an entity
    came_by: dict[str, set[Hop]] = field(default_factory=dict)  # hops that reached an entity
    explored: set[str] = field(default_factory=set)  # entities whose relations were explored
    backtracked: dict[str, int] = field(default_factory=dict)  # entity -> depth whose reflection added it
    decisions: list[str] = field(default_factory=list)  # reflection outcomes, in order

    def __post_init__(self) -> None:
        for topic in self.topics:
            self.depth_of.setdefault(topic, 0)

    def name(self, entity: str) -> str:
        return self.names.get(entity, entity)

    def plan(self, question: str) -> str:
        """The question with its sub-objectives: what rankers score candidates against."""
        return " ".join([question, *self.subobjectives])

    def meet(self, link: Link) -> None:
        """A candidate reached through ``link``: remembered for backtracking."""
        self.seen.setdefault(link.target, link)

    def keep(self, link: Link) -> bool:
        """``link`` into the explored subgraph; False when its triple is there already."""
        if any(k.triple() == link.triple() for k in self.links):
            return False
        self.links.append(link)
        self.fresh.append(link)
        self.depth_of.setdefault(link.target, link.depth)
        self.came_by.setdefault(link.target, set()).add(link.hop)
        return True

    def offered_hops(self, entity: str, hops: list[Hop], walk_back: bool = False) -> list[Hop]:
        """Hops worth offering at ``entity``: not back along a hop that reached it (the released code's
        ``pre_relations``; ``walk_back`` offers it), and not one explored from it before (a
        backtracked entity tries others)."""
        back = set() if walk_back else {h.reverse() for h in self.came_by.get(entity, set())}
        done = self.walked.get(entity, set())
        return [h for h in hops if h not in back and h not in done]

    # ----------------------------------------------------------------------- text

    def triple(self, link: Link) -> str:
        s, r, o = link.triple()
        return kit.triple_text(self.name(s), r, self.name(o))

    def lines(self, links: Optional[Iterable[Link]] = None) -> list[str]:
        """Triples as prompts and ``answer_recall`` read them, each once; all kept ones by default."""
        return list(dict.fromkeys(self.triple(k) for k in (self.links if links is None else links)))

    def pool(self, frontier: list[str]) -> list[str]:
        """Entities reflection may add: every entity met or explored so far that is not
        about to be explored, was not added before and can be explored (no literals)."""
        met = list(dict.fromkeys([*self.depth_of, *self.seen]))
        skip = set(frontier) | set(self.backtracked)
        return [e for e in met if e not in skip and not is_literal(e)]

    def picture(self, title: str, answers: Iterable[str], outcome: str) -> Graph:
        """The explored subgraph, each entity at its depth; backtracked entities are marked in their
        label and listed beside, with the sub-objectives, the memory and the reflection decisions."""
        side = [
            "Sub-objectives:",
            *([f"{i}. {s}" for i, s in enumerate(self.subobjectives, 1)] or ["(none)"]),
            "Memory:",
            *([f"{k}. {v}" for k, v in self.notes.items()] or ["(empty)"]),
            "Reflection:",
            *(self.decisions or ["(no reflection)"]),
            outcome,
        ]
        graph = kit.picture(
            title,
            [k.triple() for k in self.links],
            self.names,
            self.depth_of,
            self.topics,
            answers,
            "\n".join(self.lines()),
            side,
        )
        for node in graph.nodes:
            if node.id in self.backtracked:
                node.label = f"{node.label} (backtracked at depth {self.backtracked[node.id]})"
        return graph


def unnecessary(relation: str) -> bool:
    """The released ``remove_unnecessary_rel`` filter: schema and bookkeeping relations."""
    return (
        relation in ("type.object.type", "type.object.name")
        or relation.startswith(("common.", "freebase."))
        or "sameAs" in relation
    )


def distinct_labels(entities: list[str], memory: Memory) -> dict[str, str]:
    """label -> entity: the entity's name, numbered [2], [3] ... when different entities share it."""
    out: dict[str, str] = {}
    for entity in entities:
        name = label = memory.name(entity)
        number = 1
        while label in out:
            number += 1
            label = f"{name} [{number}]"
        out[label] = entity
    return out


def interleave(groups: list[list[str]]) -> list[str]:
    """The first of every group, then the second of every group, ...; each entity once. The
    frontier cap then takes entities from every explored entity, not from the first alone."""
    out: dict[str, None] = {}
    for i in range(max((len(g) for g in groups), default=0)):
        for group in groups:
            if i < len(group):
                out[group[i]] = None
    return list(out)
