"""How the oracle backbone (:mod:`kgx.llm.oracle`) plays Generate-on-Graph (kgx.methods.gog).

GoG's requests are read by their shapes, which ``kgx.methods.gog.prompts`` writes:
- the Thinking step: an object with an ``action`` among Search / Generate / Finish, the
  ``entities`` a Search may read (an enum) and free ``answers``;
- a generation: an array ``generated`` of ``{subject, relation, object}`` strings;
- a verification: an array ``verified`` choosing among the generated triples, each written
  ``(subject, relation, object)``.
The filter and the link are plain choices the oracle already makes (relations ``r`` /
``r (reverse)``, entity ids), and the answer without the KG its plain answer.

Its Thinking: Finish with the gold answers it was shown (as for every method); else Search the
offered entities on the gold path, in the chain's order, or the topic entities not searched yet;
else Generate, where it can (below); else Finish[unknown].

Its knowledge, where it generates, is the question's gold chain (:class:`GoldHint`): from the deepest
gold entity the prompt shows, the chain's next step, to the gold entities the hint places one hop
deeper (the gold answers at the chain's last step), written in the KG's direction. It generates
nothing for a question whose gold answer is not within the method's depth in the whole KG
(``GoldHint.reachable`` is computed there, not in a ``kg.drop`` view): it never makes up a triple
the gold path does not hold. Which entity of the next depth a given one links to is the KG's, which
the hint does not carry: a generated triple may join a film to another gold director of the same
question, an answer that is gold all the same. A generated answer counts as shown only once GoG links
it to the KG (``kg.search`` returns the gold entity), as any KG text a method retrieves.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Protocol

from kgx.core.metrics import normalize
from kgx.diagnose.gold_path import GoldHint, Step


class Judge(Protocol):
    """What GoG's replies read of the oracle's view of a request (:class:`kgx.llm.oracle.Judge`)."""

    gold: GoldHint
    shown: str
    chains: list[list[Step]]
    relations: set[Step]

    def answers(self) -> list[str]: ...
    def on_path(self, candidate: Any) -> bool: ...
    def has(self, text: str, alias: str) -> bool: ...
    def gold_names(self, text: str) -> list[str]: ...
    def pick(self, options: list[Any], low: int, high: Optional[int], focused: bool, name: str = "") -> list[Any]: ...


ACTIONS = frozenset({"Search", "Generate", "Finish"})
UNKNOWN = "unknown"
NODE = re.compile(r"^[mg]\.[0-9a-z_]+$")  # an id among the hint's entity names and ids


def reply(judge: Judge, schema: dict[str, Any], name: str) -> Optional[Any]:
    """The oracle's value for a GoG request's ``schema``; None for any other request."""
    props = schema.get("properties", {})
    actions = set(props.get("action", {}).get("enum", ()))
    if schema.get("type") == "object" and actions and actions <= ACTIONS:
        return thinking(judge, props)
    if name == "generated" and schema.get("type") == "array":
        return generated(judge, schema.get("maxItems"))
    if name == "verified" and "enum" in schema.get("items", {}):
        return verified(judge, list(schema["items"]["enum"]), schema.get("maxItems"))
    return None


def thinking(judge: Judge, props: dict[str, Any]) -> dict[str, Any]:
    actions = props["action"]["enum"]
    entities = props.get("entities", {})
    options = list(entities.get("items", {}).get("enum", []))
    shown = judge.answers()
    gold = [o for o in options if judge.on_path(o)]
    topics = [o for o in options if normalize(o) in {normalize(t) for t in judge.gold.topics}]
    if shown and "Finish" in actions:
        return step("The triples read give the answer.", "Finish", [], shown[: props["answers"].get("maxItems")])
    if (gold or topics) and "Search" in actions:
        most = entities.get("maxItems")
        chosen = judge.pick(options, 1, most, True) if gold else topics[:most]
        return step(f"I need the triples of {' and '.join(chosen)}.", "Search", chosen, [])
    lead = standing(judge)
    if lead and "Generate" in actions and missing(judge, *lead):
        subject, depth = lead
        relations = sorted({r for r, _ in next_steps(judge, depth)})
        return step(f"The triples lack the {' or '.join(relations)} of {subject}.", "Generate", [], [])
    return step("The triples read do not answer the question.", "Finish", [], [UNKNOWN])


def step(thought: str, action: str, entities: list[str], answers: list[str]) -> dict[str, Any]:
    return {"thought": thought, "action": action, "entities": entities, "answers": answers}


def standing(judge: Judge) -> Optional[tuple[str, int]]:
    """The deepest gold entity the prompt shows, by name, with its depth (topic entities 0)."""
    shown = [
        (depth, name)
        for name, depth in judge.gold.depths.items()
        if not NODE.match(name) and judge.has(judge.shown, name)
    ]
    if not shown:
        return None
    depth, name = max(shown, key=lambda s: (s[0], s[1]))
    return name, depth


def next_steps(judge: Judge, depth: int) -> list[tuple[str, str]]:
    """The chains' steps from ``depth`` to the next one."""
    return list(dict.fromkeys(chain[depth] for chain in judge.chains if len(chain) > depth))


def deeper(judge: Judge, depth: int, last: bool) -> list[str]:
    """The gold entities one hop past ``depth`` by name (no unnamed node: no KG names one, so none is
    linked), the gold answers after a chain's last step."""
    if last:
        return [group[0] for group in judge.gold.answers if group]
    return sorted(n for n, d in judge.gold.depths.items() if d == depth + 1 and named(n))


def named(label: str) -> bool:
    """A gold entity a generated triple can name: not an id, nor an unnamed (CVT) node's attributes."""
    return not NODE.match(label) and not (label.startswith("(") and label.endswith(")"))


def missing(judge: Judge, subject: str, depth: int) -> list[tuple[str, str, str]]:
    """The gold-path triples from ``subject`` (at ``depth``) one hop on, in the KG's direction;
    none where no gold answer is within the method's depth in the whole KG."""
    if judge.gold.reachable is not True:
        return []
    out: list[tuple[str, str, str]] = []
    for chain in judge.chains:
        if len(chain) <= depth:
            continue
        relation, direction = chain[depth]
        for obj in deeper(judge, depth, depth + 1 == len(chain)):
            triple = (subject, relation, obj) if direction == "out" else (obj, relation, subject)
            if triple not in out and normalize(obj) != normalize(subject):
                out.append(triple)
    return out


def generated(judge: Judge, high: Optional[int]) -> list[dict[str, str]]:
    """The gold-path triples the prompt's deepest gold entity lacks, at most ``high``."""
    lead = standing(judge)
    triples = missing(judge, *lead) if lead else []
    return [{"subject": s, "relation": r, "object": o} for s, r, o in triples[:high]]


def verified(judge: Judge, options: list[str], high: Optional[int]) -> list[str]:
    """The generated triples on the gold path: ``(subject, relation, object)`` with a gold relation
    between two gold names (topic entities, gold-path entities, gold answers)."""
    gold = {normalize(n) for n in [*judge.gold.topics, *judge.gold.entities, *judge.gold.shown]}
    gold |= {normalize(a) for group in judge.gold.answers for a in group}
    kept = []
    for option in options:
        for relation, _ in sorted(judge.relations):
            subject, found, obj = option[1:-1].partition(f", {relation}, ")
            if found and normalize(subject) in gold and normalize(obj) in gold:
                kept.append(option)
                break
    return kept[:high]
