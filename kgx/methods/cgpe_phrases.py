"""CGPE's question phrases and character matching: the text side of Sec. 3.2-3.4.

The clue extraction call chooses among the question's own phrases (an enum), so a clue is always
text the question says; these are the phrases offered. Character matching compares a node's name
with a clue, setting aside what a KG name and a question spell differently (case, underscores,
punctuation).
"""

from __future__ import annotations

import re

# Words that carry no clue on their own; clue phrases are the runs of words between them.
FUNCTION_WORDS = frozenset(
    "a an the of in on at to for by with from and or but is was are were be been being am what which "
    "who whom whose where when why how did does do done has have had that this these those it its "
    "as into than then there their his her him he she they them we you i me my our your 's ' "
    "also any some all many much more most can could would should will shall may might "
    "not no yes if about after before during under over between".split()
)
# Words that may sit inside a capitalised name ("Lord of the Rings", "Pride and Prejudice").
NAME_JOINERS = frozenset("of the and de la du von van der a an in on for to".split())


def phrases(text: str, max_words: int) -> dict[str, tuple[int, int]]:
    """The question's candidate clues with their word spans [start, end): the runs of words
    between function words (split where capitalisation changes, so that "Ginger Rogers act"
    gives the name apart), capitalised names joined across "of"/"the"/"and" or led by a capital
    "The"/"A"/"An" inside the sentence ("The Killing Room"), and every shorter phrase inside the
    runs, so that a model can pick "movie" out of "movie co-directors"."""
    words = [w for w in (_strip(t) for t in re.sub(r"(\w)('s|’s)\b", r"\1 \2", text).split()) if w]
    runs: list[tuple[int, int]] = []
    start = None
    for i, word in enumerate(words + [""]):
        content = bool(word) and word.lower() not in FUNCTION_WORDS
        if start is not None and (not content or _capital(word) != _capital(words[i - 1])):
            runs.append((start, i))
            start = None
        if content and start is None:
            start = i
    joined = [
        (a[0], b[1])
        for a, b in zip(runs, runs[1:])
        if _capital(words[a[1] - 1])
        and _capital(words[b[0]])
        and all(w.lower() in NAME_JOINERS for w in words[a[1] : b[0]])
    ]
    titled = [(a - 1, b) for a, b in [*runs, *joined] if a > 1 and words[a - 1] in ("The", "A", "An")]
    spans: dict[str, tuple[int, int]] = {}
    for start, end in [*runs, *joined, *titled] + [
        (i, j) for a, b in runs for i in range(a, b) for j in range(i + 1, b + 1)
    ]:
        if end - start <= max_words:
            spans.setdefault(" ".join(words[start:end]), (start, end))
    return spans


def _strip(token: str) -> str:
    return token.strip('.,;:!?"()[]{}')


def _capital(word: str) -> bool:
    return bool(word) and word[0].isupper()


def same_characters(name: str, clue: str) -> bool:
    """Character matching: equal after case, underscores and punctuation are set aside."""
    return bool(name) and _fold(name) == _fold(clue)


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", text.lower()).split())
