"""Explanations: the graph a method reasoned over, as data in the trace and as a picture.

LMP's facts graph (paper Fig. 5) and KnowPath's directed subgraph (Figs. 6-8) are both layered
graphs grown outward from a topic entity, so one data shape and one drawing serve every method:
nodes carry their depth (hops from the topic entity) and a role, edges carry relation labels
and always point in the KG's true direction.
"""
from __future__ import annotations

import textwrap
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


def _label(text: str, width: int = 34, lines: int = 5) -> str:
    wrapped = textwrap.wrap(text, width) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: width - 3] + "..."
    return "\n".join(wrapped)


def layout(graph: Graph) -> dict[str, tuple[float, float]]:
    """Columns by depth, each column centred, nodes in insertion order top to bottom."""
    columns: dict[int, list[str]] = {}
    for n in graph.nodes:
        columns.setdefault(n.depth, []).append(n.id)
    return {node_id: (depth * 4.0, ((len(ids) - 1) / 2 - i) * 1.6)
            for depth, ids in columns.items() for i, node_id in enumerate(ids)}


def draw(graph: Graph, stem: Path) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.svg``; returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pos = layout(graph)
    depths = max((n.depth for n in graph.nodes), default=0) + 1
    tallest = max((sum(1 for n in graph.nodes if n.depth == d) for d in range(depths)), default=1)
    width = 3.6 * depths + (3.5 if graph.side else 0)
    fig, ax = plt.subplots(figsize=(max(6.0, width), max(3.0, 1.5 * tallest + 1)))
    colours = plt.get_cmap("tab10")
    for e in graph.edges:
        if e.source not in pos or e.target not in pos:
            continue
        (x1, y1), (x2, y2) = pos[e.source], pos[e.target]
        ax.annotate("", xy=(x2, y2), xytext=(x1, y1),
                    arrowprops={"arrowstyle": "-|>", "color": "0.45", "shrinkA": 45, "shrinkB": 45})
        ax.text((x1 + x2) / 2, (y1 + y2) / 2, _label(e.label, 28, 2), fontsize=6.5, ha="center",
                va="center", color="0.2", bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"})
    for n in graph.nodes:
        x, y = pos[n.id]
        edge = {"topic": ("#d4a017", 2.5), "answer": ("#c0392b", 2.5)}.get(n.role, ("0.3", 0.8))
        ax.text(x, y, _label(n.label), fontsize=7, ha="center", va="center",
                bbox={"boxstyle": "round,pad=0.4", "fc": colours(n.depth % 10), "alpha": 0.35,
                      "ec": edge[0], "lw": edge[1]})
    if graph.side:
        ax.text(4.0 * depths - 1.0, 0, _label(" ".join(graph.side), 40, 14), fontsize=7, va="center",
                bbox={"boxstyle": "round,pad=0.5", "fc": "#f4f4f4", "ec": "0.6"})
    xs = [p[0] for p in pos.values()] or [0.0]
    ys = [p[1] for p in pos.values()] or [0.0]
    ax.set_xlim(min(xs) - 2.2, max(xs) + (6.5 if graph.side else 2.2))
    ax.set_ylim(min(ys) - 1.2, max(ys) + 1.2)
    ax.set_title(_label(graph.title, 100, 2), fontsize=9)
    ax.axis("off")
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        path = stem.with_suffix(suffix)
        fig.savefig(path, dpi=130, bbox_inches="tight")
        written.append(path)
    plt.close(fig)
    return written


def write(graph: Graph, stem: Path) -> list[Path]:
    """The picture plus ``<stem>.txt``: the title and the text the method gave its LLM."""
    text_path = stem.with_suffix(".txt")
    stem.parent.mkdir(parents=True, exist_ok=True)
    text_path.write_text(f"{graph.title}\n\n{graph.text}\n" + ("\n" + "\n".join(graph.side) + "\n" if graph.side else ""))
    return [text_path, *draw(graph, stem)]
