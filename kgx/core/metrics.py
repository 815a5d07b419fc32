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
* Numbers and dates also match as values (:mod:`kgx.core.values`), on top of the text rule:
  ``7.69202e+06`` (Virtuoso's float print) is the gold ``7692024``, ``7,692,024`` and ``7692024.0``
  are too, ``1.5`` is never ``15``, and ``August 4, 1961`` is ``1961-08-04``. Whether a year gold
  matches a full date follows the metric's published rule, stated in each docstring:

  ======================================  =========================  =========================
  metric (rule it follows)                gold ``1961``, answer      gold ``1961-08-04``,
                                          ``1961-08-04``             answer ``1961``
  ======================================  =========================  =========================
  hits1, em, f1, partial/complete match   no (exact)                 no (exact)
  hits1_tog (ToG, PoG, KnowPath, LMP)     yes (gold in answer)       yes (answer in gold)
  hit_any (LMP's Hit, RoG's eval_hit)     yes (gold in text)         yes (item in gold)
  answer_recall, reachability, shown      yes (gold in evidence)     no (gold not stated)
  ======================================  =========================  =========================
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from kgx.core.gold import Gold, answer_groups, distinct_items, normalize, prepared
from kgx.core.types import Prediction, Question
from kgx.core.values import parse

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
    "hits1",
    "hits1_tog",
    "hit_any",
    "em",
    "f1",
    "partial_match",
    "complete_match",
    "answer_recall",
)

_VERDICTS = frozenset({"yes", "no"})


# --------------------------------------------------------------------------- hits@1


def hits1(answers: Sequence[str], gold: Gold) -> bool:
    """Hits@1 as in the KGQA literature (GraftNet, NSM, RoG's Hits@1): exact match of the top answer.

    True when the *first* predicted answer, normalised, equals some normalised alias of some gold
    answer. Only the first answer is read. If it is missing, empty, or normalises to "" (for
    example ``"the"`` or ``"."``), the result is False. No fallback to the second answer.

    Values: the whole answer equals a gold value (``7.69202e+06`` is ``7692024``); a date must
    be the gold date at the gold's precision, so a year never matches a full date either way.
    """
    if not answers:
        return False
    top = normalize(answers[0])
    ready = prepared(gold)
    return bool(top) and bool(ready.matching(top) or ready.values.exact(parse(answers[0])))


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
    """The part of a ToG-style answer text that ToG would score, as written (not cleaned).

    If there is no ``{`` at all, the candidate is the whole text.  Otherwise the brace groups
    are read in order.  For each ``{``, the content runs to the next ``}``, or to the end of the
    text when the brace is never closed.  The first group wins.  A group that is a bare
    yes/no verdict is skipped unless ``verdict_ok``, and the next group is used instead (this
    is ToG's ``extract_content``).  The result is "" when nothing usable is left, and "" never
    scores.
    """
    groups = [text] if "{" not in text else re.findall(r"\{([^{}]*)\}", text)
    if not groups:  # an opening brace that is never closed
        groups = [text[text.index("{") + 1 :]]
    for group in groups:
        if verdict_ok or not _is_verdict(_tog_clean(group)):
            return group
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

    Values, as containment: a hit when some number or date written in the candidate states a
    gold value (``{7.69202e+06}``, ``{about 7,692,024}`` for ``7692024``; ``{August 4, 1961}``
    for ``1961``), or the whole candidate is a value within a gold one (``{1961}`` for the gold
    ``August 4, 1961``; ToG's string rule already lets ``1961`` and ``1961-08-04`` contain each
    other). PoG's released evaluation reuses this rule, and KnowPath and LMP report Hits@1
    "following" ToG and PoG, so this is their rule too.
    """
    aliases = {c for c in (_tog_clean(a) for g in answer_groups(gold) for a in g) if c}
    if not aliases:
        return False
    verdict_ok = any(_is_verdict(a) for a in aliases)
    raw = _tog_candidate(text, verdict_ok)
    cand = _tog_clean(raw)
    if not cand:
        return False
    if any(cand == a or cand in a or a in cand for a in aliases):
        return True
    values = prepared(gold).values
    return bool(values) and bool(values.found_in_text(raw) or values.within(parse(raw)))


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

    Values, in the same two directions: some number or date in the text states a gold value
    (a gold year is stated by a full date), or an item is a value within a gold value (an item
    ``1961`` is within the gold ``1961-08-04``). StructGPT's released WebQSP evaluation is the
    first direction alone (a gold alias, lowercased, inside the output).
    """
    ready = prepared(gold)
    if not ready.by_alias:
        return False
    ntext = normalize(text)
    if ntext and ready.in_text(ntext):
        return True
    items = distinct_items(answers)
    if any(item in a for item, _ in items for a in ready.by_alias):
        return True
    values = ready.values
    return bool(values) and bool(values.found_in_text(text) or any(values.within(parse(raw)) for _, raw in items))


# --------------------------------------------------------------------------- EM / F1


def _set_match(answers: Sequence[str], gold: Gold) -> tuple[int, int, int, int]:
    """(matched predictions, distinct predictions, matched gold answers, gold answers).

    A prediction matches an answer when it normalises to one of its aliases or, read as a
    whole, equals one of its values (the exact rule: a year is not a full date)."""
    preds = distinct_items(answers)
    ready = prepared(gold)
    matched_preds, matched_gold = 0, set[int]()
    for normalised, raw in preds:
        hit = ready.matching(normalised) | ready.values.exact(parse(raw))
        matched_preds += bool(hit)
        matched_gold |= hit
    return matched_preds, len(preds), len(matched_gold), len(ready.groups)


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

    Values: an item recalls a gold value when some number or date written in it states the
    value: ``(Texas, population, 7.69202e+06)`` recalls ``7692024``, and a full date recalls a
    gold year, but a year does not recall a gold full date (the date is not in the evidence).
    Reachability (:mod:`kgx.diagnose.reach`) and ``shown`` (:mod:`kgx.diagnose.breakdown`) use
    this same rule.
    """
    ready = prepared(gold)
    if not ready.by_alias:
        return False
    if any(ready.in_text(item) for item, _ in distinct_items(evidence)):
        return True
    return bool(ready.values) and any(ready.values.found_in_text(item) for item in evidence)


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
