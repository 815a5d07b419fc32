"""How the oracle backbone reads Paths-over-Graph's candidates: whole paths, chosen by label.

Paths-over-Graph lists its candidates as ``Path N: Tokyo -> location.country.capital (reverse) ->
Japan -> location.country.currency_used -> Japanese yen`` (``Branch N: Tokyo -> r -> ...`` and
``Branch N: ... -> r -> {A | B}`` for the first or last hop of a group of paths; ``{A | B}`` is a set
of entities, ``...`` the part not shown) and asks for labels. A path is a lead when it shows a gold
answer after its start or walks a gold relation; the oracle takes the leads in this order: one that
shows a gold answer, then the longest run of gold steps (from the path's start along a gold chain,
from its end back along one, which a path joining two topic entities walks for the second, or, for a
last-hop branch, ending where a chain ends), then the most gold steps anywhere; ties in the listed
order. Without a lead it makes the scripted choice, as at any other choice.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Protocol

from kgx.diagnose.gold_path import Step, fold
from kgx.llm.oracle_evidence import GoldTexts
from kgx.llm.scripted import rank


class Judge(Protocol):
    """What the path reading uses of the oracle's view of a request (:class:`kgx.llm.oracle.Judge`)."""

    question: str
    directed: bool
    relations: set[Step]
    chains: list[list[Step]]
    texts: GoldTexts

    def gold_names(self, text: str) -> list[str]: ...


LINE = re.compile(r"^(Path|Branch) (\d+): (.+)$", flags=re.M)
ARROW = " -> "
REVERSE = " (reverse)"
HIDDEN = "..."


def listed(prompt: str, options: list[Any]) -> dict[str, str]:
    """Label -> path text, when every option is a ``Path N``/``Branch N`` line of the prompt; else {}."""
    lines = {f"{kind} {number}": text.strip() for kind, number, text in LINE.findall(prompt)}
    return lines if options and all(str(o) in lines for o in options) else {}


def entities(part: str) -> list[str]:
    """The names of one position of a path: one name, or a set ``{A | B | ...}``."""
    if part.startswith("{") and part.endswith("}"):
        return [n for n in part[1:-1].split(" | ") if n != HIDDEN]
    return [] if part == HIDDEN else [part]


def step(part: str) -> Step:
    return fold(part[: -len(REVERSE)], "in") if part.endswith(REVERSE) else fold(part, "out")


def flipped(steps: list[Step]) -> list[Step]:
    """The steps walked the other way, from the path's end."""
    return [(r, "in" if d == "out" else "out") for r, d in reversed(steps)]


def score(judge: Judge, text: str) -> tuple[int, int, int, int]:
    """(shows a gold answer, longest run of gold steps, gold steps, gold entities shown): the
    oracle's order of leads."""
    parts = text.split(ARROW)
    shown = [name for part in parts[2::2] for name in entities(part)]
    steps = [step(p) for p in parts[1::2]]

    def same(ours: Step, gold: Step) -> bool:
        return ours == gold if judge.directed else ours[0] == gold[0]

    def run(ours: list[Step], chain: list[Step]) -> int:
        n = 0
        while n < min(len(ours), len(chain)) and same(ours[n], chain[n]):
            n += 1
        return n

    if parts[0] == HIDDEN:  # a last-hop branch: how far along a chain its hop lies
        runs = [i + 1 for c in judge.chains for i, g in enumerate(c) if steps and same(steps[-1], g)]
    else:
        runs = [run(steps, c) for c in judge.chains] + [run(flipped(steps), c) for c in judge.chains]
    golds = sum(any(same(s, g) or same(s, f) for g in judge.relations for f in flipped([g])) for s in steps)
    answer = any(judge.texts.states(name) for name in shown)
    return int(answer), max(runs, default=0), golds, len(judge.gold_names(" | ".join(shown)))


def pick(judge: Judge, options: list[Any], paths: dict[str, str], low: int, high: Optional[int]) -> list[Any]:
    """The leads in the oracle's order, at most ``high``, topped up to ``low`` in the scripted order."""
    ranked = rank(options, judge.question)
    scored = {o: score(judge, paths[str(o)]) for o in ranked}
    leads = sorted((o for o in ranked if any(scored[o])), key=lambda o: tuple(-x for x in scored[o]))
    if not leads:
        return ranked[: max(1, low) if high is None else high]
    chosen = leads[:high]
    return chosen + [o for o in ranked if o not in chosen][: max(0, low - len(chosen))]
