"""StructGPT's KG interfaces and its linearisation of what they return (Jiang et al., 2023, Sec. 4.3;
released ``KnowledgeBase/KG_sparse_api.py`` and ``Solver.serialize_facts``).

- ``Extract_Neighbor_Relations(e)``: the relations around the current entities, both directions,
  without the way back to where an entity was reached from, without the ``type.*``/``common.*``
  schema relations the released code filters (GraftNet's rule);
- ``Extract_Triples(e, r)``: the triples of the chosen relation at the current entities; an unnamed
  (CVT) node reached is read one hop further, as the released code does, so a fact held by a CVT
  (a position with its dates) arrives whole;
- linearisation: ``(head, relation, tail)`` per triple; a CVT is named ``CVT_0``, ``CVT_1``, ... and
  its attribute triples follow the triple that reached it on the same line; the text is cut at a
  word budget (released ``max_llm_input_tokens``, counted in whitespace words), the cut noted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kgx.kg.freebase import DIRECTIONS, is_literal
from kgx.methods import kit
from kgx.methods.kit import Arc, Hop

if TYPE_CHECKING:
    from kgx.methods.base import Context


def ignored(relation: str) -> bool:
    """The released relation filter (GraftNet's criteria): schema relations of the ``type`` and
    ``common`` domains, except ``common.topic.notable_types``."""
    return relation != "common.topic.notable_types" and relation.split(".")[0] in ("type", "common")


@dataclass
class Reading:
    """What ``Extract_Triples`` returned at one step: the arcs from the current entities, and per
    unnamed (CVT) node reached its attribute arcs."""

    arcs: list[Arc] = field(default_factory=list)
    attributes: dict[str, list[Arc]] = field(default_factory=dict)

    def all_arcs(self) -> list[Arc]:
        return [*self.arcs, *(a for arcs in self.attributes.values() for a in arcs)]

    def tails(self) -> list[str]:
        """The entities the next step starts from: those reached, a CVT's values in its place
        (the released ``get_facts_1hop`` tails); literal values cannot be walked from."""
        out: list[str] = []
        for arc in self.arcs:
            targets = [a.target for a in self.attributes[arc.target]] if arc.target in self.attributes else [arc.target]
            out += [t for t in targets if not is_literal(t)]
        return list(dict.fromkeys(out))

    def keep_cvts(self, kept: set[str]) -> None:
        """Only the CVTs in ``kept`` (and the arcs reaching them) stay."""
        self.arcs = [a for a in self.arcs if a.target not in self.attributes or a.target in kept]
        self.attributes = {c: arcs for c, arcs in self.attributes.items() if c in kept}


def neighbor_relations(
    ctx: "Context", entities: list[str], back: dict[str, set[Hop]], limit: int, stage: str
) -> dict[str, list[Hop]]:
    """Extract_Neighbor_Relations: per current entity, its relations both ways, without the way
    back and the filtered schema relations. An entity that is not a KG id is noted and skipped."""
    out: dict[str, list[Hop]] = {}
    for entity in entities:
        try:
            hops = [Hop(r, d) for d in DIRECTIONS for r in sorted(ctx.kg.relations(entity, d, limit=limit))]
        except ValueError as exc:
            ctx.trace.note(stage, f"cannot read the relations of {entity}: {exc}", entity=entity)
            continue
        hops = [h for h in hops if h not in back.get(entity, set())]
        if ctx.params.filter_relations:
            hops = [h for h in hops if not ignored(h.relation)]
        out[entity] = hops
    return out


def extract_triples(
    ctx: "Context", at: dict[str, list[Hop]], chosen: list[Hop], names: dict[str, str], limit: int
) -> Reading:
    """Extract_Triples: the chosen relations at every current entity that has them, each
    (entity, relation) capped at ``limit`` triples; CVT nodes reached are read one hop further."""
    reading = Reading()
    for entity, hops in at.items():
        for hop in (h for h in chosen if h in hops):
            reached = ctx.kg.neighbors(entity, hop.relation, hop.direction, limit=limit)
            reading.arcs += [Arc(entity, hop, x) for x in dict.fromkeys(reached)]
    fresh = [a.target for a in reading.arcs if not is_literal(a.target) and a.target not in names]
    if fresh:
        names.update(ctx.kg.names(list(dict.fromkeys(fresh))))
    for arc in reading.arcs:
        if arc.target not in reading.attributes and kit.unnamed(names.get(arc.target, arc.target)):
            reading.attributes[arc.target] = cvt_attributes(ctx, arc, names, limit)
    return reading


def cvt_attributes(ctx: "Context", arc: Arc, names: dict[str, str], limit: int) -> list[Arc]:
    """The attributes of an unnamed node: every relation but the one it was reached by, and no
    value that is the entity it was reached from (a CVT's inverse relations lead back to it)."""
    cvt, out = arc.target, []
    for d in DIRECTIONS:
        for relation in sorted(ctx.kg.relations(cvt, d, limit=limit)):
            hop = Hop(relation, d)
            if hop != arc.hop.reverse() and not (ctx.params.filter_relations and ignored(relation)):
                out += [Arc(cvt, hop, x) for x in ctx.kg.neighbors(cvt, relation, d, limit=limit) if x != arc.source]
    values = [a.target for a in out if not is_literal(a.target) and a.target not in names]
    if values:
        names.update(ctx.kg.names(list(dict.fromkeys(values))))
    return out


def constraint_values(reading: Reading, names: dict[str, str], most: int) -> dict[str, list[str]]:
    """Per attribute relation of the CVTs read, the distinct values they hold (at most ``most``)."""
    values: dict[str, list[str]] = {}
    for arcs in reading.attributes.values():
        for arc in arcs:
            shown = values.setdefault(arc.hop.label, [])
            name = names.get(arc.target, arc.target)
            if name not in shown and len(shown) < most:
                shown.append(name)
    return {relation: shown for relation, shown in values.items() if len(shown) > 1}


def matching_cvts(reading: Reading, chosen: dict[str, list[str]], names: dict[str, str]) -> set[str]:
    """The released ``filter_triples`` rule: a CVT stays when it has at least one constrained
    attribute and every constrained attribute it has holds a chosen value."""
    kept = set()
    for cvt, arcs in reading.attributes.items():
        pinned = [a for a in arcs if chosen.get(a.hop.label)]
        if pinned and all(names.get(a.target, a.target) in chosen[a.hop.label] for a in pinned):
            kept.add(cvt)
    return kept


def linearize(ctx: "Context", reading: Reading, names: dict[str, str], budget: int, stage: str) -> list[str]:
    """The released serialisation: one line per triple reached, a CVT's attributes on the line of
    the triple that reached it, cut when the text would pass ``budget`` words (noted)."""
    label = dict(names)
    for i, cvt in enumerate(reading.attributes):
        label[cvt] = f"CVT_{i}"
    lines: list[str] = []
    for arc in reading.arcs:
        attributes = reading.attributes.get(arc.target)
        if attributes == []:
            continue  # a CVT with nothing to say
        parts = [arc, *(attributes or [])]
        lines.append(", ".join(kit.triple_text(*(label.get(x, x) for x in a.triple())) for a in parts))
    words, kept = 0, []
    for line in dict.fromkeys(lines):
        words += len(line.split())
        if words > budget:
            ctx.trace.note(stage, "triples cut at the word budget", total=len(lines), kept=len(kept), budget=budget)
            break
        kept.append(line)
    return kept
