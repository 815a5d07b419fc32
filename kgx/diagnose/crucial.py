"""Incomplete KGs as an axis for every method: ``kg.drop`` removes each question's crucial triples.

GoG (Xu et al., EMNLP 2024, Sec. 4.2, Algorithm 1) builds its incomplete KGs (IKG-20% ... IKG-80%)
by binding each question's gold SPARQL in the KG and removing each entity-to-entity edge of the
bound gold path with probability p, together with every other triple between the same two
entities (Sec. 6.1: "all relations between these two entities will also be deleted"); literals
are never dropped. kgx does the same from the dataset's gold relation chain
(:mod:`kgx.diagnose.gold_path`), walked in the whole KG toward the gold answers
(:func:`kgx.diagnose.chain_walk.on_chain`): the crucial pairs are the linked nodes of consecutive
steps of that walk. Each pair is removed when its seeded draw falls below ``kg.drop``: the same
pair is removed for every question of a run that meets it, and the same seed removes the same
pairs on every machine. The question's method then reads a view without those pairs
(:meth:`kgx.kg.sparql.SparqlKG.without`); the store is never changed.

The seed is ``kg.drop_seed``, or ``run.seed`` when it is null. A dataset that gives no gold
chain for a question (CWQ, WebQSP, the RoG sets) cannot say which triples are crucial: a run
with ``kg.drop`` > 0 on it is refused before any question (:func:`check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from kgx.core.config_checks import ConfigError
from kgx.core.kg_config import KGConfig
from kgx.core.trace import Trace
from kgx.core.types import Question
from kgx.core.usage import KGUsage
from kgx.diagnose.chain_walk import on_chain
from kgx.diagnose.gold_nodes import gold_nodes
from kgx.diagnose.gold_path import chains
from kgx.kg.freebase import is_literal
from kgx.kg.noise import draw, pair
from kgx.kg.sparql import SparqlKG

Pair = tuple[str, str]


@dataclass(frozen=True)
class Cut:
    """A question's KG under ``kg.drop``: the view its method reads, the crucial pairs of its gold
    path, the pairs removed and the triples they held (every relation, both ways)."""

    kg: SparqlKG
    crucial: int = 0
    removed: tuple[Pair, ...] = ()
    triples: int = 0


def seed_of(cfg: KGConfig, run_seed: int) -> int:
    """The seed of the draws: ``kg.drop_seed``, else the run's seed."""
    return run_seed if cfg.drop_seed is None else cfg.drop_seed


def crucial_pairs(question: Question, kg: SparqlKG, kg_format: str) -> list[Pair]:
    """The entity pairs linked by a step of the question's gold chains, walked in ``kg`` from its
    topic entities toward its gold answers; none without a chain or a gold answer in ``kg``."""
    gold = set(gold_nodes(kg, question).ids)
    found: set[Pair] = set()
    for steps in chains(question, kg_format) or []:
        layers = on_chain(kg, list(question.topic_entities), steps, gold)
        for depth, (relation, direction) in enumerate(steps):
            for node in sorted(layers[depth]):
                if is_literal(node):
                    continue
                ends = set(kg.neighbors(node, relation, direction)) & layers[depth + 1]
                found.update(pair(node, end) for end in ends if not is_literal(end) and end != node)
    return sorted(found)


def triples_between(kg: SparqlKG, pairs: Sequence[Pair]) -> int:
    """The triples between the entities of each pair, whichever way they point (one batched
    query: the out-edges of both ends)."""
    wanted = set(pairs)
    ends = sorted({x for p in pairs for x in p})
    return sum(1 for node, _, other in kg.edges(ends, "out") if pair(node, other) in wanted)


def cut(question: Question, kg: SparqlKG, cfg: KGConfig, run_seed: int) -> Cut:
    """The view of ``kg`` (the question's whole KG) without the crucial pairs whose draw falls
    below ``kg.drop``; ``kg`` itself when nothing is dropped."""
    if cfg.drop <= 0:
        return Cut(kg)
    crucial = crucial_pairs(question, kg, cfg.data_format)
    seed = str(seed_of(cfg, run_seed))
    removed = tuple(p for p in crucial if cfg.drop >= 1.0 or draw(seed, "drop", *p) < cfg.drop)
    if not removed:
        return Cut(kg, len(crucial))
    return Cut(kg.without(frozenset(removed)), len(crucial), removed, triples_between(kg, removed))


def check(cfg: KGConfig, dataset: str, questions: Sequence[Question]) -> None:
    """Refuse ``kg.drop`` > 0 where a question has no gold chain in the KG's format: which of its
    triples are crucial is unknown there."""
    if cfg.drop <= 0:
        return
    missing = [q for q in questions if not chains(q, cfg.data_format)]
    if missing:
        raise ConfigError(
            f"kg.drop={cfg.drop}: {len(missing)} of {len(questions)} questions of dataset '{dataset}' have no "
            f"gold path in kg '{cfg.name}' (format {cfg.data_format}), e.g. {missing[0].id}; kg.drop removes a "
            "question's gold-path triples, which MetaQA's question types and PathQuestion's and WC2014's paths "
            "give (CWQ, WebQSP and the RoG sets give none): use kg.drop=0 there, or kg.noise for random damage"
        )


def record(cut: Cut, usage: KGUsage, trace: Trace) -> None:
    """What ``kg.drop`` removed for the question: counted in its KG usage (the run's
    ``kg_dropped_per_q`` and ``kg_dropped_share``) and noted in its trace with the pairs."""
    usage.crucial, usage.cut, usage.dropped = cut.crucial, len(cut.removed), cut.triples
    if cut.crucial:
        trace.note(
            "kg",
            f"kg.drop: {len(cut.removed)} of {cut.crucial} crucial entity pairs removed ({cut.triples} triples)",
            removed=[list(p) for p in cut.removed],
        )
