"""An oracle backbone for method ceilings (litellm provider ``kgx-oracle``, ``llm=oracle``).

A test double like the scripted one (:mod:`kgx.llm.scripted`) that also knows the question's gold
path (:class:`kgx.diagnose.gold_path.GoldHint`, sent with each request by the client; a dataset's
path comes without its round trips). At every choice it takes the offered candidates on a gold
path, in the chain's order: first the next unwalked step of the chain from where the prompt stands
(the relation in the direction the chain walks it, or the entity that step reaches), then the later
steps, then the earlier ones. It calls the evidence
sufficient only when a gold answer is in what it was shown, and answers with the gold answers it was
shown. A run with it measures how far a method's own search can get: its choices are constrained
like any model's (only offered candidates, within the schema's counts), and it is metered like the
scripted backbone (real token counts, the same simulated latency and failures). Whatever the gold
does not decide (reasoning text, sub-objectives, notes) is the scripted reply, except where free
text feeds the search or the answer: CGPE's clues, written freely, are the topic and gold entity
names the question says (as the gold spells them) and then the scripted choice among the hinted
phrases; LMP's fact summaries keep the gold names of the facts they summarise.

What the oracle was shown is the request's last message (worked examples are earlier turns),
its ``Question:`` line excluded: the question is not evidence. An alias is shown when its
normalised form (:func:`kgx.core.metrics.normalize`) stands there as whole words.

Where a prompt stands on the chain: the deepest gold entity it shows outside its candidates
(the entity a relation list belongs to, the facts or triples read so far; the depth is the hop at
which the gold path first reaches it), or, where the prompt lists the relations already followed
(StructGPT's ``Relations already followed: a -> b``), their count, whichever is further.

How candidates are read, as the methods render them:
- a relation is ``r`` (walked forwards) or ``r (reverse)``; where no message of the request
  mentions ``(reverse)`` (KnowPath lists bare relations, one per id) either direction matches;
- an entity is its name, numbered ``[2]`` or ``#2`` when names repeat;
- CGPE's pairs ``(relation, type)`` and ``(type, name)`` are read part by part.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Optional

from litellm.llms.custom_llm import CustomLLMError

from kgx.core.metrics import normalize
from kgx.diagnose.gold_path import GoldHint, fold
from kgx.llm import scripted
from kgx.llm.errors import LLMError
from kgx.llm.scripted import ScriptedLLM, question_of, rank

if TYPE_CHECKING:
    from kgx.core.config import LLMConfig

GOLD_PARAM = "kgx_gold"  # the request parameter the client puts the hint in (oracle requests only)
NO_GOLD = (
    "llm=oracle needs the question's gold: the run passes it per question (QuestionLLM(client, meter, trace, gold=))"
)
UNKNOWN = "unknown"  # the answer of an oracle shown no gold answer: an honest miss
QUESTION_LINE = re.compile(r"^\s*(?:Question|Q)\s*:.*$", flags=re.M)
LIST_NUMBER = re.compile(r"^\s*\d+(?:\.\d+)*[.)]\s+", flags=re.M)  # "1. ", "1.2. ": no gold "1" shown by them
NUMBERED = re.compile(r"^\s*(\d+)\.\s+(.+)$", flags=re.M)
SUFFIX = re.compile(r" (?:\[\d+\]|#\d+)$")  # ToG's/PoG's "Name [2]", KnowPath's "Name #2"
REVERSE = " (reverse)"
FOLLOWED = re.compile(r"^Relations already followed: (.*)$", flags=re.M)  # StructGPT's walked relations
FAR = (2, 0)  # the order key of a candidate on no gold chain
CLUES = frozenset({"clues"})  # free strings that are a set of question phrases to cover (CGPE's clue extraction)
# CGPE's matchings: filters that may keep none (minItems 0); an off-path candidate is no lead, so
# where none is on the path, none is kept (the scripted double's choice would lead the path astray).
FILTERS = frozenset({"keep", "scores", "matches"})
FOLD = re.compile(r"[\W_]+")  # what a name and the question may spell differently (CGPE's character matching)
POSSESSIVE, SPLIT = re.compile(r"(\w)('s|’s)\b"), r"\1 \2"  # "caesonia's" read as CGPE reads it: "caesonia 's"
SPAN_PUNCTUATION = '.,;:!?"()[]{}'  # around a name the question spells (kept inside it)
STEM = 4  # letters two words share at their start to say one thing ("starred", "starring")


def gold_params(cfg: "LLMConfig", gold: Optional[GoldHint]) -> dict[str, Any]:
    """The parameter that carries the gold in an oracle request (the client adds it to no other)."""
    if gold is None:
        raise LLMError(f"llm '{cfg.name}' ({cfg.model}): {NO_GOLD}", "llm.oracle")
    return {GOLD_PARAM: gold.to_dict()}


def views(candidate: str) -> list[str]:
    """The parts of a candidate that may name a gold relation or entity."""
    out = [candidate, SUFFIX.sub("", candidate)]
    if candidate.startswith("(") and candidate.endswith(")") and ", " in candidate:
        out += candidate[1:-1].split(", ", 1)
    return out


class Judge:
    """The oracle's view of one request: the gold, what it was shown, and its choices."""

    def __init__(self, gold: GoldHint, messages: list[dict[str, str]]):
        self.gold = gold
        self.prompt = messages[-1]["content"]
        self.question = question_of(self.prompt)
        self.shown = f" {normalize(LIST_NUMBER.sub('', QUESTION_LINE.sub(' ', self.prompt)))} "
        self.directed = any(REVERSE.strip() in str(m.get("content", "")) for m in messages)
        self.relations = {fold(r, d) for r, d in gold.relations}
        self.relation_ids = {r for r, _ in self.relations}
        self.names = [*gold.entities, *(alias for group in gold.answers for alias in group)]
        self.known = {normalize(n) for n in self.names} - {""}
        self.ids = set(gold.entities)
        self.chains = [[fold(r, d) for r, d in c] for c in gold.walks()]
        self.depths = {**{normalize(k): d for k, d in gold.depths.items()}, **gold.depths}

    # ------------------------------------------------------------------ what it was shown

    def has(self, text: str, alias: str) -> bool:
        """Whether ``alias`` stands as whole words in ``text`` (normalised and space-padded)."""
        key = normalize(alias)
        return bool(key) and f" {key} " in text

    def answers(self) -> list[str]:
        """The first alias of every gold answer some alias of which it was shown."""
        return [group[0] for group in self.gold.answers if group and any(self.has(self.shown, a) for a in group)]

    def gold_names(self, text: str) -> list[str]:
        """The gold-path entity names and answer aliases that ``text`` holds, each once, and none
        that is only part of another ("Yen" within "Japanese yen")."""
        padded, out = f" {normalize(text)} ", {}
        for name in self.names:
            if self.has(padded, name):
                out.setdefault(normalize(name), name)
        return [name for key, name in out.items() if not any(key != k and f" {key} " in f" {k} " for k in out)]

    # ------------------------------------------------------------------ candidates

    def on_path(self, candidate: Any) -> bool:
        """Whether an offered candidate is a gold relation (in its direction) or a gold entity."""
        for view in views(str(candidate)):
            if view in self.ids or normalize(view) in self.known:
                return True
            relation, direction = fold(view[: -len(REVERSE)], "in") if view.endswith(REVERSE) else fold(view, "out")
            if (relation, direction) in self.relations or (not self.directed and relation in self.relation_ids):
                return True
        return False

    def at(self, options: list[Any]) -> int:
        """Where the prompt stands: the hop of the deepest gold entity it shows that is not one of
        the ``options``, or the count of the relations it says were followed, whichever is more."""
        offered = {w for o in options for v in views(str(o)) for w in (v, normalize(v))}
        shown = [d for key, d in self.depths.items() if key not in offered and self.has(self.shown, key)]
        followed = FOLLOWED.search(self.prompt)
        walked = (
            0 if followed is None or followed.group(1).strip() == "(none yet)" else followed.group(1).count("->") + 1
        )
        return max([walked, *shown])

    def steps(self, candidate: Any) -> list[int]:
        """The chain positions a candidate takes: the index of each gold step it is (a relation),
        or the hop before the depth it lies at (an entity; a gold answer the last hop)."""
        found = []
        for view in views(str(candidate)):
            relation, direction = fold(view[: -len(REVERSE)], "in") if view.endswith(REVERSE) else fold(view, "out")
            for chain in self.chains:
                found += [
                    i for i, (r, d) in enumerate(chain) if r == relation and (d == direction or not self.directed)
                ]
            depth = self.depths.get(view, self.depths.get(normalize(view)))
            if depth:
                found.append(depth - 1)
            if normalize(view) in self.known and depth is None:
                found += [len(c) - 1 for c in self.chains]
        return found

    def order(self, candidate: Any, here: int) -> tuple[int, int]:
        """Next unwalked step first, then later steps, then earlier ones (a prompt that shows less
        than the walk so far)."""
        keys = [(0, i - here) if i >= here else (1, here - i) for i in self.steps(candidate)]
        return min(keys, default=FAR)

    def pick(self, options: list[Any], low: int, high: Optional[int], focused: bool, name: str = "") -> list[Any]:
        """Gold candidates first (in the chain's order from where the prompt stands, ties in the
        scripted order), topped up to ``low`` with the scripted order's others. Without any: the
        scripted choice, or only ``low`` of it when a sibling choice of the same reply has gold
        candidates (``focused``: the others are no lead), or none in a filter that may keep none
        (CGPE's matchings, ``FILTERS``)."""
        ranked = rank(options, self.question)
        here = self.at(options)
        gold = sorted((o for o in ranked if self.on_path(o)), key=lambda o: self.order(o, here))
        if not gold and name in FILTERS and not low:
            return []
        if not gold and not focused:
            return ranked[: max(1, low) if high is None else high]
        chosen = gold[:high]
        return chosen + [o for o in ranked if o not in chosen][: max(0, low - len(chosen))]

    def clues(self, hint: list[Any], high: Optional[int], pattern: Optional[str]) -> list[Any]:
        """Clues are a set to cover, written freely: the topic and gold entity names the question
        says, whole and as it spells them (a title with small words and commas too), each once and
        none inside another, in the question's order; then the one-word ``hint`` phrases in the
        scripted order, without those sharing a word with them: one clue per word, so that two
        steps the question says side by side ("son die") stay two clues, as a clue per hop is
        what lets a path take every hop (Sec. 3.5 ends it once every clue is used).
        Only clues of the schema's form (its ``pattern``) are written."""
        asked = f" {normalize(POSSESSIVE.sub(SPLIT, self.question))} "
        said: dict[str, str] = {}
        for name in [*self.gold.topics, *self.names]:
            if self.has(asked, name):
                said.setdefault(normalize(name), name)
        keys = sorted(
            (k for k in said if not any(k != o and f" {k} " in f" {o} " for o in said)),
            key=lambda k: asked.find(f" {k} "),
        )
        named = [text for text in (self.spelled(said[k]) for k in keys) if text]
        taken = set().union(*(scripted.words(n) for n in named))
        rest = [o for o in rank(hint, self.question) if len(str(o).split()) == 1 and not scripted.words(str(o)) & taken]
        fits = [c for c in named + rest if pattern is None or re.search(pattern, str(c))]
        return fits[:high]

    def spelled(self, name: str) -> str:
        """The question's own text of ``name``, punctuation inside it kept ("After Dark, My
        Sweet"): the words that are the name but for case and punctuation, else the fewest words
        whose normalised form is the name's (which drops articles: "the X" is X); empty when none."""
        tokens = POSSESSIVE.sub(SPLIT, self.question).split()
        windows = [
            " ".join(tokens[i:j]).strip(SPAN_PUNCTUATION) for i in range(len(tokens)) for j in range(i + 1, 9 + i)
        ]
        same = [w for w in windows if FOLD.sub(" ", w.lower()).split() == FOLD.sub(" ", name.lower()).split()]
        alike = sorted((w for w in windows if normalize(w) == normalize(name)), key=lambda w: len(w.split()))
        return (same or alike or [""])[0]

    def clue_for(self, candidate: Any, clues: list[Any]) -> Any:
        """The clue that says how the gold path reaches ``candidate``: the most words shared (by
        their first letters) with the relation of its gold step and its own name; ties in the
        offered order, a topic's name last (it names where a path starts, not a step)."""
        said = scripted.words(str(candidate))
        for i in self.steps(candidate):
            said |= {w for chain in self.chains if i < len(chain) for w in scripted.words(chain[i][0])}
        stems = {w[:STEM] for w in said}
        topics = {normalize(t) for t in self.gold.topics}

        def score(clue: Any) -> tuple[int, int]:
            return (-(normalize(str(clue)) in topics), sum(w[:STEM] in stems for w in scripted.words(str(clue))))

        return max(clues, key=score)

    def has_gold(self, schema: dict[str, Any]) -> bool:
        return any(self.on_path(o) for o in schema.get("items", {}).get("enum", []))

    # ------------------------------------------------------------------ values

    def value(self, schema: dict[str, Any], name: str = "", focused: bool = False) -> Any:
        """A value of ``schema``: the gold decides choices, verdicts and answers; the scripted
        model the rest."""
        if "enum" in schema:
            return self.pick(list(schema["enum"]), 1, 1, False)[0]
        kind = schema.get("type")
        if kind == "object":
            props = schema.get("properties", {})
            lead = any(self.has_gold(sub) for sub in props.values())
            return {key: self.value(sub, key, lead) for key, sub in props.items()}
        if kind == "array":
            return self.array(schema, name, focused)
        if kind == "boolean":  # sufficient / answerable / PoG's reflection: only once a gold answer is shown
            return bool(self.answers())
        return scripted.instance(schema, self.prompt, self.question, name)

    def array(self, schema: dict[str, Any], name: str, focused: bool) -> Any:
        """Choices, clues, scored or matched candidates, answers, summaries; else scripted."""
        items = schema.get("items", {})
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        props = items.get("properties", {})
        if name in CLUES and items.get("type") == "string":
            return self.clues(list(items.get("examples", [])), high, items.get("pattern"))
        if "enum" in items:
            return self.pick(list(items["enum"]), low, high, focused, name)
        if items.get("type") == "object" and any("enum" in sub for sub in props.values()):
            return self.choices(schema, name)
        if name == "answers":
            return (self.answers() or ([UNKNOWN] if low else []))[:high]
        fixed = scripted.instance(schema, self.prompt, self.question, name)
        if items.get("type") == "string" and low and low == high:
            return self.summaries(fixed, items.get("maxLength"))
        return fixed

    def choices(self, schema: dict[str, Any], name: str) -> list[dict[str, Any]]:
        """Objects choosing a candidate each (ToG's scored relations and entities, CGPE's rough
        and exact matches): one per gold candidate, topped up to minItems. Scores go to the gold:
        equal shares of 1 where the scores are shares (ToG), the maximum otherwise; the top-ups
        get the minimum; a second choice (CGPE's clue per match) is the one that says the gold step
        reaching the candidate. Without gold candidates: none in a filter that may keep none (CGPE),
        else the scripted reply."""
        items = schema["items"]
        props = items["properties"]
        key = next(k for k, sub in props.items() if "enum" in sub)
        options = list(props[key]["enum"])
        if not any(self.on_path(o) for o in options):
            if name in FILTERS and not schema.get("minItems", 0):
                return []
            return scripted.instance(schema, self.prompt, self.question, name)
        chosen = self.pick(options, schema.get("minItems", 0), schema.get("maxItems"), True)
        gold = [c for c in chosen if self.on_path(c)]
        shares = scripted.scored_choice(items)
        cents = [100 // len(gold) + (i < 100 % len(gold)) for i in range(len(gold))]
        out = []
        for choice in chosen:
            share = cents[gold.index(choice)] / 100 if choice in gold else 0.0
            item: dict[str, Any] = {}
            for field, sub in props.items():
                if field == key:
                    item[field] = choice
                elif "enum" in sub:
                    item[field] = self.clue_for(choice, list(sub["enum"]))
                elif sub.get("type") in ("number", "integer"):
                    top = sub.get("maximum", 1) if choice in gold else sub.get("minimum", 0)
                    item[field] = share if shares else top
                else:
                    item[field] = scripted.instance(sub, self.prompt, self.question, field)
            out.append(item)
        return out

    def summaries(self, fixed: list[str], limit: Optional[int]) -> list[str]:
        """A fixed count of texts for the prompt's numbered items (LMP's fact summaries, which
        are all the answer call will see of the facts): each item summarised faithfully, as
        itself cut to ``limit``, and an item holding gold names keeps them at its end. (The
        scripted double's one-line summaries often copy the entity name, which LMP rejects.)"""
        numbered = {int(n): text.strip() for n, text in NUMBERED.findall(self.prompt)}
        if set(numbered) < set(range(1, len(fixed) + 1)):
            return fixed
        out = []
        for i in range(1, len(fixed) + 1):
            text, found = numbered[i], self.gold_names(numbered[i])
            if limit is None or len(text) <= limit:
                out.append(text)
            elif not found:
                out.append(text[:limit])
            else:
                tail = ": " + ", ".join(found)
                out.append((text[: max(0, limit - len(tail))] + tail)[:limit])
        return out

    def reply(self, schema: Optional[dict[str, Any]]) -> str:
        if schema is None:  # a prompted backbone's free text: the papers' {answers}
            return "{" + ", ".join(self.answers() or [UNKNOWN]) + "}"
        return json.dumps(self.value(schema))


class OracleLLM(ScriptedLLM):
    """The scripted double's completion (latency, failures, token counts, max_tokens), with the
    reply chosen by :class:`Judge` from the request's gold hint."""

    name = "oracle"

    def reply(self, messages: list, schema: Optional[dict[str, Any]], params: dict) -> str:
        hint = params.get(GOLD_PARAM)
        if hint is None:
            raise CustomLLMError(status_code=400, message=NO_GOLD)
        return Judge(GoldHint.from_dict(hint), messages).reply(schema)
