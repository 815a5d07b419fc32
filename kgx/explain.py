"""Explanations: the graph a method reasoned over, as data in the trace and as a picture.

LMP's facts graph (paper Fig. 5) and KnowPath's directed subgraph (Figs. 6-8) are both layered
graphs grown outward from a topic entity, so one data shape and one drawing serve every method:
nodes carry their depth (hops from the topic entity) and a role, edges carry relation labels
and always point in the KG's true direction. Boxes and arrows are laid out in
:mod:`kgx.explain_plan`, relation labels placed in :mod:`kgx.explain_labels`, the page drawn
with matplotlib in :mod:`kgx.explain_draw`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Role = Literal["", "topic", "answer"]


@dataclass
class Node:
    id: str
    label: str
    depth: int = 0
    role: Role = ""


@dataclass
class Edge:
    source: str
    target: str
    label: str


@dataclass
class Graph:
    """``text`` is what the LLM was given (e.g. LMP's outline); ``side`` is drawn beside the
    graph (e.g. KnowPath's inference path)."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    title: str = ""
    text: str = ""
    side: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Graph":
        return cls(nodes=[Node(**n) for n in data.get("nodes", [])],
                   edges=[Edge(**e) for e in data.get("edges", [])],
                   title=data.get("title", ""), text=data.get("text", ""), side=list(data.get("side", [])))


def layout(graph: Graph) -> dict[str, tuple[float, float]]:
    """Centre of each drawn node's box, in inches from the graph area's lower left: columns by
    depth, ordered to cut crossings, boxes sized to their text (so fonts are measured). A capped
    column's "+N more" box appears as ``+more/<depth>``."""
    from kgx.explain_draw import plan_of

    return {node_id: ((s.box[0] + s.box[2]) / 2, (s.box[1] + s.box[3]) / 2)
            for node_id, s in plan_of(graph).shapes.items()}


def draw(graph: Graph, stem: Path) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.svg``; returns the paths written. matplotlib is imported
    here, not at module level, so methods that only build graphs never load it."""
    from kgx.explain_draw import DPI, render

    figure = render(graph).figure
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        path = stem.with_suffix(suffix)
        figure.savefig(path, dpi=DPI)
        written.append(path)
    return written


def write(graph: Graph, stem: Path) -> list[Path]:
    """The picture plus ``<stem>.txt``: the title and the text the method gave its LLM."""
    text_path = stem.with_suffix(".txt")
    stem.parent.mkdir(parents=True, exist_ok=True)
    text_path.write_text(f"{graph.title}\n\n{graph.text}\n" + ("\n" + "\n".join(graph.side) + "\n" if graph.side else ""))
    return [text_path, *draw(graph, stem)]
