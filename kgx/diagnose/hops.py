"""A dataset's ``meta.hops`` checked against the distance reachability measured.

A question labelled 3-hop whose gold answer lies 1 hop from its topic is either mislabelled or has
a shortcut in the KG; one whose gold lies 4 hops away is mislabelled, or the KG lacks the short
way. Figures by hop count are read as the method's, so a run says when its data contradict their
labels: a gold answer farther than ``meta.hops`` always does; a nearer one does where the dataset
gives no gold chain (a user's labels), not where it does (MetaQA's 3-hop chains often have a
1-hop shortcut in the KB, which is the KG's shape, not a wrong label). The distance is the one
measured within the method's depth, so only a reachable question is compared.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from kgx.core.reachability import Reach

EXAMPLES = 3  # questions named in the warning


def conflict(reach: Optional[Reach]) -> str:
    """ "farther" or "nearer" when ``reach``'s distance contradicts its question's ``meta.hops``, else ""."""
    if reach is None or not reach.reachable or reach.hops is None or reach.distance is None:
        return ""
    if reach.distance > reach.hops:
        return "farther"
    return "nearer" if reach.distance < reach.hops and not reach.chained else ""


def hops_warning(records: Iterable[Any]) -> str:
    """One line naming how many questions' measured distance contradicts ``meta.hops``, with
    examples; "" when none does. ``records`` have ``id`` and ``reach``."""
    found = [(r.id, r.reach, side) for r in records if (side := conflict(r.reach))]
    if not found:
        return ""
    farther = sum(side == "farther" for _, _, side in found)
    examples = ", ".join(
        f"{qid} (meta.hops {reach.hops}, distance {reach.distance})" for qid, reach, _ in found[:EXAMPLES]
    )
    return (
        f"warning: {len(found)} questions' gold answers lie at another distance than their meta.hops says "
        f"({farther} farther, {len(found) - farther} nearer): mislabelled, or the KG is shaped otherwise; "
        f"e.g. {examples}"
    )
