"""CGPE's paths (Tao et al., Sec. 3.4-3.5): a path of nodes, each with the clue it used, the
hops between them, and the merge of two paths that left one initial node in opposite directions;
the candidates for a path's next node, as the matching calls see them; one question's
exploration, how it ended and its explanation graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kgx.core.graph import Graph
from kgx.methods import kit
from kgx.methods.kit import Hop, triple_text

# The stages, each with its own backbone if configured (``llm.stages.<stage>``), and the trace
# sections their notes go to.
STAGE_CLUES, STAGE_EXPLORE, STAGE_ANSWER = "clue_extraction", "path_exploration", "answer"

# How exploration ended: the Prediction's ``reason`` (in predictions.jsonl, so a run's share of
# each ending can be counted) and the trace's last "ended: ..." note.
COVERAGE, MERGED, DEAD_END = "clue_coverage", "merged", "dead_end"
NO_CLUES, NO_INITIAL_NODE = "no_clues", "no_initial_node"


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
        """Every clue used, by a path that holds a triple: an initial node alone is no knowledge
        to answer from, even when its clue is the only one (Sec. 3.5 ends a path that "encompasses
        the necessary knowledge")."""
        return len(self.nodes) > 1 and not self.unused(clues)

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


@dataclass
class Exploration:
    """One question's exploration: the initial nodes, every path state reached, the paths
    chosen for the answer, why exploration ended (``reason``) and the rounds of steps taken."""

    clues: list[str]
    roots: set[str] = field(default_factory=set)
    states: list[Path] = field(default_factory=list)
    chosen: list[Path] = field(default_factory=list)
    reason: str = DEAD_END
    steps: int = 0

    def ending(self) -> dict[str, float]:
        """How exploration ended, one 0/1 figure per way, so a run reports each as a share."""
        return {
            f"ended_{way}": float(self.reason == way) for way in (COVERAGE, MERGED, DEAD_END, NO_CLUES, NO_INITIAL_NODE)
        }

    def picture(self, title: str, names: dict[str, str]) -> Graph:
        """The chosen path(s), each node at its place on the first path that reaches it: the ends
        are the answers, the other initial nodes topics; the clues, the ending and each path with
        its clues beside them. Arrows are sorted so that a drawing does not depend on path order."""
        depth: dict[str, int] = {}
        for path in self.chosen:
            for i, node in enumerate(path.nodes):
                depth.setdefault(node, i)
        ends = {path.nodes[-1] for path in self.chosen}
        triples = sorted({t for path in self.chosen for t in path.triples()}, key=lambda t: (t[0], t[2], t[1]))
        side = [f"Clues: {'; '.join(self.clues)}", f"Ended: {self.reason}"]
        side += [
            " -> ".join(f"{names.get(n, n)} [{c}]" for n, c in zip(path.nodes, path.clues)) for path in self.chosen
        ]
        return kit.picture(
            title,
            triples,
            names,
            depth,
            topics=self.roots - ends,
            answers=[names.get(n, n) for n in ends],
            side=side,
            text="\n".join(t for path in self.chosen for t in path_triples(path, names)),
        )
