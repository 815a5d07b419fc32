"""What a method answers when its final-answer reply stays invalid through every retry.

Invalid model output is not an error (docs: "When something fails"): an error record means the
world failed and a rerun should try again, and a model that keeps answering badly answers as
badly on the rerun, so the run would never conclude. A final answer that stays invalid is the
method's documented fallback instead: no answer, status ``fallback``, the reason naming the invalid
output (also in the trace), scored 0 like any unanswered question. The question is finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

from kgx.core.types import Prediction
from kgx.llm.errors import OutputError

if TYPE_CHECKING:
    from kgx.methods.base import Context


def no_answer(
    ctx: "Context",
    exc: OutputError,
    evidence: Sequence[str] = (),
    reason: str = "",
    stats: Optional[dict[str, float]] = None,
) -> Prediction:
    """The prediction of a final answer that stayed invalid (``exc``), keeping the ``evidence``
    gathered and the ``reason`` the method had so far; noted in the trace at ``exc``'s stage."""
    ctx.trace.note(exc.stage, "no valid final answer: fallback without an answer", error=str(exc))
    why = f"{reason}; " if reason else ""
    return Prediction(
        answer="",
        evidence=list(evidence),
        status="fallback",
        reason=f"{why}no valid final answer ({exc})",
        stats=dict(stats or {}),
    )
