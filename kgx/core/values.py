"""Numbers and dates in answers, compared as values rather than as strings.

Text rules lose or invent numeric answers: SQuAD's normalisation deletes the point of ``1.5``, so
it equals ``15``. A KG prints values its own way: Virtuoso prints an
``xsd:float`` with 6 significant digits (``7.69202e+06`` for the gold ``7692024``), a gold may be
written ``7,692,024``, a model writes ``August 4, 1961`` for the KG's ``1961-08-04``. This module
reads such text as values and indexes a question's gold values, so that every metric, answer
recall, reachability and the failure breakdown compare values with O(1) lookups per text value
(never a loop over gold aliases).

Values:

* A **number**: an optional sign, digits (thousands grouped by ``,`` allowed: ``7,692,024``), an
  optional fraction and exponent. ``15.0`` equals ``15`` and ``1.50`` equals ``1.5``; ``1.5`` never
  equals ``15`` and ``-3`` never equals ``3``.
* Within **float print precision**: a number that a C ``%g`` print (6 significant digits, the way
  Virtuoso prints ``xsd:float``) could have written, that is one with at most 6 significant digits,
  in scientific notation or below 10^6, equals every number that prints as it:
  ``7.69202e+06`` equals ``7692024`` and ``7692015``, not ``7692030``. The less precise (printed)
  side decides; two numbers written in full compare exactly (``7692020`` is not ``7692024``).
* A **date**: ISO ``1961-08-04`` (a time after ``T`` is ignored), ``1961-08``, ``August 4, 1961``,
  ``4 August 1961``, ``Aug. 4th, 1961``, ``August 1961``. A bare four-digit number (``1961``) is both
  a number and a year. Day-first/month-first numeric forms (``04/08/1961``) are ambiguous and not read.

How two dates match is the metric's rule (:class:`GoldValues`): ``exact`` needs the same date at the
same precision (the year ``1961`` is not ``1961-08-04``); ``found_in`` (the gold is in a text) lets a
text date be more precise than the gold (a gold ``1961`` is in ``1961-08-04``, not the reverse);
``within`` (a text inside the gold) lets it be less precise (``1961`` is within a gold ``1961-08-04``).
Numbers match by value under all three.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any, Optional

__all__ = ["DIGIT", "Date", "GoldValues", "PRINT_DIGITS", "Value", "as_printed", "parse", "values_in"]

PRINT_DIGITS = 6  # significant digits of a %g print (Virtuoso's xsd:float)
_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        ),
        1,
    )
    for name in names.split()
}
_MONTH = "(?P<{}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{}>\d{{1,2}})(?:st|nd|rd|th)?"
_NUMBER = r"(?P<num>[-+\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_ISO = r"(?P<iy>\d{4})-(?P<im>\d{2})(?:-(?P<id>\d{2})(?:T[\d:.]+(?:Z|[-+]\d{2}:?\d{2})?)?)?"
_DATE = "|".join(
    (
        _ISO,
        _MONTH.format("am") + r"\s+" + _DAY.format("ad") + r",?\s+(?P<ay>\d{4})",
        _DAY.format("bd") + r"\s+(?:of\s+)?" + _MONTH.format("bm") + r",?\s+(?P<by>\d{4})",
        _MONTH.format("cm") + r",?\s+(?P<cy>\d{4})",
    )
)
# In free text a value starts after no word character, point or comma, nor after a dash that
# follows a letter (not inside "m.06w2sn5" or "B-52"; "1995" of "1990-1995" is one), and ends
# before none of them (not the "19" of "1961"). Texts without a month name (most evidence) are
# read by the pattern without the written-out forms, which is several times faster.
_START, _END = r"(?<![\w.,])(?<![^\W\d][-\u2212])", r"(?![\w]|[.,]\d)"
_IN_TEXT = re.compile(rf"{_START}(?:(?P<date>{_DATE})|{_NUMBER}){_END}", re.IGNORECASE)
_IN_TEXT_NO_MONTH = re.compile(rf"{_START}(?:(?P<date>{_ISO})|{_NUMBER}){_END}")
_MONTH_STEMS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WHOLE = re.compile(rf"(?:(?P<date>{_DATE})|{_NUMBER})", re.IGNORECASE)
DIGIT = re.compile(r"\d")
_OPEN, _CLOSE = " \t\n\r\"'`([{<", " \t\n\r\"'`)]}>.,;:!?"  # a leading point is part of ".5"


@dataclass(frozen=True)
class Date:
    """A calendar date at the precision it was written: month and day are 0 when not given."""

    year: int
    month: int = 0
    day: int = 0

    def prefixes(self) -> tuple["Date", ...]:
        """This date and each less precise form of it: 1961-08-04, 1961-08, 1961."""
        forms = [self, Date(self.year, self.month)] if self.day else [self]
        return (*forms, Date(self.year)) if self.month else tuple(forms)


@dataclass(frozen=True)
class Value:
    """What a text says as a value: a number, a date, or both (a bare year)."""

    number: Optional[Decimal] = None
    date: Optional[Date] = None
    printed: bool = False  # the number could be a %g print, precise to PRINT_DIGITS significant digits
    as_print: Optional[Decimal] = None  # the number as a %g print would show it (``as_printed``)


def as_printed(number: Decimal) -> Decimal:
    """``number`` as a %g print shows it: rounded to PRINT_DIGITS significant digits."""
    if not number:
        return number
    try:
        return number.quantize(Decimal(1).scaleb(number.adjusted() - PRINT_DIGITS + 1), ROUND_HALF_EVEN)
    except InvalidOperation:  # an exponent beyond the decimal context: no print could show it
        return number


def _number(text: str, whole_year: bool) -> Optional[Value]:
    plain = text.replace(",", "").replace("\u2212", "-")
    try:
        number = Decimal(plain)
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    digits = len(number.normalize().as_tuple().digits) if number else 1
    printed = digits <= PRINT_DIGITS and ("e" in plain.lower() or abs(number) < 10**PRINT_DIGITS)
    year = Date(int(plain)) if whole_year and len(plain) == 4 and plain.isdigit() else None
    return Value(number, year, printed, number if digits <= PRINT_DIGITS else as_printed(number))


def _date(match: re.Match[str]) -> Optional[Value]:
    """The date a date match names, or None when it is no calendar date (month 13, 30 February)."""
    g = match.groupdict()
    for y, m, d in (("iy", "im", "id"), ("ay", "am", "ad"), ("by", "bm", "bd"), ("cy", "cm", None)):
        if g[y]:
            month_text = g[m].lower().rstrip(".")
            month = _MONTHS[month_text] if month_text in _MONTHS else int(month_text)
            day = int(g[d]) if d and g[d] else 0
            try:
                datetime.date(int(g[y]), month, day or 1)
            except ValueError:
                return None
            return Value(date=Date(int(g[y]), month, day))
    return None


def _value(match: re.Match[str]) -> Optional[Value]:
    return _date(match) if match.group("date") else _number(match.group("num"), whole_year=True)


@functools.lru_cache(maxsize=1 << 16)  # gold aliases and answers are read by several metrics
def parse(text: str) -> Optional[Value]:
    """The value a whole answer text is (``" 1.5. "``, ``"7,692,024"``, ``"August 4, 1961"``), or
    None when the text is anything more or else (``"1.5 km"``, ``"Apollo 11"``)."""
    if not DIGIT.search(text):
        return None
    match = _WHOLE.fullmatch(text.lstrip(_OPEN).rstrip(_CLOSE))
    return _value(match) if match else None


@functools.lru_cache(maxsize=1 << 16)  # a run shows the same triples to many questions
def values_in(text: str) -> tuple[Value, ...]:
    """Every number and date written in a free text, left to right (``"born 4 August 1961 in
    Honolulu, pop. 7,692,024"`` has a date and a number). Ids such as ``m.06w2sn5`` hold none."""
    if not DIGIT.search(text):
        return ()
    lowered = text.lower()
    pattern = _IN_TEXT if any(stem in lowered for stem in _MONTH_STEMS) else _IN_TEXT_NO_MONTH
    return tuple(v for match in pattern.finditer(text) if (v := _value(match)))


Key = tuple[str, Any]  # a kind of match ("n", "print", "d", "holds", ...) and what it matches


class GoldValues:
    """The values among a question's gold answers, indexed once (per question, for every metric).

    ``groups`` are the gold answers' alias lists; a lookup returns the indices of the answers a
    text value matches, in O(1) dictionary probes whatever the number of aliases.
    """

    def __init__(self, groups: Sequence[Iterable[str]]):
        self._keys: dict[Key, set[int]] = {}
        for index, aliases in enumerate(groups):
            for alias in aliases:
                if (value := parse(alias)) is not None:
                    self._index(value, index)

    def __bool__(self) -> bool:
        return bool(self._keys)

    def _add(self, key: Key, index: int) -> None:
        self._keys.setdefault(key, set()).add(index)

    def _index(self, gold: Value, index: int) -> None:
        if gold.number is not None:
            self._add(("n", gold.number), index)
            self._add(("shown as", gold.as_print), index)  # a text that is a print of the gold
            if gold.printed:
                self._add(("print", gold.number), index)  # the gold is a print of a text
        if gold.date is not None:
            self._add(("d", gold.date), index)
            for form in gold.date.prefixes():
                self._add(("holds", form), index)

    def _find(self, keys: Iterable[Key]) -> set[int]:
        found: set[int] = set()
        for key in keys:
            found.update(self._keys.get(key, ()))
        return found

    def _number_keys(self, value: Value) -> list[Key]:
        if value.number is None:
            return []
        keys = [("n", value.number), ("print", value.as_print)]
        return [*keys, ("shown as", value.number)] if value.printed else keys

    def exact(self, value: Optional[Value]) -> set[int]:
        """Answers equal to ``value``: the same number, or the same date at the same precision."""
        if value is None or not self._keys:
            return set()
        return self._find([*self._number_keys(value), *([("d", value.date)] if value.date else [])])

    def found_in(self, value: Optional[Value]) -> set[int]:
        """Answers that ``value`` states: the same number, or a date ``value`` agrees with at the
        gold's precision or finer (the gold ``1961`` is stated by ``1961-08-04``)."""
        if value is None or not self._keys:
            return set()
        dates = [("d", form) for form in value.date.prefixes()] if value.date else []
        return self._find([*self._number_keys(value), *dates])

    def within(self, value: Optional[Value]) -> set[int]:
        """Answers that hold ``value``: the same number, or a date that ``value`` is a less (or
        equally) precise form of (``1961`` is within the gold ``1961-08-04``)."""
        if value is None or not self._keys:
            return set()
        return self._find([*self._number_keys(value), *([("holds", value.date)] if value.date else [])])

    def found_in_text(self, text: str) -> set[int]:
        """Answers stated by some value written in ``text``."""
        if not self._keys:
            return set()
        return set().union(*(self.found_in(v) for v in values_in(text)))
