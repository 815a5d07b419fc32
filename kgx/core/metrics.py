"""Per-question scoring rules.

Each metric has exactly one definition here, and its docstring names the published rule it
mirrors and where (deliberately) it departs from it.  Everything is standard library only.

Gold answers come as ``list[list[str]]``: one alias list per gold answer (see
:class:`kgx.core.types.Question`).  Rules shared by every metric:

* Aliases and predictions are compared after :func:`normalize` (``hits1_tog`` uses ToG's own
  lighter cleaning instead).
* A string that is empty after cleaning never matches anything, on either side.  Plain
  substring tests would otherwise count it, because ``"" in s`` is always true.
* A gold entry that is a bare ``str`` rather than an alias list counts as a one-alias answer.
  Iterating over it would yield single characters, which match almost any text as substrings.
"""
from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable, Sequence

from kgx.core.types import Prediction, Question

__all__ = [
    "QUESTION_METRICS",
    "answer_recall",
    "complete_match",
    "em",
    "f1",
    "hit_any",
    "hits1",
    "hits1_tog",
    "normalize",
    "partial_match",
    "score",
]

QUESTION_METRICS: tuple[str, ...] = (
    "hits1", "hits1_tog", "hit_any", "em", "f1", "partial_match", "complete_match", "answer_recall")

Gold = Sequence[Sequence[str] | str]

_PUNCT = str.maketrans("", "", string.punctuation)  # deletes them
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_VERDICTS = frozenset({"yes", "no"})


# --------------------------------------------------------------------------- normalisation


@functools.lru_cache(maxsize=1 << 16)  # gold answers are normalised for every metric of a question
def normalize(text: str) -> str:
    """SQuAD v1.1 ``normalize_answer`` (also used by RoG/LMP's evaluation).

    Lowercase, delete ASCII punctuation (``string.punctuation``), replace the articles
    a/an/the (as whole words) with spaces, then collapse whitespace.  Punctuation is
    *deleted*, not turned into a space, as in SQuAD: ``"U.S."`` becomes ``"us"`` and
    ``"Barack_Obama"`` becomes ``"barackobama"``.
    """
    text = text.lower()
    text = text.translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _answer_groups(gold: Gold) -> list[list[str]]:
    """Gold as a list of alias lists (a bare string counts as a one-alias answer)."""
    return [[g] if isinstance(g, str) else list(g) for g in gold]


def _norm_groups(gold: Gold) -> tuple[frozenset[str], ...]:
    """Normalised, non-empty alias sets, one per gold answer.

    Answers left with no usable alias are dropped, and so are duplicate answers (answers
    whose normalised alias sets are identical).
    """
    return _norm_groups_of(tuple(g if isinstance(g, str) else tuple(g) for g in gold))


@functools.lru_cache(maxsize=1 << 12)  # every metric of a question reads its gold: normalised once
def _norm_groups_of(gold: tuple[str | tuple[str, ...], ...]) -> tuple[frozenset[str], ...]:
    groups: list[frozenset[str]] = []
    for aliases in _answer_groups(gold):
        normed = frozenset(n for n in (normalize(a) for a in aliases) if n)
        if normed and normed not in groups:
            groups.append(normed)
    return tuple(groups)


def _norm_aliases(gold: Gold) -> set[str]:
    """Every normalised, non-empty alias of every gold answer."""
    return set().union(*_norm_groups(gold))


def _norm_items(items: Iterable[str]) -> list[str]:
    """Distinct normalised non-empty items, in first-seen order."""
    seen: dict[str, None] = {}
    for item in items:
        n = normalize(item)
        if n:
            seen.setdefault(n)
    return list(seen)


# --------------------------------------------------------------------------- hits@1


def hits1(answers: Sequence[str], gold: Gold) -> bool:
    """Hits@1 as in the KGQA literature (GraftNet, NSM, RoG's Hits@1): exact match of the top answer.

    True when the *first* predicted answer, normalised, equals some normalised alias of some gold
    answer. Only the first answer is read. If it is missing, empty, or normalises to "" (for
    example ``"the"`` or ``"."``), the result is False. No fallback to the second answer.
    """
    if not answers:
        return False
    top = normalize(answers[0])
    return bool(top) and top in _norm_aliases(gold)


def _tog_clean(text: str) -> str:
    """ToG's ``exact_match`` cleaning: lowercase and remove spaces.

    This removes all whitespace. ToG strips the outer whitespace and removes only ``" "``.
    """
    return "".join(text.split()).lower()


@functools.lru_cache(maxsize=1 << 16)  # asked of every gold alias of every question
def _is_verdict(cleaned: str) -> bool:
    """True for "yes"/"no" with any surrounding punctuation ("yes", "no.", "yes!")."""
    return "".join(ch for ch in cleaned if ch.isalnum()) in _VERDICTS


def _tog_candidate(text: str, verdict_ok: bool) -> str:
    """The part of a ToG-style answer text that ToG would score, cleaned.

    If there is no ``{`` at all, the candidate is the whole text.  Otherwise the brace groups
    are read in order.  For each ``{``, the content runs to the next ``}``, or to the end of the
    text when the brace is never closed.  The first group wins.  A group that is a bare
    yes/no verdict is skipped unless ``verdict_ok``, and the next group is used instead (this
    is ToG's ``extract_content``).  The result is "" when nothing usable is left, and "" never
    scores.
    """
    if "{" not in text:
        cleaned = _tog_clean(text)
        return "" if (not verdict_ok and _is_verdict(cleaned)) else cleaned
    groups = re.findall(r"\{([^{}]*)\}", text)
    if not groups:  # an opening brace that is never closed
        groups = [text[text.index("{") + 1 :]]
    for group in groups:
        cleaned = _tog_clean(group)
        if verdict_ok or not _is_verdict(cleaned):
            return cleaned
    return ""


def hits1_tog(text: str, gold: Gold) -> bool:
    """Think-on-Graph's published "Exact Match", which is really a containment test.

    Mirrors ToG ``eval/eval.py`` together with ``clean_results`` and ``exact_match`` in
    ``eval/utils.py``. Take the text inside the first ``{...}`` of the answer, or the whole
    text when there are no braces. Lowercase it and remove spaces. It is a hit when it equals
    some gold alias cleaned the same way, or when either one contains the other. Gold aliases
    are flattened across answers, as ToG's ``align`` does. Punctuation is kept, so
    ``"{Obama.}"`` still hits ``"Obama"`` through containment.

    Where this departs from ToG's code (known scoring bugs):

    * An empty prediction, or empty braces (``""``, ``"{}"``, ``"{ }"``), is a miss. ToG
      counts these as hits because ``"" in s`` is true. An empty gold alias never matches
      either.
    * A yes/no verdict (``{Yes}``/``{No}``) is ToG's reasoning-step "enough information?"
      answer. ToG's eval scored it as if it were the answer. Here it is never a hit unless
      some gold alias is itself yes/no. When the verdict comes first and another brace group
      follows, that next group is scored instead, as in ToG's ``extract_content``.
    * The answer is the first ``{`` up to the *next* ``}``; with no ``}`` it runs to the end
      of the text. ToG slices at the first ``}`` anywhere, which can come before the ``{``.

    Kept as in ToG: very short predictions hit through containment. ``"{1}"`` hits the gold
    ``"1961"``, and ``"{a}"`` hits any alias that contains an "a". This is part of the
    published rule, and is why ``hits1`` is reported beside it.
    """
    aliases = {c for c in (_tog_clean(a) for g in _answer_groups(gold) for a in g) if c}
    if not aliases:
        return False
    verdict_ok = any(_is_verdict(a) for a in aliases)
    cand = _tog_candidate(text, verdict_ok)
    if not cand:
        return False
    return any(cand == a or cand in a or a in cand for a in aliases)


# --------------------------------------------------------------------------- hit (any)


def hit_any(text: str, answers: Sequence[str], gold: Gold) -> bool:
    """LMP's Hit: the lenient any-mention rule, in the tradition of RoG's ``eval_hit``.

    It is a hit when, after :func:`normalize`:

    * some gold alias occurs as a plain substring of the output text, or
    * some non-empty item of the parsed answer list occurs as a substring of some gold alias.

    Items that are empty after normalisation never match; for example ``""``, ``"the"`` and
    ``"."`` are all ignored.

    Plain substring matching is what the published rule does, and it is kept on purpose. Its
    consequence for short aliases is that they hit inside unrelated words. A gold ``"US"``
    hits ``"business"``, and a gold ``"5"`` hits ``"1995"``. In the other direction, a
    one-character item such as ``"x"`` hits the gold ``"Xbox"``. Use ``hits1`` or ``em`` when
    that leniency matters.
    """
    aliases = _norm_aliases(gold)
    if not aliases:
        return False
    ntext = normalize(text)
    if ntext and any(a in ntext for a in aliases):
        return True
    return any(item in a for item in _norm_items(answers) for a in aliases)


# --------------------------------------------------------------------------- EM / F1


def _set_match(answers: Sequence[str], gold: Gold) -> tuple[int, int, int, int]:
    """(matched predictions, distinct predictions, matched gold answers, gold answers)."""
    preds = _norm_items(answers)
    groups = _norm_groups(gold)
    matched_preds = sum(1 for p in preds if any(p in g for g in groups))
    matched_gold = sum(1 for g in groups if any(p in g for p in preds))
    return matched_preds, len(preds), matched_gold, len(groups)


def em(answers: Sequence[str], gold: Gold) -> bool:
    """Exact match over answer sets. This is the set form of SQuAD EM and the "complete match"
    used for multi-answer KGQA.

    True when every distinct predicted answer equals (after normalisation) some alias of some
    gold answer, *and* every gold answer is matched by some prediction. Duplicate predictions,
    and predictions that normalise to "", are ignored. Two aliases of the same gold answer both
    count as correct predictions.

    Empty sets follow SQuAD v2's no-answer convention. Empty prediction and empty gold gives
    True, and exactly one side empty gives False. "Empty" means nothing usable after
    normalisation. Answerless questions are normally filtered out of KGQA test sets, so this
    rarely fires.
    """
    mp, np_, mg, ng = _set_match(answers, gold)
    if np_ == 0 or ng == 0:
        return np_ == ng
    return mp == np_ and mg == ng


def f1(answers: Sequence[str], gold: Gold) -> float:
    """Set-level answer F1, as in GraftNet, NSM and RoG's ``eval_f1``, but over whole answers
    rather than tokens.

    Precision is matched distinct predictions divided by distinct predictions. Recall is
    matched gold answers divided by gold answers. F1 is their harmonic mean, and 0.0 when both
    are 0. Matching and the empty-set convention are the same as in :func:`em`: both sides
    empty gives 1.0, and exactly one side empty gives 0.0. ``f1 == 1.0`` exactly when ``em``
    is True.
    """
    mp, np_, mg, ng = _set_match(answers, gold)
    if np_ == 0 or ng == 0:
        return 1.0 if np_ == ng else 0.0
    precision, recall = mp / np_, mg / ng
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def partial_match(answers: Sequence[str], gold: Gold) -> bool:
    """CGPE's partial match: at least one gold answer is among the predicted answers.

    Matching is that of :func:`em` (a normalised prediction equals some alias of a gold answer);
    wrong extra predictions do not matter.
    """
    return _set_match(answers, gold)[2] > 0


def complete_match(answers: Sequence[str], gold: Gold) -> bool:
    """CGPE's complete match for one-to-many questions: every gold answer is among the predicted
    answers. Unlike :func:`em`, wrong extra predictions are tolerated; a question with no usable
    gold answer is never a complete match.
    """
    _, _, matched, total = _set_match(answers, gold)
    return total > 0 and matched == total


# --------------------------------------------------------------------------- evidence


def answer_recall(evidence: Sequence[str], gold: Gold) -> bool:
    """Answer coverage of the retrieved evidence: the "answer coverage" / "answer recall" of
    retrieval in KG-RAG papers (for example SubgraphRAG and RoG's retrieval analysis).

    True when some normalised, non-empty gold alias occurs as a substring of some single
    normalised evidence item (a triple or a fact text). Items are tested one at a time, never
    joined, so an alias cannot be pieced together across two items.

    The substring traps of :func:`hit_any` apply here as well. A gold ``"US"`` is "recalled" by
    any triple that contains "business". Punctuation is deleted rather than turned into
    spaces, so an evidence item that writes ``"Barack_Obama"`` does *not* recall the gold
    ``"Barack Obama"``. Methods should put entity names into their evidence strings, not raw
    identifiers.
    """
    aliases = _norm_aliases(gold)
    if not aliases:
        return False
    return any(a in item for item in _norm_items(evidence) for a in aliases)


# --------------------------------------------------------------------------- per question


def score(question: Question, prediction: Prediction) -> dict[str, float]:
    """Every metric in :data:`QUESTION_METRICS` for one question.

    Booleans are returned as 0.0/1.0, and ``f1`` as its value. Inputs:

    * ``hits1``, ``em`` and ``f1`` read ``prediction.answers``.
    * ``hits1_tog`` reads ``prediction.answer``.
    * ``hit_any`` reads both.
    * ``answer_recall`` reads ``prediction.evidence``.

    A prediction with status ``"error"`` scores 0.0 on everything, whatever it contains.
    ``"fallback"`` predictions are scored normally.
    """
    if prediction.status == "error":
        return {name: 0.0 for name in QUESTION_METRICS}
    gold = question.answers
    return {
        "hits1": float(hits1(prediction.answers, gold)),
        "hits1_tog": float(hits1_tog(prediction.answer, gold)),
        "hit_any": float(hit_any(prediction.answer, prediction.answers, gold)),
        "em": float(em(prediction.answers, gold)),
        "f1": float(f1(prediction.answers, gold)),
        "partial_match": float(partial_match(prediction.answers, gold)),
        "complete_match": float(complete_match(prediction.answers, gold)),
        "answer_recall": float(answer_recall(prediction.evidence, gold)),
    }
