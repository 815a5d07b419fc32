"""What the oracle backbone may answer from: the KG texts the method retrieved that state a gold answer.

An oracle that answered whatever gold text stood in a prompt would answer from the prompt's own
words: KnowPath's "write 15 knowledge triples" shows a gold "15", an entity "Lyon Office" shows a
gold "Lyon". A ceiling must come from the method's search, so the oracle answers a gold only when
the KG gave the method a text that states it (an entity's name, a value, a type label) and the
prompt shows that text. :class:`Evidence` watches the question's KG calls (``Trace.watch``, set
only in oracle runs) and keeps two kinds of texts for the hint: those that state a gold answer,
by the scorer's rules (:func:`GoldTexts.states`: the same normalised alias, or a value that
states the gold's, ``"7.69202e+06"`` for ``7692024``), and those that merely hold one inside a
longer name (``"Lyon Office"``), whose occurrences the oracle blanks out before it looks.
"""

from __future__ import annotations

import re
import threading
from dataclasses import replace
from typing import Any

from kgx.core.metrics import normalize
from kgx.core.values import GoldValues, parse
from kgx.diagnose.gold_path import GoldHint
from kgx.kg.freebase import is_literal

SHOWN_TEXTS = frozenset({"names", "types"})  # calls whose results are labels a method shows
# An unnamed node (a CVT) is labelled by its attributes, "(actor: Viggo Mortensen; character:
# Aragorn)" (kgx.kg.sparql): each value is a KG text of its own.
DESCRIBED = re.compile(r"^\((?:[\w-]+: [^;]*)(?:; [\w-]+: [^;]*)*\)$")


class GoldTexts:
    """A question's gold answers, as texts and values: which answers a text states, and whether
    it holds one inside more words."""

    def __init__(self, answers: list[list[str]]):
        self.aliases: dict[str, set[int]] = {}
        for index, group in enumerate(answers):
            for alias in group:
                if key := normalize(alias):
                    self.aliases.setdefault(key, set()).add(index)
        self.values = GoldValues(answers)

    def states(self, text: str) -> set[int]:
        """The answers ``text`` is: an alias once normalised, or a value stating the gold's."""
        found = set(self.aliases.get(normalize(text), ()))
        return found | self.values.found_in(parse(text)) if self.values else found

    def holds(self, text: str) -> bool:
        """Whether ``text`` holds a gold alias or value as whole words among others."""
        padded = f" {normalize(text)} "
        return any(f" {alias} " in padded for alias in self.aliases) or bool(self.values.found_in_text(text))


def parts(label: str) -> list[str]:
    """The KG texts of a label: a described node's attribute values, else the label itself."""
    if DESCRIBED.match(label):
        return [part.partition(": ")[2] for part in label[1:-1].split("; ")]
    return [label]


def text_of(node: str) -> str:
    """A KG result as a method shows it: a literal without its quotes and datatype."""
    return node[1 : node.rindex('"')] if is_literal(node) and node.count('"') > 1 else node


class Evidence:
    """The gold-stating and gold-holding texts among a question's KG results so far."""

    def __init__(self, gold: GoldHint):
        self.gold = GoldTexts(gold.answers)
        self.named = {node: name for node, name in gold.named.items() if self.gold.states(name)}
        # The topic entities are the nodes a method starts from and shows: a topic that is its own
        # answer (distance 0) is evidence from the start.
        self.stating: set[str] = {t for t in gold.topics if self.gold.states(t)}
        self.holding: set[str] = set()
        self.seen: set[str] = set()
        self._lock = threading.Lock()  # a method may read the KG from several threads

    def watch(self, operation: str, result: Any) -> None:
        """``Trace.watch``: labels from ``names``/``types``; from any other call, literals, and
        the known names of the nodes it returned that are gold answers (a topic that is its own
        answer, shown by the name the dataset gives it)."""
        if operation in SHOWN_TEXTS and isinstance(result, dict):
            texts = [part for label in result.values() for part in parts(str(label))]
        elif isinstance(result, list):
            nodes = [str(n) for n in result]
            texts = [text_of(n) if is_literal(n) else self.named[n] for n in nodes if is_literal(n) or n in self.named]
        else:
            return
        with self._lock:
            for text in texts:
                if text in self.seen:
                    continue
                self.seen.add(text)
                if self.gold.states(text):
                    self.stating.add(text)
                elif self.gold.holds(text):
                    self.holding.add(text)

    def hint(self, gold: GoldHint) -> GoldHint:
        """``gold`` with the texts retrieved so far added."""
        with self._lock:
            return replace(
                gold, shown=sorted(self.stating.union(gold.shown)), holding=sorted(self.holding.union(gold.holding))
            )
