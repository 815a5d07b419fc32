"""KnowPath's directed subgraphs (Sec. 2.3, Alg. 2): per topic entity, the paths walked from it,
each hop in the direction of the KG's edge, written as the paper writes them (F.5):
``a -> r -> b <- r2 <- c``, where ``<-`` walks an edge from its object back to its subject; and
the exploration state the rounds share, which holds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kgx.core.types import Question
from kgx.kg.freebase import is_literal
from kgx.methods.kit import Hop


@dataclass(frozen=True)
class Step:
    """One hop of a path: the relation walked from the previous entity, and where it arrived."""

    hop: Hop
    entity: str


Path = tuple[Step, ...]


@dataclass
class Subgraph:
    """K_s^i of Sec. 2.3: directed paths from one topic entity. ``frontier`` holds the paths grown
    in the last round; their tail entities are explored next (the candidate entities E_j^i)."""

    topic: str
    name: str
    key: str  # the subgraph's name in prompts and replies
    paths: list[Path] = field(default_factory=lambda: [()])
    frontier: list[Path] = field(default_factory=lambda: [()])

    def tail(self, path: Path) -> str:
        return path[-1].entity if path else self.topic

    def entities(self) -> set[str]:
        return {self.topic} | {step.entity for path in self.paths for step in path}

    def frontier_entities(self) -> list[str]:
        """Tails that can be explored: literals have no relations of their own."""
        return list(dict.fromkeys(t for t in map(self.tail, self.frontier) if not is_literal(t)))

    def triples(self) -> list[tuple[str, str, str]]:
        """(head, relation, tail) ids in the KG's direction, in path order, without repeats."""
        seen: dict[tuple[str, str, str], None] = {}
        for path in self.paths:
            here = self.topic
            for step in path:
                seen[step.hop.triple(here, step.entity)] = None
                here = step.entity
        return list(seen)

    def update(self, edges: dict[str, list[tuple[str, Hop]]]) -> None:
        """Alg. 2: every frontier path whose tail reached a kept entity grows by ``-> r -> e`` or
        ``<- r <- e``; a path that grew is replaced by its extensions (it is their prefix), the
        others stay. ``edges`` maps a kept entity to the (frontier entity, hop) edges that reached
        it. Paths always start at the topic entity, so the algorithm's prepend branch (a path
        whose head is the new entity) never arises."""
        grown: list[Path] = []
        extended: set[Path] = set()
        for path in self.frontier:
            tail = self.tail(path)
            for entity, reached_by in edges.items():
                for source, hop in reached_by:
                    if source == tail:
                        grown.append(path + (Step(hop, entity),))
                        extended.add(path)
        self.paths = [path for path in self.paths if path not in extended] + grown
        self.frontier = grown


@dataclass
class Exploration:
    """State shared by the rounds: the subgraphs, the entity names seen, and the guide."""

    question: Question
    subgraphs: list[Subgraph]
    names: dict[str, str]
    guide: Optional[list[str]]  # the inference paths shown in prompts (None: w/o IPG or none parsed)

    @property
    def topics(self) -> list[str]:
        return [sg.name for sg in self.subgraphs]

    def name(self, entity: str) -> str:
        return self.names.get(entity, entity)

    def lines(self) -> list[str]:
        """Every path of every subgraph as the paper writes it (F.5)."""
        return [render(sg, path, self.names) for sg in self.subgraphs for path in sg.paths if path]


def walk(hop: Hop, there: str) -> str:
    """One hop as the paper writes it, the arrow on both sides of the relation: `` <- r <- b``."""
    return f" {hop.arrow} {hop.relation} {hop.arrow} {there}"


def render(sg: Subgraph, path: Path, names: dict[str, str]) -> str:
    """A path from its topic entity, with entity names: ``a -> r -> b <- r2 <- c``."""
    return names.get(sg.topic, sg.name) + "".join(walk(step.hop, names.get(step.entity, step.entity)) for step in path)


def depths(subgraphs: list[Subgraph]) -> dict[str, int]:
    """Each entity's fewest hops from a topic entity, for drawing the subgraphs."""
    depth: dict[str, int] = {}
    for sg in subgraphs:
        depth[sg.topic] = 0
        for path in sg.paths:
            for hops, step in enumerate(path, 1):
                depth[step.entity] = min(hops, depth.get(step.entity, hops))
    return depth


def distinct(names: list[str]) -> list[str]:
    """Distinct labels for prompts and JSON keys; a repeated label gets ``#2``, ``#3`` ..."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return out
