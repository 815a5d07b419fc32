"""An oracle backbone for method ceilings (litellm provider ``kgx-oracle``, ``llm=oracle``).

A test double like the scripted one (:mod:`kgx.llm.scripted`) that also knows the question's gold
path (:class:`kgx.diagnose.gold_path.GoldHint`, sent with each request by the client; a dataset's
path comes without its round trips). At every choice it takes the offered candidates on a gold
path, in the chain's order: first the next unwalked step of the chain from where the prompt stands
(the relation in the direction the chain walks it, or the entity that step reaches), then the later
steps, then the earlier ones; a gold answer is also a candidate whose value states the gold's
(``7.69202e+06`` for ``7692024``, the scorer's rule). It calls the evidence sufficient only when
it was shown a gold answer, and answers with the gold answers it was shown; "shown" means a KG
text the method retrieved that states a gold answer stands in the prompt
(:mod:`kgx.llm.oracle_evidence`), never the prompt's own words nor a longer name holding the
gold, and never where no gold answer is within the method's depth (``GoldHint.reachable``).
A run with it measures how far a method's own search can get: its choices are constrained
like any model's (only offered candidates, within the schema's counts), and it is metered like the
scripted backbone (real token counts, the same simulated latency and failures). Whatever the gold
does not decide (reasoning text, sub-objectives, notes) is the scripted reply, except where free
text feeds the search or the answer: CGPE's clues, written freely, follow the KG's names
(:mod:`kgx.llm.oracle_clues`); LMP's fact summaries keep the gold names of the facts they summarise;
FiDeLiS's retrieval keywords are the gold chains' relations, and its next steps
``(relation, entity)`` go by their entity first (:mod:`kgx.llm.oracle_fidelis`).

What the oracle was shown is the request's last message (worked examples are earlier turns),
its ``Question:`` line excluded: the question is not evidence. A text is shown when its
normalised form (:func:`kgx.core.metrics.normalize`) stands there as whole words, or, for a
value, when a value written there equals it.

Where a prompt stands on the chain: the deepest gold entity it shows outside its candidates
(the entity a relation list belongs to, the facts or triples read so far; the depth is the hop at
which the gold path first reaches it), or, where the prompt lists the relations already followed
(StructGPT's ``Relations already followed: a -> b``), their count, whichever is further.

How candidates are read, as the methods render them:
- a relation is ``r`` (walked forwards) or ``r (reverse)``; where no message of the request
  mentions ``(reverse)`` (KnowPath lists bare relations, one per id) either direction matches;
- an entity is its name, numbered ``[2]`` or ``#2`` when names repeat;
- CGPE's pairs ``(relation, type)`` and ``(type, name)`` are read part by part;
- Paths-over-Graph's whole paths, listed as ``Path N: ...`` and chosen by label
  (:mod:`kgx.llm.oracle_paths_over_graph`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Optional

from litellm.llms.custom_llm import CustomLLMError

from kgx.core.metrics import normalize
from kgx.core.values import GoldValues, parse, values_in
from kgx.diagnose.gold_path import GoldHint, fold
from kgx.llm import oracle_clues, oracle_fidelis, oracle_gog, oracle_paths_over_graph, scripted
from kgx.llm.oracle_evidence import GoldTexts
from kgx.llm.oracle_gold import GOLD_PARAM, NO_GOLD
from kgx.llm.scripted import ScriptedLLM, question_of, rank

if TYPE_CHECKING:
    pass

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
        self.raw = LIST_NUMBER.sub("", QUESTION_LINE.sub(" ", self.prompt))
        self.shown = f" {normalize(self.raw)} "
        self.texts = GoldTexts(gold.answers)
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
        """The first alias of every gold answer that a KG text the method retrieved states and
        the prompt shows (a longer name holding it blanked out first); none where no gold
        answer is within the method's depth."""
        if self.gold.reachable is False or not self.gold.shown:
            return []
        masked, raw = self.shown, self.raw
        for text in sorted(self.gold.holding, key=len, reverse=True):
            masked = masked.replace(f" {normalize(text)} ", " | ") if normalize(text) else masked
            raw = re.sub(re.escape(text), " | ", raw, flags=re.I)
        written = values_in(raw)
        found: set[int] = set()
        for text in self.gold.shown:
            value = GoldValues([[text]]) if parse(text) is not None else None
            if self.has(masked, text) or (value and any(value.exact(v) for v in written)):
                found |= self.texts.states(text)
        return [group[0] for i, group in enumerate(self.gold.answers) if i in found and group]

    def is_answer(self, view: str) -> bool:
        """Whether a candidate's text is a gold answer: an alias, or a value stating the gold's."""
        return normalize(view) in self.known or bool(self.texts.states(view))

    def gold_names(self, text: str) -> list[str]:
        """The gold-path entity names and answer aliases that ``text`` holds, each once, and none
        that is only part of another ("Yen" within "Japanese yen")."""
        padded, out = f" {normalize(text)} ", {}
        for name in [*self.names, *self.gold.shown]:
            if self.has(padded, name):
                out.setdefault(normalize(name), name)
        return [name for key, name in out.items() if not any(key != k and f" {key} " in f" {k} " for k in out)]

    # ------------------------------------------------------------------ candidates

    def on_path(self, candidate: Any) -> bool:
        """Whether an offered candidate is a gold relation (in its direction) or a gold entity."""
        for view in views(str(candidate)):
            if view in self.ids or self.is_answer(view):
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
            if depth is None and self.is_answer(view):
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
        (CGPE's matchings, ``FILTERS``). Whole paths listed by label are read by
        :mod:`kgx.llm.oracle_paths_over_graph`."""
        paths = oracle_paths_over_graph.listed(self.prompt, options)
        if paths:
            return oracle_paths_over_graph.pick(self, options, paths, low, high)
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
        return oracle_clues.clues(self, hint, high, pattern)

    def has_gold(self, schema: dict[str, Any]) -> bool:
        return any(self.on_path(o) for o in schema.get("items", {}).get("enum", []))

    # ------------------------------------------------------------------ values

    def value(self, schema: dict[str, Any], name: str = "", focused: bool = False) -> Any:
        """A value of ``schema``: the gold decides choices, verdicts and answers; the scripted
        model the rest."""
        if (gog := oracle_gog.reply(self, schema, name)) is not None:  # Generate-on-Graph's own requests
            return gog
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
        if "enum" in items and name in oracle_fidelis.STEPS:
            return oracle_fidelis.steps(self, list(items["enum"]), low, high)
        if "enum" in items:
            return self.pick(list(items["enum"]), low, high, focused, name)
        if items.get("type") == "object" and any("enum" in sub for sub in props.values()):
            return self.choices(schema, name)
        if name == "answers":
            return (self.answers() or ([UNKNOWN] if low else []))[:high]
        fixed = scripted.instance(schema, self.prompt, self.question, name)
        if name in oracle_fidelis.KEYWORDS:
            return oracle_fidelis.keywords(self, fixed, high)
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
                    item[field] = oracle_clues.clue_for(self, choice, list(sub["enum"]))
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
