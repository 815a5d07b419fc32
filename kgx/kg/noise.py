"""Seeded damage to a KG, applied as it is read: random (``kg.noise``, LMP Table 3) or the
edges between given entity pairs (``kg.drop``, GoG's incomplete KGs). Every backend reads its KG
through :class:`kgx.kg.sparql.SparqlKG`, which filters what a query returned by :class:`Noise`;
the store and the result cache keep the whole KG."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Noise:
    """Seeded damage for robustness studies (LMP Table 3): the same seed drops the same edges.
    ``cut`` removes every edge between given pairs of entities: a question's crucial triples under
    ``kg.drop`` (GoG's incomplete KGs, kgx.diagnose.crucial), both directions and every relation, as
    GoG drops them."""

    drop_relations: float = 0.0  # share of edges removed
    drop_names: float = 0.0  # share of entities whose names are removed
    seed: int = 0
    cut: frozenset[tuple[str, str]] = frozenset()  # entity pairs (sorted) with no edge left between them

    def _draw(self, *parts: str) -> float:
        return draw(str(self.seed), *parts)

    @property
    def cuts_edges(self) -> bool:
        """Whether any edge is removed: at random, or between the ``cut`` pairs."""
        return self.drop_relations > 0 or bool(self.cut)

    def drops_edge(self, subject: str, relation: str, obj: str) -> bool:
        if self.cut and pair(subject, obj) in self.cut:
            return True
        return self.drop_relations > 0 and self._draw("edge", subject, relation, obj) < self.drop_relations

    def drops_name(self, entity: str) -> bool:
        return self.drop_names > 0 and self._draw("name", entity) < self.drop_names


def draw(*parts: str) -> float:
    """A number in [0, 1] fixed by ``parts``: the same parts draw the same on every machine."""
    blob = "\x1f".join(parts).encode()
    return int(hashlib.sha256(blob).hexdigest()[:12], 16) / float(0xFFFFFFFFFFFF)


def pair(a: str, b: str) -> tuple[str, str]:
    """Two entities as an unordered pair: an edge between them, whichever way it points."""
    return (a, b) if a <= b else (b, a)
