"""LMP's facts graph, its readout (Wan et al., Sec. 3.2, Alg. 2) and what it is shown as.

Message passing (``kgx/methods/lmp/__init__.py``) leaves a facts graph per topic entity; this module holds
that graph and turns it into the text the answer call reads (the numbered outline, or an
ablation's text) and into the explanation picture. Kept apart so that ``__init__.py`` reads as Alg. 1
alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kgx.core.graph import Edge, Graph, Node
from kgx.core.types import Question
from kgx.methods.kit import Hop


@dataclass
class Fact:
    """A node of the facts graph: the topic entity, or a hyper-entity pooled by one relation."""

    id: str
    text: str  # the summarised fact (the topic's name for the root)
    depth: int
    members: list[str]  # entity ids pooled into this node
    hop: Optional[Hop] = None  # the relation that pooled it
    parents: list[str] = field(default_factory=list)
    aggregated: str = ""
    walked: list[tuple[str, str]] = field(default_factory=list)  # (head, tail) names, in the hop's direction
    through_cvt: bool = False  # members are unnamed nodes described by their attributes

    @property
    def triples(self) -> list[tuple[str, str, str]]:
        """The walked pairs as the KG stores them."""
        return [self.hop.triple(head, tail) for head, tail in self.walked] if self.hop else []


@dataclass
class FactsGraph:
    topic: str
    topic_name: str
    facts: list[Fact] = field(default_factory=list)

    def children(self, fact: Fact) -> list[Fact]:
        return [f for f in self.facts if f.parents and f.parents[0] == fact.id]

    def layer(self, depth: int) -> list[Fact]:
        return [f for f in self.facts if f.depth == depth]


def readout(graph: FactsGraph, evidence: str, numbered: bool) -> str:
    """Alg. 2: DFS from the topic, numbering children 1., 1.1, 1.1.2 ...; or an ablation's text
    (``method.evidence=path``: the walked paths; ``method.readout=false``: the last layer)."""
    if evidence == "path":
        return "\n".join(paths(graph))
    if not numbered:
        last = max(f.depth for f in graph.facts)
        return "\n".join(f"- {f.text}" for f in graph.layer(last))
    numbers: dict[str, tuple[int, ...]] = {graph.facts[0].id: ()}
    stack = [graph.facts[0]]
    while stack:
        top = stack.pop()
        for idx, child in enumerate(graph.children(top), 1):
            if child.id not in numbers:
                numbers[child.id] = (*numbers[top.id], idx)
                stack.append(child)
    by_id = {f.id: f for f in graph.facts}
    lines = [f"{graph.topic_name}:"]
    for fid, number in sorted(numbers.items(), key=lambda item: item[1]):
        if number:
            lines.append(f"{'  ' * (len(number) - 1)}{'.'.join(map(str, number))}. {by_id[fid].text}")
    return "\n".join(lines)


def paths(graph: FactsGraph) -> list[str]:
    """LMP-path (Table 5): the facts graph's walked triples chained into paths from the topic entity."""
    into: dict[str, tuple[str, str, str]] = {}  # "depth:name" -> (the node it was reached from, relation, arrow)
    for fact in graph.facts[1:]:
        for near, far in fact.walked:
            into.setdefault(f"{fact.depth}:{far}", (f"{fact.depth - 1}:{near}", fact.hop.relation, fact.hop.arrow))
    has_child = {parent for parent, _, _ in into.values()}
    out = []
    for node in into:
        if node in has_child:
            continue
        parts, current = [], node
        while current in into:
            parent, relation, arrow = into[current]
            parts.append(f" {arrow} {relation} {arrow} {current.split(':', 1)[1]}")
            current = parent
        out.append(current.split(":", 1)[1] + "".join(reversed(parts)))
    return out


def explanation(question: Question, graphs: list[FactsGraph], outline: str) -> Graph:
    """The facts graphs as one picture (paper Fig. 5): nodes are summarised facts."""
    g = Graph(title=question.text, text=outline)
    for i, fg in enumerate(graphs):
        for fact in fg.facts:
            g.nodes.append(Node(f"{i}/{fact.id}", fact.text, fact.depth, "topic" if fact.depth == 0 else ""))
            for parent in fact.parents:
                g.edges.append(Edge(f"{i}/{parent}", f"{i}/{fact.id}", fact.hop.label if fact.hop else ""))
    return g
