"""A dataset's gold relation chain walked in the KG: the nodes on it that lead to a gold answer.

Reachability (:mod:`kgx.diagnose.reach`) keeps a few shortest gold paths; a question's chain may be
longer than the shortest way (PathQuestion's "X's wife's husband's ...") and its middle hops hold
many more nodes than a few paths name (every film of an actor that has a gold director). The oracle
(:mod:`kgx.llm.oracle`) must know them all to tell an on-path candidate from an off-path one, and
the failure drill-down must know whether the KG walks the chain at all (a method limit) or not (a
KG gap). Each step carries at most ``MAX_WALKED`` nodes: a bounded check, not a full closure.
"""

from __future__ import annotations

from typing import Any

from kgx.kg.freebase import is_literal

MAX_WALKED = 500  # nodes one step of a chain walk carries
Step = tuple[str, str]  # (relation id, "out" | "in")


def on_chain(kg: Any, start: list[str], steps: list[Step], gold: set[str]) -> list[set[str]]:
    """Per depth (0 = ``start``), the nodes of the walk along ``steps`` from which the rest of the
    chain reaches a node of ``gold``; all empty when none does."""
    layers: list[set[str]] = [set(start)]
    links: list[dict[str, set[str]]] = []
    for relation, direction in steps:
        reached: dict[str, set[str]] = {}
        count = 0
        for node in sorted(layers[-1]):
            if not is_literal(node) and count < MAX_WALKED:
                reached[node] = set(kg.neighbors(node, relation, direction)[:MAX_WALKED])
                count += len(reached[node])
        links.append(reached)
        layers.append(set().union(*reached.values()))
    kept = [layers[-1] & gold]
    for reached in reversed(links):
        kept.insert(0, {node for node, found in reached.items() if found & kept[0]})
    return kept
