"""The explanation graph: the graph a method reasoned over, as data in the question's trace.

LMP's facts graph (paper Fig. 5) and KnowPath's directed subgraph (Figs. 6-8) are both layered
graphs grown outward from a topic entity, so one data shape serves every method: nodes carry
their depth (hops from the topic entity) and a role, edges carry relation labels and always point
in the KG's true direction. It is data only, on the ground floor, so that a method builds one
without importing the drawing: :mod:`kgx.explain` lays it out and draws it as a picture.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
        """``asdict(self)``, field by field: its recursive deep copy was a tenth of a fast
        question's CPU, and nodes and edges hold plain values only."""
        return {
            "nodes": [dict(vars(n)) for n in self.nodes],
            "edges": [dict(vars(e)) for e in self.edges],
            "title": self.title,
            "text": self.text,
            "side": list(self.side),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Graph":
        return cls(
            nodes=[Node(**n) for n in data.get("nodes", [])],
            edges=[Edge(**e) for e in data.get("edges", [])],
            title=data.get("title", ""),
            text=data.get("text", ""),
            side=list(data.get("side", [])),
        )
