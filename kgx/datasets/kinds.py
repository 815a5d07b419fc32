"""The kind of a question, where its dataset says it: MetaQA's ``qtype``, CWQ's
``compositionality_type``, GrailQA's ``level``, a dataset's ``hops``. Calls, tokens and accuracy
vary far more between kinds than within one, so an estimate's pilot stratifies by kind
(kgx.estimate.strata) and a sweep's figure splits its accuracy by it (kgx.report.figure_points)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

KINDS = ("qtype", "compositionality_type", "level", "hops")  # meta keys that say a question's kind


def kind_key(metas: Sequence[Mapping[str, Any]]) -> str:
    """The first of KINDS that every question's meta carries with more than one value among them,
    else "" (the questions are of one kind)."""
    return next((k for k in KINDS if all(k in m for m in metas) and len({str(m[k]) for m in metas}) > 1), "")
