"""A question's gold answers as KG nodes, and which KG values state them (for kgx.diagnose.reach).

A gold answer is an entity when the dataset gives its id or an entity is named exactly as an alias;
otherwise it is a value, met as a literal. A literal need not be written as the gold is:
Virtuoso prints the ``xsd:float`` ``7692024`` as ``"7.69202e+06"``, a gold year is stated by a
full date. :class:`GoldLiterals` matches them by the rule of ``answer_recall``
(:mod:`kgx.core.values`), so reachability and answer recall agree on what counts as the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgx.core.metrics import normalize
from kgx.core.types import Question
from kgx.core.values import GoldValues, parse
from kgx.kg.entities import named
from kgx.kg.freebase import is_literal
from kgx.kg.sparql import SparqlKG

# A gold answer id that names a node: a Freebase mid or dotted id; anything else is a value.
NODE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")


@dataclass(frozen=True)
class Golds:
    """A question's gold answers as KG nodes: entities, and quoted values matched as literals."""

    entities: list[str]
    literals: list[str]

    @property
    def ids(self) -> list[str]:
        return [*self.entities, *self.literals]


def gold_nodes(kg: SparqlKG, question: Question) -> Golds:
    """``meta.answer_ids`` when the dataset gives them; else the entities named exactly as an
    alias (one batched query), and the aliases of answers no entity is named as, as values. A
    given literal id keeps its text only (``"7692024"^^xsd:int`` is the value ``"7692024"``)."""
    given = [str(a) for a in question.meta.get("answer_ids") or []]
    if given:
        entities = [a for a in given if NODE_ID.match(a)]
        values = [
            a[1 : a.rindex('"')] if is_literal(a) and a.count('"') > 1 else a for a in given if not NODE_ID.match(a)
        ]
        return Golds(sorted(set(entities)), sorted({_quoted(v) for v in values}))
    aliases = list(dict.fromkeys(a for answer in question.answers for a in answer))
    ids = named(kg, aliases) if aliases else {}
    entities = {e for a in aliases for e in ids.get(a, [])}
    values = {_quoted(a) for answer in question.answers if not any(a in ids for a in answer) for a in answer}
    return Golds(sorted(entities), sorted(values))


def _quoted(text: str) -> str:
    return '"' + text + '"'


class GoldLiterals:
    """The gold values of one question's search, and the KG literals (as ``neighbors`` returns
    them, quoted) that state them; one dictionary probe per literal, remembered."""

    def __init__(self, literals: list[str]):
        self.literals = literals
        self.texts = {normalize(v[1:-1]): v for v in literals}
        self.values = GoldValues([[v[1:-1]] for v in literals])
        self.seen: dict[str, str] = {}

    def stated_by(self, literal: str) -> str:
        """The gold value ``literal`` states: equal once normalised, or as a value by the rule of
        ``answer_recall`` (``"7.69202e+06"`` states ``"7692024"``, ``"1961-08-04"`` the year
        ``"1961"``, ``"1.5"`` never ``"15"``); "" when it states none."""
        if literal not in self.seen:
            text = literal[1:-1]
            same = self.texts.get(normalize(text))
            found = sorted(self.values.found_in(parse(text))) if same is None else []
            self.seen[literal] = same or (self.literals[found[0]] if found else "")
        return self.seen[literal]
