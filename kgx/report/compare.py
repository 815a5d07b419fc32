"""Two runs question by question: a paired test of whether one is better than the other.

Two runs on the same questions are paired data. McNemar's exact test looks only at the
questions where they disagree; a bootstrap over questions gives an interval on the difference
of means. Both need only the per-question scores in each run's ``predictions.jsonl``.
"""

from __future__ import annotations

import math
import random
import statistics
import tempfile
from dataclasses import dataclass
from typing import Optional

import polars as pl

from kgx.core.metrics import QUESTION_METRICS
from kgx.report.runs import ReportError, client, download, load_run, run_labels
from kgx.results.predlog import PredictionLog


@dataclass(frozen=True)
class Comparison:
    """``a`` and ``b`` on their common questions. A question counts as right when its score is 1
    (the metrics are 0/1, except ``f1``, where only a perfect answer counts); the means and the
    interval use the scores themselves, in percent."""

    metric: str
    n: int
    only_in_a: int  # questions run A answered that B did not (left out)
    only_in_b: int
    both: int
    a_only: int
    b_only: int
    neither: int
    mean_a: float
    mean_b: float
    p_value: float  # exact McNemar, two-sided
    ci: tuple[float, float]  # 95% bootstrap interval on mean_a - mean_b
    disagree: list[tuple[str, str]]  # (question id, "A" or "B": the run that was right)

    @property
    def diff(self) -> float:
        return self.mean_a - self.mean_b


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: under "no difference" each discordant question is a
    fair coin, so the smaller count is binomial(a_only + b_only, 1/2); the tail is doubled."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1)) / 2**n
    return min(1.0, 2 * tail)


def bootstrap_ci(diffs: list[float], resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Percentile 95% interval of the mean of ``diffs`` (per-question A - B), resampling
    questions with replacement; seeded, so that a report is reproducible."""
    if resamples < 2:
        raise ReportError(f"resamples={resamples}: a bootstrap interval needs at least 2")
    rng = random.Random(seed)
    means = [statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(resamples)]
    cuts = statistics.quantiles(means, n=40, method="inclusive")  # 2.5%, 5%, ..., 97.5%
    return cuts[0], cuts[-1]


def compare_scores(
    a: dict[str, float], b: dict[str, float], metric: str = "hits1", resamples: int = 2000, seed: int = 0
) -> Comparison:
    """Compare per-question scores (question id -> score in [0, 1]) on their common ids."""
    common = sorted(a.keys() & b.keys())
    if not common:
        raise ReportError("the two runs have no question id in common")
    right_a = {q: a[q] >= 1.0 for q in common}
    right_b = {q: b[q] >= 1.0 for q in common}
    counts = [
        sum(right_a[q] == x and right_b[q] == y for q in common)
        for x, y in ((True, True), (True, False), (False, True), (False, False))
    ]
    disagree = [(q, "A" if right_a[q] else "B") for q in common if right_a[q] != right_b[q]]
    diffs = [100.0 * (a[q] - b[q]) for q in common]
    return Comparison(
        metric,
        len(common),
        len(a.keys() - b.keys()),
        len(b.keys() - a.keys()),
        *counts,
        mean_a=100.0 * statistics.fmean(a[q] for q in common),
        mean_b=100.0 * statistics.fmean(b[q] for q in common),
        p_value=mcnemar_exact(counts[1], counts[2]),
        ci=bootstrap_ci(diffs, resamples, seed),
        disagree=disagree,
    )


def question_scores(run_id: str, metric: str = "hits1", uri: Optional[str] = None) -> dict[str, float]:
    """Question id -> ``metric`` score, from the run's ``predictions.jsonl`` artifact (the last
    record of each id, as the run counted it)."""
    if metric not in QUESTION_METRICS:
        raise ReportError(f"'{metric}' is not scored per question; choose one of {list(QUESTION_METRICS)}")
    with tempfile.TemporaryDirectory() as tmp:
        path = download(client(uri), run_id, "predictions.jsonl", tmp)
        return {qid: float(r.scores[metric]) for qid, r in PredictionLog(path).read().latest.items()}


def compare_runs(
    run_a: str, run_b: str, metric: str = "hits1", uri: Optional[str] = None, resamples: int = 2000, seed: int = 0
) -> Comparison:
    return compare_scores(
        question_scores(run_a, metric, uri), question_scores(run_b, metric, uri), metric, resamples, seed
    )


def compare_labels(run_a: str, run_b: str, uri: Optional[str] = None) -> tuple[str, str]:
    """Names for the two runs of a comparison: the method and the params that differ between
    them (``lmp (method.depth=2)`` against ``lmp (method.depth=1)``), not their ids."""
    frame = pl.concat([load_run(run_a, uri), load_run(run_b, uri)], how="diagonal_relaxed")
    a, b = run_labels(frame)
    return a, b


def describe(result: Comparison, show: int = 20) -> str:
    """The comparison as a few lines of text, the first ``show`` disagreements listed."""
    lo, hi = result.ci
    lines = [
        f"questions in common: {result.n} (only in A: {result.only_in_a}, only in B: {result.only_in_b})",
        f"{result.metric}: A {result.mean_a:.1f}  B {result.mean_b:.1f}  A-B {result.diff:+.1f} points, "
        f"95% bootstrap interval [{lo:+.1f}, {hi:+.1f}]",
        f"both right {result.both} | A only {result.a_only} | B only {result.b_only} | both wrong {result.neither}",
        f"McNemar exact p = {result.p_value:.4g} ({result.a_only} vs {result.b_only} discordant)",
    ]
    if result.disagree and show > 0:
        lines.append(f"disagreements (first {min(show, len(result.disagree))} of {len(result.disagree)}):")
        lines += [f"  {qid}  {side} right" for qid, side in result.disagree[:show]]
    return "\n".join(lines) + "\n"
