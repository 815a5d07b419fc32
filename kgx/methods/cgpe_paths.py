"""CGPE's paths (Tao et al., Sec. 3.4-3.5): a path of nodes, each with the clue it used, the
hops between them, and the merge of two paths that left one initial node in opposite directions;
the candidates for a path's next node, as the matching calls see them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from kgx.methods.kit import Hop, triple_text


@dataclass(frozen=True)
class Path:
    """Nodes in walking order, the clue each node used, and the edges joining consecutive nodes:
    ``links[i]`` holds the hops that lead from ``nodes[i]`` to ``nodes[i + 1]``."""

    nodes: tuple[str, ...]
    clues: tuple[str, ...]
    links: tuple[tuple[Hop, ...], ...] = ()

    def unused(self, clues: list[str]) -> list[str]:
        return [c for c in clues if c not in self.clues]

    def covers(self, clues: list[str]) -> bool:
        return not self.unused(clues)

    def extend(self, node: str, clue: str, hops: tuple[Hop, ...]) -> "Path":
        return Path(self.nodes + (node,), self.clues + (clue,), self.links + (hops,))

    def reversed(self) -> "Path":
        flipped = tuple(tuple(hop.reverse() for hop in link) for link in reversed(self.links))
        return Path(self.nodes[::-1], self.clues[::-1], flipped)

    def triples(self) -> list[tuple[str, str, str]]:
        """The path's edges as (subject, relation, object) entity triples, in the KG's direction."""
        return [hop.triple(a, b) for a, b, link in zip(self.nodes, self.nodes[1:], self.links) for hop in link]


def merge(a: Path, b: Path, clues: list[str]) -> Optional[Path]:
    """Sec. 3.5: two paths from one initial node that went opposite ways, joined at it, when
    they share no other node or clue and together use every clue."""
    if a.nodes[0] != b.nodes[0] or len(a.nodes) < 2 or len(b.nodes) < 2:
        return None
    if set(a.nodes[1:]) & set(b.nodes[1:]) or set(a.clues[1:]) & set(b.clues[1:]):
        return None
    joined = b.reversed()
    joined = Path(joined.nodes + a.nodes[1:], joined.clues + a.clues[1:], joined.links + a.links)
    return joined if joined.covers(clues) else None


def merges(children: list[Path], states: list[Path], clues: list[str]) -> list[Path]:
    """The distinct merged paths that new path states make with any state reached so far, each
    read in one direction (the smaller node sequence), so that a pair met twice counts once."""
    found: dict[tuple[str, ...], Path] = {}
    for child in children:
        for other in states:
            if other is not child and (m := merge(child, other, clues)):
                m = m if m.nodes <= m.nodes[::-1] else m.reversed()
                found.setdefault(m.nodes, m)
    return list(found.values())


@dataclass
class Candidate:
    """A neighbour of the node a path is at: the hops that reach it, its name and its label."""

    entity: str
    name: str
    label: str
    edges: list[Hop]

    @property
    def text(self) -> str:
        return f"({self.label}, {self.name})"

    def pair(self, hop: Hop) -> str:
        return f"({hop.label}, {self.label})"


def grouped(candidates: list[Candidate]) -> dict[str, list[Candidate]]:
    """Candidates by their (label, entity) text: the model cannot tell apart what reads the same."""
    groups: dict[str, list[Candidate]] = {}
    for c in candidates:
        groups.setdefault(c.text, []).append(c)
    return groups


def path_triples(path: Path, names: dict[str, str]) -> list[str]:
    """The path's edges as evidence, with names, in the KG's direction."""
    return [triple_text(names.get(s, s), r, names.get(o, o)) for s, r, o in path.triples()]
