"""Scoring cost per question as gold lists grow (values must not make scoring quadratic).

    python benchmarks/scorer.py [--repeat 5]

For gold lists of 1 to 10,000 answers (each with two aliases, as a name and a number written two
ways), one question is scored with every metric (``kgx.core.metrics.score``) against a prediction of
10 answers and 200 evidence triples. It prints the milliseconds per question, best of ``--repeat``,
and the time per gold alias: flat per-alias time means linear scoring. Each repetition uses a fresh
gold list and starts with empty text caches (normalised texts, values read), so the figures are the
cost of a question whose gold and evidence the run has not seen before.
"""

from __future__ import annotations

import argparse
import time

from kgx.core.metrics import normalize, score
from kgx.core.types import Prediction, Question
from kgx.core.values import parse, values_in

SIZES = (1, 10, 100, 1_000, 10_000)


def question(size: int, salt: int) -> Question:
    """``size`` answers: even ones a name with a suffix, odd ones a number with a separated alias."""
    answers = [
        [f"Entity {salt} {i}", f"Entity {i} of {salt}"] if i % 2 == 0 else [str(10_000_000 + i), f"{10_000_000 + i:,}"]
        for i in range(size)
    ]
    return Question(f"q{salt}", "?", {}, answers)


def prediction() -> Prediction:
    evidence = [f"(Some entity {i}, location.statistical_region.population, {7_000_000 + i * 13})" for i in range(199)]
    evidence.append("(Texas, location.statistical_region.population, 1.00000e+07)")
    answers = [f"Answer {i}" for i in range(9)] + ["1.00000e+07"]
    return Prediction(answer="{" + ", ".join(answers) + "}", answers=answers, evidence=evidence)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    pred = prediction()
    print(f"{'answers':>8} {'aliases':>8} {'ms/question':>12} {'us/alias':>9}")
    salt = 0
    for size in SIZES:
        best = float("inf")
        for _ in range(args.repeat):
            salt += 1
            q = question(size, salt)
            for cached in (normalize, parse, values_in):
                cached.cache_clear()
            start = time.perf_counter()
            scores = score(q, pred)
            best = min(best, time.perf_counter() - start)
        aliases = 2 * size
        print(
            f"{size:>8,} {aliases:>8,} {best * 1000:>12.2f} {best * 1e6 / aliases:>9.1f}"
            f"   (answer_recall {scores['answer_recall']:.0f}, hits1_tog {scores['hits1_tog']:.0f})"
        )


if __name__ == "__main__":
    main()
