"""A question's gold answers prepared once for every metric: normalised text and values.

Every metric of a question reads the same gold, so it is normalised, indexed by alias and read as
values (:mod:`kgx.core.values`) once, in :func:`prepared`, and each lookup after that is a dictionary
probe: scoring stays linear in the number of predictions, evidence items and aliases.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kgx.core.values import DIGIT, GoldValues

Gold = Sequence[Sequence[str] | str]

_PUNCT = str.maketrans("", "", string.punctuation)  # deletes them
# Where digits are, "." and "-" are decided by their neighbours in the text as given: a point is
# deleted unless between digits, a dash unless it starts a number (no word character before, a
# digit after); every other punctuation mark goes, and may go after them, since no mark's fate
# depends on another's. Each pattern starts with its character, so the regex engine skips to it
# (a pattern starting with a lookaround tries every position: 4x slower on a prompt).
_PUNCT_BUT_POINT_DASH = str.maketrans("", "", string.punctuation.replace(".", "").replace("-", ""))
_POINT_DASH_OUTSIDE_NUMBER = re.compile(r"\.(?:(?<!\d\.)|(?!\d))|-(?:(?<=\w-)|(?!\d))")
_ARTICLES = re.compile(r"a(?<!\wa)n?\b|t(?<!\wt)he\b")  # \b(a|an|the)\b, starting with a letter


@functools.lru_cache(maxsize=1 << 16)  # gold answers are normalised for every metric of a question
def normalize(text: str) -> str:
    """SQuAD v1.1 ``normalize_answer`` (also used by RoG/LMP's evaluation), numbers kept apart.

    Lowercase, delete ASCII punctuation (``string.punctuation``), replace the articles
    a/an/the (as whole words) with spaces, then collapse whitespace.  Punctuation is
    *deleted*, not turned into a space, as in SQuAD: ``"U.S."`` becomes ``"us"`` and
    ``"Barack_Obama"`` becomes ``"barackobama"``.

    Departure from SQuAD: a decimal point between digits and a minus sign before a number are
    kept, so ``"1.5"`` does not become ``"15"`` nor ``"-3"`` ``"3"``. Thousands separators and the
    dashes of a date are still deleted (``"7,692,024"`` is ``"7692024"``).
    """
    text = text.lower()
    if DIGIT.search(text):
        text = _POINT_DASH_OUTSIDE_NUMBER.sub("", text).translate(_PUNCT_BUT_POINT_DASH)
    else:
        text = text.translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_groups(gold: Gold) -> list[list[str]]:
    """Gold as a list of alias lists (a bare string counts as a one-alias answer)."""
    return [[g] if isinstance(g, str) else list(g) for g in gold]


@dataclass(frozen=True)
class PreparedGold:
    """``groups``: normalised, non-empty alias sets, one per gold answer. Answers left with no
    usable alias are dropped, and so are duplicate answers (identical normalised alias sets).
    ``by_alias`` maps each normalised alias to the answers (indices into ``groups``) that have it;
    ``values`` indexes the same answers' numbers and dates; ``lengths`` are the aliases' distinct
    lengths."""

    groups: tuple[frozenset[str], ...]
    by_alias: dict[str, frozenset[int]]
    values: GoldValues
    lengths: tuple[int, ...]

    def in_text(self, text: str) -> bool:
        """Whether some alias occurs in the normalised ``text`` as a substring: by testing each
        alias, or, when that is more work, by looking up each window of ``text`` as long as some
        alias, so that a gold list of thousands of aliases costs at most the text's length times
        the number of distinct alias lengths."""
        if len(self.by_alias) <= len(text) * len(self.lengths):
            return any(a in text for a in self.by_alias)
        return any(text[i : i + n] in self.by_alias for n in self.lengths for i in range(len(text) - n + 1))

    def matching(self, normalised: str) -> frozenset[int]:
        """The answers one of whose aliases is ``normalised``."""
        return self.by_alias.get(normalised, frozenset())


def prepared(gold: Gold) -> PreparedGold:
    """The gold of a question, normalised and indexed (cached: every metric asks)."""
    return _prepared(tuple(g if isinstance(g, str) else tuple(g) for g in gold))


def scorable(gold: Gold) -> bool:
    """Whether some gold answer has an alias a prediction can match (one that normalises to some
    text): a question without one scores 0 on every metric, whatever it is answered."""
    return bool(prepared(gold).groups)


@functools.lru_cache(maxsize=1 << 12)
def _prepared(gold: tuple[str | tuple[str, ...], ...]) -> PreparedGold:
    groups: dict[frozenset[str], list[str]] = {}  # in first-seen order, the aliases as written
    for aliases in answer_groups(gold):
        normed = frozenset(n for n in (normalize(a) for a in aliases) if n)
        if normed:
            groups.setdefault(normed, aliases)
    by_alias: dict[str, set[int]] = {}
    for index, group in enumerate(groups):
        for alias in group:
            by_alias.setdefault(alias, set()).add(index)
    values = GoldValues(list(groups.values()))
    lengths = tuple(sorted({len(a) for a in by_alias}))
    return PreparedGold(tuple(groups), {a: frozenset(i) for a, i in by_alias.items()}, values, lengths)


def distinct_items(items: Iterable[str]) -> list[tuple[str, str]]:
    """(normalised, as written) of each distinct normalised non-empty item, in first-seen order."""
    seen: dict[str, str] = {}
    for item in items:
        n = normalize(item)
        if n:
            seen.setdefault(n, item)
    return list(seen.items())
