"""The oracle's CGPE clues: written freely, as a model that knows the gold would write them.

CGPE (Sec. 3.2-3.3) starts a path at a KG node whose name is a clue, so a clue that names a topic
entity must be the KG's name, character for character but for case and punctuation. The oracle
writes, in the order the question says them:

- each topic entity the question names: as the question spells it when that is the KG's name
  ("Logan's Run", read as CGPE reads it, "Logan 's Run"; "Ro.Go.Pa.G." with its final period, which
  the name search needs), else the KG's name itself where the question says it otherwise or only
  in part ("romney" for Mitt Romney, "hugo chavez" for Hugo Chávez, "king louis xiv" for Louis XIV
  of France), as a model that links entities writes it;
- each other gold entity the question names whole;
- then the one-word hint phrases in the scripted order, without those that share a word, or a
  word's stem, with the clues above: one clue per word, so that two steps the question says side
  by side ("son die") stay two clues, as a clue per hop is what lets a path take every hop
  (Sec. 3.5 ends it once every clue is used).

Only clues of the schema's form (its ``pattern``: the question's words and its topic entities'
names) are written.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Optional, Protocol

from kgx.core.metrics import normalize
from kgx.diagnose.gold_path import GoldHint, Step
from kgx.llm import scripted
from kgx.llm.scripted import rank


class Judge(Protocol):
    """What the clues read of the oracle's view of a request (:class:`kgx.llm.oracle.Judge`)."""

    question: str
    gold: GoldHint
    names: list[str]
    chains: list[list[Step]]

    def steps(self, candidate: Any) -> list[int]: ...


POSSESSIVE, SPLIT = re.compile(r"(\w)('s|’s)\b"), r"\1 \2"  # "caesonia's" read as CGPE reads it: "caesonia 's"
FOLD = re.compile(r"[\W_]+")  # what a name and the question may spell differently (CGPE's character matching)
SPAN_PUNCTUATION = '.,;:!?"()[]{}'  # around a name the question spells (kept inside it)
STEM = 5  # letters a question word shares with a name's word to say it ("catholic", "Catholicism")
SHORT = 3  # a name's words this short or shorter say nothing alone ("of", "la", "b")
MAX_SPAN = 9  # words of the question a name may span


def plain(text: str) -> str:
    """Lowercase words without accents or punctuation: what a question and a KG name share."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " ".join(FOLD.sub(" ", POSSESSIVE.sub(SPLIT, bare).lower()).split())


def where(name: str, words: list[str]) -> Optional[int]:
    """The first word of the question (``words``, :func:`plain`) that says ``name``: where the
    whole name starts, else the first word that is the name's initials ("jfk") or one of its
    longer words, or shares a stem with one ("seahawks", "catholic"); None when the question
    says none of it."""
    wanted = plain(name).split()
    for i in range(len(words)):
        if words[i : i + len(wanted)] == wanted:
            return i
    longer = [w for w in wanted if len(w) > SHORT]
    initials = "".join(w[0] for w in wanted) if len(wanted) > 1 else ""
    for i, word in enumerate(words):
        if word == initials or any(
            word == w or (min(len(word), len(w)) >= STEM and word[:STEM] == w[:STEM]) for w in longer
        ):
            return i
    return None


def spelled(question: str, name: str) -> str:
    """The question's own text of ``name``: the words that are the name but for case (a final
    period kept where the name has one: "Ro.Go.Pa.G."), else but for punctuation inside ("After
    Dark, My Sweet"), else the fewest words whose normalised form is the name's (which drops
    articles: "the X" is X); empty when none."""
    tokens = POSSESSIVE.sub(SPLIT, question).split()
    spans = [" ".join(tokens[i:j]) for i in range(len(tokens)) for j in range(i + 1, MAX_SPAN + i)]
    windows = [w for span in spans for w in dict.fromkeys((span.strip(SPAN_PUNCTUATION), span.rstrip(",;:!?\"')]}")))]
    same = [w for w in windows if w.lower() == name.lower()]
    folded = [w for w in windows if FOLD.sub(" ", w.lower()).split() == FOLD.sub(" ", name.lower()).split()]
    alike = sorted((w for w in windows if normalize(w) == normalize(name)), key=lambda w: len(w.split()))
    return (same or folded or alike or [""])[0]


def clues(judge: Judge, hint: list[Any], high: Optional[int], pattern: Optional[str]) -> list[Any]:
    """CGPE's clues (see the module docstring), at most ``high``."""
    words = plain(judge.question).split()
    asked = f" {' '.join(words)} "
    placed: dict[str, tuple[int, str]] = {}  # plain name -> (where the question says it, clue)
    for topic in judge.gold.topics:
        at = where(topic, words)
        if at is not None and plain(topic):
            own = spelled(judge.question, topic)
            placed.setdefault(plain(topic), (at, own if own and plain(own) == plain(topic) else topic))
    for name in judge.names:
        key = plain(name)
        if key and f" {key} " in asked and key not in placed:
            placed[key] = (asked[: asked.find(f" {key} ")].count(" "), spelled(judge.question, name))
    keys = [k for k in placed if not any(k != o and f" {k} " in f" {o} " for o in placed)]
    named = [placed[k][1] for k in sorted(keys, key=lambda k: placed[k][0]) if placed[k][1]]
    taken = {w for n in named for w in plain(n).split()}
    taken |= {w for w in words if any(where(key, [w]) is not None for key in keys)}  # "jfk", "romney"
    stems = {w[:STEM] for w in taken if len(w) >= STEM}

    def free(option: Any) -> bool:
        mine = set(plain(str(option)).split())
        return not mine & taken and not {w[:STEM] for w in mine if len(w) >= STEM} & stems

    rest = [o for o in rank(hint, judge.question) if len(str(o).split()) == 1 and free(o)]
    fits = [c for c in named + rest if pattern is None or re.search(pattern, str(c))]
    return fits[:high]


def clue_for(judge: Judge, candidate: Any, clues: list[Any]) -> Any:
    """The clue that says how the gold path reaches ``candidate``: the most words shared (by
    their first letters) with the relation of its gold step and its own name; ties in the
    offered order, a topic's name last (it names where a path starts, not a step)."""
    said = scripted.words(str(candidate))
    for i in judge.steps(candidate):
        said |= {w for chain in judge.chains if i < len(chain) for w in scripted.words(chain[i][0])}
    stems = {w[:4] for w in said}
    topics = {plain(t) for t in judge.gold.topics}

    def score(clue: Any) -> tuple[int, int]:
        return (-(plain(str(clue)) in topics), sum(w[:4] in stems for w in scripted.words(str(clue))))

    return max(clues, key=score)
