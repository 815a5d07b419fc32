"""The plumbing every KGQA method shares, written once, so that a method file reads as its
paper's algorithm.

- :class:`Hop`: a relation walked from an entity in one direction, and the triple it stands for;
- :func:`ask`: one structured call under the method's retry policy, with a noted fallback when
  the output stays invalid (the papers' "if the LLM fails, ..." branches);
- :func:`pick` and :func:`choose`: the model chooses among candidates; anything else it names is
  discarded and counted as a parse failure, never silently used;
- :func:`cap`: one way to cut a candidate list, always recorded in the trace;
- :func:`triple_text` and :func:`picture`: evidence strings and explanation graphs.

The answer format every method shares (schemas, cleaning, the final answer call) is
:mod:`kgx.methods.answers`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, TypeVar, Union

from kgx.core.graph import Edge, Graph, Node
from kgx.core.metrics import normalize
from kgx.kg.freebase import Direction
from kgx.llm.errors import OutputError
from kgx.llm.messages import Messages

if TYPE_CHECKING:
    from kgx.methods.base import Context

T = TypeVar("T")


# --------------------------------------------------------------------------- hops


@dataclass(frozen=True)
class Hop:
    """A relation at an entity and the way it is walked: ``out`` from the subject to the object,
    ``in`` (shown ``(reverse)``) from the object back to the subject. Both ways are offered to
    the model because a question's path may run against the KG's edges."""

    relation: str
    direction: Direction

    @property
    def label(self) -> str:
        return self.relation if self.direction == "out" else f"{self.relation} (reverse)"

    @property
    def arrow(self) -> str:
        return "->" if self.direction == "out" else "<-"

    def reverse(self) -> "Hop":
        return Hop(self.relation, "in" if self.direction == "out" else "out")

    def triple(self, here: str, there: str) -> tuple[str, str, str]:
        """(subject, relation, object) in the KG's own direction, walking from ``here`` to ``there``."""
        return (here, self.relation, there) if self.direction == "out" else (there, self.relation, here)


@dataclass(frozen=True)
class Arc:
    """One hop walked: from ``source`` through ``hop`` to ``target`` (ToG's path steps, StructGPT's
    read triples, PoG's links are all this)."""

    source: str
    hop: Hop
    target: str

    def triple(self) -> tuple[str, str, str]:
        return self.hop.triple(self.source, self.target)


def unnamed(label: str) -> bool:
    """``ctx.kg.names`` describes an unnamed (CVT) node as ``(attribute: value; ...)``."""
    return label.startswith("(") and label.endswith(")")


def triple_text(subject: str, relation: str, obj: str) -> str:
    """A triple as evidence and in prompts: ``(subject, relation, object)``; ``answer_recall``
    looks for gold answers in these strings."""
    return f"({subject}, {relation}, {obj})"


# --------------------------------------------------------------------------- asking


def retries(ctx: "Context") -> Optional[int]:
    """The method's ``max_retries``; None leaves the stage backbone's ``llm.parse_retries``."""
    return ctx.params.max_retries


def ask(
    ctx: "Context",
    stage: str,
    messages: Messages,
    *,
    schema: Optional[dict[str, Any]] = None,
    temperature: Optional[float] = None,
    validate: Optional[Callable[[Any], Any]] = None,
    fallback: Union[T, Callable[[OutputError], T]] = None,
    note: str = "",
    max_tokens: Optional[int] = None,
    **data: Any,
) -> Any:
    """One call at ``stage``, retried on invalid output as the client does (temperature up by
    ``llm.retry_temperature_step`` each time, at most the method's ``max_retries``). Output that
    stays invalid gives ``fallback``, after ``note`` (if any) is written to the trace with the
    error; a callable fallback receives the :class:`OutputError` (to salvage its text or raise).
    ``max_tokens`` is the stage's expected reply size: the request asks for at least that much, so a
    long structured reply is not cut at the backbone's default ``llm.max_tokens``."""
    try:
        return ctx.llm(
            stage,
            messages,
            temperature=temperature,
            schema=schema,
            validate=validate,
            retries=retries(ctx),
            max_tokens=max_tokens,
        )
    except OutputError as exc:
        if note:
            ctx.trace.note(stage, note, error=str(exc), **data)
        return fallback(exc) if callable(fallback) else fallback


def pick(
    ctx: "Context",
    stage: str,
    values: Iterable[Any],
    options: Sequence[str],
    why: str,
    limit: Optional[int] = None,
    **data: Any,
) -> list[str]:
    """The distinct ``values`` that are among ``options``, in the reply's order, at most ``limit``;
    every other value is discarded and counted (``ctx.llm.discard``) with ``why``."""
    allowed = set(options)
    kept: dict[str, None] = {}
    for value in values:
        if value in allowed:
            kept[value] = None
        else:
            ctx.llm.discard(stage, why, choice=value, **data)
    out = list(kept)
    return out if limit is None else out[:limit]


def choice_schema(offers: dict[str, list[str]], low: int, high: int) -> dict[str, Any]:
    """Per key, a list of ``low`` to ``high`` distinct-looking items among that key's options."""
    return {
        "type": "object",
        "required": list(offers),
        "properties": {
            key: {
                "type": "array",
                "items": {"enum": options},
                "minItems": min(low, len(options)),
                "maxItems": min(high, len(options)),
            }
            for key, options in offers.items()
        },
    }


def choose(
    ctx: "Context",
    stage: str,
    messages: Messages,
    offers: dict[str, list[str]],
    *,
    high: int,
    low: int = 1,
    temperature: Optional[float] = None,
    note: str = "nothing chosen",
    why: str = "not among the candidates",
    retries_: Optional[int] = None,
) -> dict[str, list[str]]:
    """One call choosing, per key of ``offers``, ``low`` to ``high`` of that key's candidates. The
    schema constrains each list; a choice outside it (a prompted backbone may still name one) is
    discarded and counted, a repeat kept once. Output that stays invalid chooses nothing.
    ``retries_`` overrides the retry policy (a method with its own re-asking loop passes 0)."""

    def valid(reply: Any) -> dict[str, list[str]]:
        return {
            key: pick(ctx, stage, reply.get(key, []), options, why, high, key=key) for key, options in offers.items()
        }

    try:
        return ctx.llm(
            stage,
            messages,
            temperature=temperature,
            schema=choice_schema(offers, low, high),
            validate=valid,
            retries=retries(ctx) if retries_ is None else retries_,
        )
    except OutputError as exc:
        ctx.trace.note(stage, note, error=str(exc))
        return {}


def cap(ctx: "Context", stage: str, items: list[T], limit: Optional[int], what: str, **data: Any) -> list[T]:
    """``items`` cut to ``limit`` (a prompt budget); a cut is always noted with the totals."""
    if limit is None or len(items) <= limit:
        return items
    ctx.trace.note(stage, f"{what} capped", total=len(items), kept=limit, **data)
    return items[:limit]


def few_shot(system: str, examples: Iterable[tuple[str, Any]], content: str) -> Messages:
    """A system prompt, worked examples as user/assistant turns (the assistant's reply as the JSON
    the schema asks for), then the real request: the published prompts' one-example-per-stage form."""
    out = [{"role": "system", "content": system}]
    for text, reply in examples:
        out += [{"role": "user", "content": text}, {"role": "assistant", "content": json.dumps(reply)}]
    return out + [{"role": "user", "content": content}]


# --------------------------------------------------------------------------- explanations


def picture(
    title: str,
    triples: Iterable[tuple[str, str, str]],
    names: dict[str, str],
    depth: dict[str, int],
    topics: Iterable[str],
    answers: Iterable[str] = (),
    text: str = "",
    side: Optional[list[str]] = None,
) -> Graph:
    """The explored subgraph as kgx draws it: entities as nodes at their hop from a topic entity,
    relations as arrows in the KG's direction (parallel relations share one arrow), topic
    entities and named answers marked."""
    wanted = {normalize(a) for a in answers}
    tops = set(topics)
    graph = Graph(title=title, text=text, side=list(side or []))
    for entity, hops in depth.items():
        label = names.get(entity, entity)
        role = "topic" if entity in tops else "answer" if normalize(label) in wanted else ""
        graph.nodes.append(Node(entity, label, hops, role))
    arrows: dict[tuple[str, str], list[str]] = {}
    for subject, relation, obj in triples:
        labels = arrows.setdefault((subject, obj), [])
        if relation not in labels:
            labels.append(relation)
    graph.edges = [Edge(s, o, "; ".join(labels)) for (s, o), labels in arrows.items()]
    return graph
