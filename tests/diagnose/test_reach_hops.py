"""A dataset's meta.hops against the distance reachability measured (kgx.diagnose.hops)."""

from __future__ import annotations

from types import SimpleNamespace

from kgx.core.reachability import Reach
from kgx.diagnose.hops import conflict, hops_warning


def reach(distance, hops, chained=False, reachable=True) -> Reach:
    return Reach(reachable, 3, distance, hops=hops, chained=chained)


def test_a_gold_farther_than_the_label_always_contradicts_it_a_nearer_one_only_without_a_chain():
    assert conflict(reach(3, 2)) == conflict(reach(3, 2, chained=True)) == "farther"
    assert conflict(reach(1, 3)) == "nearer"  # a user's label: the gold is one hop away
    assert conflict(reach(1, 3, chained=True)) == ""  # MetaQA's chain with a shortcut in the KB
    assert conflict(reach(2, 2)) == conflict(reach(None, 3, reachable=False)) == conflict(reach(1, None)) == ""


def test_the_warning_counts_and_names_examples():
    records = [SimpleNamespace(id=f"q{i}", reach=r) for i, r in enumerate([reach(1, 3), reach(3, 3), reach(4, 3)])]
    assert hops_warning(records) == (
        "warning: 2 questions' gold answers lie at another distance than their meta.hops says (1 farther, "
        "1 nearer): mislabelled, or the KG is shaped otherwise; e.g. q0 (meta.hops 3, distance 1), "
        "q2 (meta.hops 3, distance 4)"
    )
    assert hops_warning(records[1:2]) == ""
