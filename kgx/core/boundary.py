"""Where text from the other side of the wire enters kgx: made storable and stripped of secrets, once.

Model replies (and the JSON parsed from them), SPARQL results and the error bodies of providers and
endpoints are written later by many writers: predictions.jsonl and .parquet, traces, MLflow, the
HTML report, the response cache. Two things in such text break or betray every one of them:

- a lone surrogate (half an emoji pair, or the JSON escape ``"\\ud800"``), which UTF-8 cannot encode:
  a writer raises UnicodeEncodeError after the questions are done. It is replaced by U+FFFD here,
  and counted, so that no writer ever meets one;
- a secret of the run that a server echoes back (an API key in a 401 body, basic-auth credentials
  plain or base64). :data:`SECRETS` is the one place that knows the run's secrets, filled where kgx
  reads them (an API key's variable, a KG's credential variables, a Redis URL's password), and
  :func:`clean` replaces each by ``[secret NAME]`` (NAME: where it came from, never the value).

Every boundary calls :func:`clean` (text) or :func:`clean_value` (parsed JSON) and records what the
counts say; nothing downstream needs to know.
"""

from __future__ import annotations

import base64
import re
import threading
from dataclasses import dataclass
from typing import Any, Optional
from urllib.parse import quote, unquote

SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
# A shorter value cannot be told from ordinary text (replacing every "abc" would garble replies);
# such a value is not a credential worth the name.
MIN_SECRET_CHARS = 6


@dataclass
class Repairs:
    """What the boundary changed in one text: lone surrogates replaced and secrets redacted."""

    replaced: int = 0
    redacted: int = 0

    def __add__(self, other: "Repairs") -> "Repairs":
        return Repairs(self.replaced + other.replaced, self.redacted + other.redacted)

    def __bool__(self) -> bool:
        return bool(self.replaced or self.redacted)

    def describe(self) -> str:
        """``"1 lone surrogate replaced by U+FFFD, 2 secrets redacted"``."""
        parts = []
        if self.replaced:
            parts.append(f"{self.replaced} lone surrogate{'s' * (self.replaced != 1)} replaced by U+FFFD")
        if self.redacted:
            parts.append(f"{self.redacted} secret{'s' * (self.redacted != 1)} redacted")
        return ", ".join(parts)


class Secrets:
    """The values this process must never store or print, each with the name of where it came
    from. Forms a server may echo are kept too: the URL-quoted value, its base64, and for a
    user/password pair the base64 of ``user:password`` (an ``Authorization: Basic`` header)."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}  # form -> name
        self._pattern: Optional[re.Pattern[str]] = None
        self._lock = threading.Lock()

    def add(self, value: Optional[str], name: str) -> None:
        """Know ``value`` (read from ``name``: an environment variable or a config field); of a
        header value such as ``Bearer <token>``, the token alone too."""
        if not value or len(value) < MIN_SECRET_CHARS:
            return
        if " " in value.strip():
            self.add(value.split()[-1], name)
        encoded = base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii")
        forms = {value, quote(value, safe=""), unquote(value), encoded, encoded.rstrip("=")}
        with self._lock:
            fresh = {form: name for form in forms if len(form) >= MIN_SECRET_CHARS and form not in self._names}
            if not fresh:
                return
            self._names.update(fresh)
            longest_first = sorted(self._names, key=len, reverse=True)  # a value inside a longer form
            self._pattern = re.compile("|".join(re.escape(form) for form in longest_first))

    def add_pair(self, user: str, password: str, user_name: str, password_name: str) -> None:
        """A basic-auth pair: each value, and the base64 of ``user:password`` a header carries."""
        self.add(user, user_name)
        self.add(password, password_name)
        self.add(base64.b64encode(f"{user}:{password}".encode()).decode("ascii"), f"{user_name}:{password_name}")

    def redact(self, text: str) -> tuple[str, int]:
        """``text`` with every known secret replaced by ``[secret NAME]``, and how many were."""
        pattern = self._pattern
        if pattern is None:
            return text, 0
        return pattern.subn(lambda match: f"[secret {self._names[match.group(0)]}]", text)

    def found_in(self, body: bytes) -> bool:
        """Whether any known form occurs in ``body`` (raw bytes, before decoding)."""
        with self._lock:
            forms = list(self._names)
        return any(form.encode("utf-8", "surrogatepass") in body for form in forms)

    def clear(self) -> None:
        """Forget every secret (a test's process runs several configs)."""
        with self._lock:
            self._names.clear()
            self._pattern = None


SECRETS = Secrets()


def storable(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate replaced by U+FFFD, and how many were (ASCII: no scan)."""
    if text.isascii():
        return text, 0
    return SURROGATE.subn(REPLACEMENT, text)


def clean(text: str) -> tuple[str, Repairs]:
    """``text`` made storable and stripped of the run's secrets, with what was changed."""
    text, replaced = storable(text)
    text, redacted = SECRETS.redact(text)
    return text, Repairs(replaced, redacted)


def clean_text(text: str) -> str:
    """:func:`clean` for a message that is stored as it is (an error body): the markers in the
    text (U+FFFD, ``[secret NAME]``) say what was changed."""
    return clean(text)[0]


def clean_value(value: Any) -> tuple[Any, Repairs]:
    """Parsed JSON with every string (keys included) cleaned: a JSON escape in a reply
    (``"Par\\ud800is"``) decodes into a lone surrogate the reply's text did not show."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        total = Repairs()
        items = []
        for item in value:
            item, repairs = clean_value(item)
            items.append(item)
            total += repairs
        return items, total
    if isinstance(value, dict):
        total = Repairs()
        out = {}
        for key, item in value.items():
            key, key_repairs = clean_value(key)
            out[key], repairs = clean_value(item)
            total += key_repairs + repairs
        return out, total
    return value, Repairs()


def needs_cleaning(body: bytes) -> bool:
    """Whether JSON ``body`` may decode to text :func:`clean` would change: a ``\\u`` escape (the
    only way valid UTF-8 JSON yields a lone surrogate) or a known secret. A fast test for large
    results, which then skip the walk."""
    return b"\\u" in body or SECRETS.found_in(body)
