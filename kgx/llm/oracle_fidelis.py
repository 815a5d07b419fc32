"""The oracle's FiDeLiS replies: the plan's keywords and the beam step's next steps.

**Keywords.** FiDeLiS's Path-RAG ranks a path's next steps by their similarity to the planning
call's keywords, which its prompt asks to be "the words and relation names you would search the
graph with". Free text that feeds the search is the oracle's to write (as CGPE's clues are,
:mod:`kgx.llm.oracle_clues`): the keywords are the relations of the question's gold chains, in
the chains' order, each once, at most as many as the schema allows. Where no gold chain is
known, the scripted keywords stand.

**Next steps.** A beam step offers next steps written ``(relation, entity)``. A step lies on a
gold path when its entity does (a CVT of the gold path, a gold answer); one whose relation only
is a gold relation (the same relation to another CVT: another school, another team) comes after
those, and the rest in the scripted order after that. Within each kind, the chain's order from
where the prompt stands decides, as in every oracle choice (:meth:`kgx.llm.oracle.Judge.pick`).
"""

from __future__ import annotations

from typing import Any, Optional, Protocol

from kgx.diagnose.gold_path import Step
from kgx.llm.scripted import rank

KEYWORDS = frozenset({"retrieval_keywords"})  # kgx.methods.fidelis.prompts.KEYWORDS
STEPS = frozenset({"beam_steps"})  # kgx.methods.fidelis.prompts.STEPS


class Judge(Protocol):
    """What these replies read of the oracle's view of a request (:class:`kgx.llm.oracle.Judge`)."""

    question: str
    chains: list[list[Step]]

    def at(self, options: list[Any]) -> int: ...

    def on_path(self, candidate: Any) -> bool: ...

    def order(self, candidate: Any, here: int) -> tuple[int, int]: ...


def keywords(judge: Judge, scripted: list[Any], high: Optional[int]) -> list[Any]:
    """The gold relations, else the scripted keywords."""
    relations = list(dict.fromkeys(relation for chain in judge.chains for relation, _ in chain))
    return (relations or scripted)[:high]


def entity(step: str) -> str:
    """The entity of a next step ``(relation, entity)``."""
    return step[1:-1].split(", ", 1)[-1] if step.startswith("(") and step.endswith(")") else step


def steps(judge: Judge, options: list[Any], low: int, high: Optional[int]) -> list[Any]:
    """Steps to a gold-path entity, then steps along a gold relation, then the scripted order's
    others, at least ``low`` and at most ``high`` of them."""
    ranked = rank(options, judge.question)
    here = judge.at(options)
    kinds = (
        [o for o in ranked if judge.on_path(entity(str(o)))],
        [o for o in ranked if judge.on_path(o) and not judge.on_path(entity(str(o)))],
    )
    gold = [o for kind in kinds for o in sorted(kind, key=lambda o: judge.order(o, here))]
    chosen = gold[:high] if gold else []
    return chosen + [o for o in ranked if o not in chosen][: max(0, low - len(chosen))]
