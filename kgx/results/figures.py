"""A run's figures, from its per-question records.

The usage of a run is the sum of its records' usage objects (``Usage`` and ``KGUsage`` add up),
so every figure below is one sum or one mean over typed fields.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Optional

from kgx.core.gold import scorable
from kgx.core.metrics import QUESTION_METRICS
from kgx.core.usage import KGUsage, Usage
from kgx.diagnose.breakdown import CATEGORIES, KG_ONLY
from kgx.results.record import Record


def p95(values: Sequence[float]) -> float:
    """Nearest-rank 95th percentile."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def summarize(
    records: Sequence[Record], wall_s: float, spent: Sequence[Record] = (), unsettled: Optional[Usage] = None
) -> dict[str, float]:
    """The run's figures.

    Accuracy metrics are percentages over every question, errors included, as the papers'
    tables report them; a question without a gold answer (empty or null answers in its file)
    counts too, scoring 0, and ``no_gold`` says how many there are. Per-question figures are
    means over questions. ``cost_usd`` is NaN when any billed call had no known price: an
    unknown cost is not a zero cost.
    ``billed_calls``/``cached_calls`` count calls that reached the provider or the cache, and
    ``billed_tokens`` the tokens of billed calls only (the per-question token means count all).
    ``llm_calls_per_q.<stage>`` and ``total_tokens_per_q.<stage>`` split the means by stage.
    ``replies_cut``, ``unstorable_chars`` and ``secrets_redacted`` count what the text boundary
    changed in replies (kgx.core.boundary): cut at ``llm.max_reply_chars``, lone surrogates
    replaced, echoed secrets removed.
    ``fallback_rate`` is the percentage of questions a method answered without its KG evidence
    (status ``fallback``); ``kg_capped_per_q`` counts KG results a method cut to its cap.
    ``entities_shown_per_q``, ``unnamed_entity_share`` and ``bare_entity_share`` (KG methods) are
    the entities a method showed the model per question, and the % of them that had no name or
    were shown as a bare id (kgx.kg.metered), pooled over the run's questions.
    ``kg_dropped_per_q`` and ``kg_dropped_share`` say what ``kg.drop`` removed (:func:`drop_figures`).
    ``stat.<name>`` is the mean over questions of a method's own figure (missing counts as 0), so a
    0/1 figure such as ``stat.ended_clue_coverage`` reads as a share.
    ``spent`` are earlier records a rerun replaced (questions that had ended in an error): what
    they paid for is part of ``billed_calls``, ``billed_tokens`` and ``cost_usd``, and of nothing
    else; so is ``unsettled``, what questions in flight at a kill paid for (kgx.results.billing).
    ``errors`` counts questions whose record is an error, ``errors.infra`` those of them
    whose infrastructure failed (kgx.core.faults). ``reachable``, ``reach.*`` and ``failure.<category>``
    (shares in %) are the failure breakdown's (kgx.diagnose.breakdown).
    """
    n = len(records)

    def mean(total: float) -> float:
        return total / n if n else 0.0

    out: dict[str, float] = {name: 100.0 * mean(sum(r.scores[name] for r in records)) for name in QUESTION_METRICS}
    used = sum((r.usage for r in records), Usage())
    paid = used + sum((r.usage for r in spent), Usage()) + (unsettled or Usage())
    kg = sum((r.kg for r in records), KGUsage())
    latencies = [r.latency_s for r in records]
    out.update(
        {
            "llm_calls_per_q": mean(used.calls),
            "input_tokens_per_q": mean(used.input_tokens),
            "output_tokens_per_q": mean(used.output_tokens),
            "total_tokens_per_q": mean(used.total_tokens),
            "latency_s_per_q": mean(sum(latencies)),
            "latency_s_p95": p95(latencies),
            "cost_usd": float("nan") if paid.cost is None else paid.cost,
            "billed_calls": float(paid.billed_calls),
            "cached_calls": float(used.cached_calls),
            "billed_tokens": float(paid.billed_input_tokens + paid.billed_output_tokens),
            "parse_failures": float(used.parse_failures),
            "truncated": float(used.truncated),
            "replies_cut": float(used.replies_cut),
            "unstorable_chars": float(used.unstorable_chars),
            "secrets_redacted": float(used.secrets_redacted),
            "retries": float(used.retries),
            "kg_queries_per_q": mean(kg.queries),
            "kg_latency_s_per_q": mean(kg.latency_s),
            "kg_capped_per_q": mean(kg.capped),
            "fallback_rate": 100.0 * mean(sum(r.status == "fallback" for r in records)),
            "errors": float(sum(r.failed for r in records)),
            "errors.infra": float(sum(bool(r.failure and r.failure.infra) for r in records)),
            "n_questions": float(n),
            "no_gold": float(sum(not scorable(r.gold) for r in records)),
            "wall_s": wall_s,
        }
    )
    out.update(name_figures(kg, n))
    out.update(drop_figures(kg, n))
    out.update(reach_figures(records))
    out.update(shares(records))
    for key in sorted({k for r in records for k in r.prediction.stats}):
        out[f"stat.{key}"] = mean(sum(r.prediction.stats.get(key, 0.0) for r in records))
    for stage in sorted({stage for r in records for stage in r.stages}):
        stage_usage = sum((r.stages[stage] for r in records if stage in r.stages), Usage())
        out[f"llm_calls_per_q.{stage}"] = mean(stage_usage.calls)
        out[f"total_tokens_per_q.{stage}"] = mean(stage_usage.total_tokens)
    return out


def shares(records: Sequence[Record]) -> dict[str, float]:
    """``failure.<category>`` in % of the classified questions; the KG-only categories only when
    the run's method reads a KG (a record with ``reach``), so io/cot/sc log five, not eight."""
    classified = [(r, c) for r in records if (c := r.breakdown)]
    if not classified:
        return {}
    counts = Counter(c for _, c in classified)
    uses_kg = any(r.reach is not None for r, _ in classified)
    n = len(classified)
    return {f"failure.{c}": 100.0 * counts[c] / n for c in CATEGORIES if uses_kg or c not in KG_ONLY}


def name_figures(kg: KGUsage, n: int) -> dict[str, float]:
    """How many entities the run showed per question and the % without a name (of all entities
    shown, pooled over questions); nothing for a run that showed none (io, cot, sc)."""
    if not kg.entities:
        return {}
    return {
        "entities_shown_per_q": kg.entities / n,
        "unnamed_entity_share": 100.0 * kg.unnamed / kg.entities,
        "bare_entity_share": 100.0 * kg.bare / kg.entities,
    }


def drop_figures(kg: KGUsage, n: int) -> dict[str, float]:
    """Under ``kg.drop`` (kgx.diagnose.crucial): the triples removed per question (GoG Table 6's
    figure) and the share of the crucial pairs removed, pooled (the drop share achieved); nothing
    for a run on the whole KG."""
    if not kg.crucial:
        return {}
    return {"kg_dropped_per_q": kg.dropped / n, "kg_dropped_share": 100.0 * kg.cut / kg.crucial}


def reach_figures(records: Sequence[Record]) -> dict[str, float]:
    """``reachable`` (% of the questions whose reachability is known), how many are unknown, and
    what computing it cost: KG queries per question and in all (0 for a cached answer), and the
    seconds the checks took, added up over questions (a cold cache's cost before the method runs)."""
    reached = [r.reach for r in records if r.reach is not None]
    if not reached:
        return {}
    known = [x for x in reached if x.reachable is not None]
    return {
        "reachable": 100.0 * sum(bool(x.reachable) for x in known) / len(known) if known else float("nan"),
        "reach.unknown": float(len(reached) - len(known)),
        "reach.kg_queries_per_q": sum(x.queries for x in reached) / len(reached),
        "reach.queries": float(sum(x.queries for x in reached)),
        "reach.wall_s": sum(x.seconds for x in reached),
    }
