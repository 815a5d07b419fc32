"""CGPE's question phrases, written clues and character matching: the text side of Sec. 3.2-3.4.

The model writes its clues freely (Sec. 3.2), constrained only in form: each clue is a phrase made
of the question's own words (:func:`clue_pattern`, any of them, in any order), so a small model
cannot write the prompt's example or "clue 1" instead. The question's phrases are offered with the
request as a hint (the prompt lists them, the schema gives them as ``examples``), not as the only
choices. The phrases include titles that the runs between function words would split ("Good Will Hunting",
"After Dark, My Sweet", "Caro diario"). The clues written are kept in the question's order, a clue
inside a longer one dropped. Character matching compares a node's name with a clue, setting aside
what a KG name and a question spell differently (case, underscores, punctuation).
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
PATTERN_UNSAFE = frozenset('"\\[]^')  # characters a clue word may not hold (see clue_words)
PATTERN_SYNTAX = frozenset(".*+?(){}|$/")  # written as [c] in a clue pattern
# Words that may sit inside a capitalised name ("Lord of the Rings", "Pride and Prejudice").
NAME_JOINERS = frozenset("of the and de la du von van der a an in on for to".split())


def phrases(text: str, max_words: int) -> dict[str, tuple[int, int]]:
    """The question's candidate clues with their word spans [start, end): the runs of words
    between function words (split where capitalisation changes, so that "Ginger Rogers act"
    gives the name apart), capitalised names joined across "of"/"the"/"and" or led by a capital
    "The"/"A"/"An" inside the sentence ("The Killing Room"), every shorter phrase inside the
    runs, so that a model can pick "movie" out of "movie co-directors", and last the titles
    (:func:`titles`), with the commas they hold."""
    tokens = [t for t in re.sub(r"(\w)('s|’s)\b", r"\1 \2", text).split() if _strip(t)]
    words = [_strip(t) for t in tokens]
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
    folded = {fold(p) for p in spans}
    for start, end in titles(words, max_words):
        title = _strip(" ".join(tokens[start:end]))
        if fold(title) not in folded:
            folded.add(fold(title))
            spans[title] = (start, end)
    return spans


def titles(words: list[str], max_words: int) -> list[tuple[int, int]]:
    """Spans that may be a title holding lowercase or function words, which the runs split: a
    whole stretch from a name's first capitalised word to its last across a word no name joins
    over ("Good Will Hunting", "After Dark, My Sweet", "Cooking with Stella"), and a lone
    capitalised word with the lowercase words after it up to the next function word ("Caro
    diario"). The question's first word starts none when it is a function word ("Who")."""

    def capital(i: int) -> bool:
        return 0 <= i < len(words) and _capital(words[i]) and (i > 0 or words[i].lower() not in FUNCTION_WORDS)

    starts = [i for i in range(len(words)) if capital(i) and not capital(i - 1)]
    ends = [
        j for j in range(len(words)) if capital(j) and not capital(j + 1) and words[j].lower() not in FUNCTION_WORDS
    ]
    spans = [(i, j + 1) for i in starts for j in ends if i < j < i + max_words and _splits(words[i + 1 : j])]
    for i in starts:
        end = i + 1
        while end < min(len(words), i + max_words) and not _capital(words[end]):
            if words[end].lower() in FUNCTION_WORDS:
                break
            end += 1
            spans.append((i, end))
    return spans


def _splits(inner: list[str]) -> bool:
    """Whether the runs split a name at one of these words: a lowercase word no name joins over,
    or a capitalised function word ("Will", "My")."""
    return any(w.lower() in FUNCTION_WORDS if _capital(w) else w.lower() not in NAME_JOINERS for w in inner)


def names_first(hint: list[str]) -> list[str]:
    """The hint as the prompt lists it: phrases that start with a capital (names, titles) first,
    longest first, then the others in the question's order. A small model copies the top of a
    list; the names are the clues that find initial nodes (Sec. 3.3)."""
    return sorted(hint, key=lambda p: (not _capital(p), -len(p.split()) if _capital(p) else 0))


def written(clues: list[str], question: str) -> list[str]:
    """The clues a model wrote, each once (by :func:`fold`), in the order the question says them,
    without one that a longer clue holds wherever it stands: "Hunting" goes with "Good Will
    Hunting", but "songs" stays beside "fight songs" in "Which songs are fight songs". Clues the
    question does not say (a model's own wording) follow in the reply's order, dropped when
    another clue holds them word for word."""
    folded: dict[str, str] = {}
    for clue in clues:
        if fold(clue):
            folded.setdefault(fold(clue), clue.strip())
    asked = f" {fold(question)} "
    places = {key: _places(key, asked) for key in folded}

    def held(key: str, other: str) -> bool:
        if other == key or f" {key} " not in f" {other} ":
            return False
        inside = places[other] or []
        return all(any(a <= start and end <= b for a, b in inside) for start, end in places[key])

    kept = [key for key in folded if not any(held(key, other) for other in folded)]
    said = sorted((k for k in kept if places[k]), key=lambda k: places[k][0])
    return [folded[k] for k in [*said, *(k for k in kept if not places[k])]]


def _places(key: str, asked: str) -> list[tuple[int, int]]:
    """Where ``key`` stands in ``asked`` (folded and space-padded) as whole words."""
    return [(m.start(), m.start() + len(key)) for m in re.finditer(f"(?<= ){re.escape(key)}(?= )", asked)]


def clue_words(text: str) -> list[str]:
    """The words a clue may be made of: each word of the question without the punctuation around
    it, and as written with a comma or full stop after it ("Dark," in "After Dark, My Sweet",
    "St." in "Al St. John"), so that a title keeps its punctuation. A word holding a character a
    JSON string or a pattern cannot hold plainly (quotes, backslashes, brackets) is left out."""
    out: dict[str, None] = {}
    for token in re.sub(r"(\w)('s|’s)\b", r"\1 \2", text).split():
        for word in (_strip(token), token.strip('"()[]{}!?;:')):
            if word and not PATTERN_UNSAFE & set(word):
                out[word] = None
    return list(out)


def clue_pattern(text: str, max_words: int, names: tuple[str, ...] = ()) -> str:
    """A JSON-schema pattern for one clue: one to ``max_words`` of the question's words
    (:func:`clue_words`) or of its topic entities' ``names`` (the dataset's entity linking: a
    model that knows "romney" is Mitt Romney may write the KG's name, which Sec. 3.3 needs to
    find the node), separated by single spaces. Characters that a pattern reads as syntax are
    written as one-character classes, which llama.cpp's grammar converter turns into plain
    characters."""
    words = list(dict.fromkeys([*clue_words(text), *(w for name in names for w in clue_words(name))]))
    word = "(" + "|".join("".join(f"[{c}]" if c in PATTERN_SYNTAX else c for c in w) for w in words) + ")"
    return f"^{word}( {word}){{0,{max_words - 1}}}$"


def _strip(token: str) -> str:
    return token.strip('.,;:!?"()[]{}')


def _capital(word: str) -> bool:
    return bool(word) and word[0].isupper()


def same_characters(name: str, clue: str) -> bool:
    """Character matching: equal after case, underscores and punctuation are set aside."""
    return bool(name) and fold(name) == fold(clue)


def fold(text: str) -> str:
    """A name or clue with case, underscores and punctuation set aside."""
    return " ".join(re.sub(r"[\W_]+", " ", text.lower()).split())
