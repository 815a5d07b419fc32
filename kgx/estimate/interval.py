"""From a pilot's per-question values to the job's total and its 95% interval (``kgx.estimate.model``).

A pilot answers n of the N questions a job would answer, spread over the H kinds the job's
questions say (``kgx.estimate.strata``): N_h questions of kind h in the job, n_h in the pilot.
The total is ``Σ N_h × mean_h`` over the kinds the pilot reached, scaled by N over their
questions. Its 95% interval is ``± t(0.975, df) · √V``, clipped at 0, df after
Welch-Satterthwaite, V a sum of parts:

- a reached kind: ``N_h² · S_h²/n_h · (1 - n_h/N_h)`` (scaled like the total), where
  ``1 - n_h/N_h`` is the finite-population correction (a kind the pilot covers whole has no
  spread left to guess) and S_h² the kind's spread. From ``OWN`` pilot questions on, that is its
  own sample variance. Below, it is the larger of its own and the pilot's plain variance s²: a
  sample variance of few degrees of freedom is often far below the truth (with 1, one time in
  four under a tenth of it) while s², which holds the spread between kinds too, is at least
  their average spread; a kind whose own questions vary more than that keeps its own. A kind of
  one question, or whose questions all gave the same value, has no spread of its own: s²;
- a kind the pilot did not reach: ``N_h² · s²``. Its mean is guessed from the kinds the pilot
  reached and is off by as much as one kind's mean is from another's, a spread s² bounds. So a
  pilot smaller than the number of kinds never prints the reached kinds' figure as the job's;
- when every pilot value is equal, s² = 0 is no evidence that the job's values are equal: a
  ``Prior`` stands in for it. With a bound B on a question's value (calls: the method's call
  bound), Popoviciu's inequality ``Var ≤ B²/4`` for values in [0, B]; else a relative spread
  known to be at least the figure's (for calls, the pilot's tokens': a question's tokens are
  the sum over its calls, and a sum of a random number c of per-call amounts has
  ``CV² ≥ CV(c)²``); with neither the spread is unknown and so is the interval's top: [0, ∞).

Only a pilot of the whole job is exact ([x-x]); a pilot of one question says nothing about the
spread: [0, ∞). Without kinds there is one stratum and this is the textbook simple-random-sample
estimate ``N × mean ± t(0.975, n-1) · s/√n · N · √(1 - n/N)``.

The t-interval assumes the pilot's mean is near normal. Cochran's rule (Sampling Techniques, 3rd
ed., 1977, §2.15) says how many questions that takes for a skewed figure: ``n ≥ 25 · G1²``, G1
the figure's skewness; ``too_few`` applies it with the pilot's own skewness (which a pilot that
missed the heavy questions underestimates: the rule can only warn, never reassure).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

CONFIDENCE = 0.975  # the t quantile of a two-sided 95% interval
OWN = 5  # pilot questions of a kind from which its own spread stands alone (module docstring)


@dataclass(frozen=True)
class Figure:
    """A full-run figure predicted from the pilot, with its interval."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Prior:
    """What stands in for the spread of a figure whose pilot values are all equal (module
    docstring): ``bound``, the largest value a question can take, or ``relative``, a coefficient
    of variation at least the figure's."""

    bound: Optional[float] = None
    relative: Optional[float] = None

    def variance(self, mean: float) -> float:
        if self.bound is not None:
            return self.bound**2 / 4  # Popoviciu, values in [0, bound]
        if self.relative is not None and (self.relative or not mean):
            return (self.relative * mean) ** 2
        return math.inf

    def says(self) -> str:
        """How the spread was stood in for, for the job's note."""
        if self.bound is not None:
            return f"the method's bound of {self.bound:g} a question (Popoviciu)"
        return "the tokens' relative spread" if self.relative else "nothing: the interval is open"


def plain_variance(samples: list[float]) -> float:
    mean = sum(samples) / len(samples)
    return sum((x - mean) ** 2 for x in samples) / (len(samples) - 1)


def total_of(samples: list[float], kinds: list[str], sizes: dict[str, int], prior: Prior = Prior()) -> Figure:
    """The estimated total over the job from per-question ``samples``, the i-th of kind
    ``kinds[i]``, the job holding ``sizes[kind]`` questions of each kind (module docstring)."""
    from scipy.stats import t

    groups: dict[str, list[float]] = {}
    for kind, x in zip(kinds, samples):
        groups.setdefault(kind, []).append(x)
    size, n = sum(sizes.values()), len(samples)
    scale = size / sum(sizes[k] for k in groups)
    means = {k: sum(xs) / len(xs) for k, xs in groups.items()}
    value = scale * sum(sizes[k] * means[k] for k in groups)
    if n >= size:
        return Figure(value, value, value)
    plain = plain_variance(samples) if n > 1 else math.inf
    plain = plain or prior.variance(sum(samples) / n)
    if math.isinf(plain):
        return Figure(value, 0.0, math.inf)
    parts = []  # (variance, degrees of freedom): one per independent spread, for Welch-Satterthwaite
    shared = sum(sizes[k] ** 2 for k in sizes if k not in groups)  # what takes the plain spread
    for k, xs in groups.items():
        factor = scale**2 * sizes[k] ** 2 / len(xs) * (1 - len(xs) / sizes[k])
        own = sum((x - means[k]) ** 2 for x in xs) / (len(xs) - 1) if len(xs) > 1 else 0.0
        if own and (len(xs) >= OWN or own > plain):
            parts.append((factor * own, len(xs) - 1))
        else:
            shared += factor
    parts = [(v, d) for v, d in [*parts, (shared * plain, n - 1)] if v]
    variance = sum(v for v, _ in parts)
    df = variance**2 / sum(v**2 / d for v, d in parts) if variance else n - 1
    half = float(t.ppf(CONFIDENCE, df)) * math.sqrt(variance)
    return Figure(value, max(0.0, value - half), value + half)


def skewness(samples: list[float]) -> float:
    """The sample skewness g1 = m3 / m2^1.5 (0 for equal values)."""
    mean = sum(samples) / len(samples)
    m2 = sum((x - mean) ** 2 for x in samples) / len(samples)
    m3 = sum((x - mean) ** 3 for x in samples) / len(samples)
    return m3 / m2**1.5 if m2 else 0.0


def too_few(samples: list[float]) -> Optional[int]:
    """Cochran's n ≥ 25·G1² (module docstring): the questions the pilot's own skewness asks
    for, when the pilot has fewer; else None."""
    need = math.ceil(25 * skewness(samples) ** 2)
    return need if len(samples) < need else None


def relative_spread(samples: list[float]) -> Optional[float]:
    """The pilot's coefficient of variation s / mean; None below two questions or at mean 0."""
    if len(samples) < 2 or not sum(samples):
        return None
    return math.sqrt(plain_variance(samples)) / (sum(samples) / len(samples))


def spread(figure: Optional[Figure]) -> float:
    """The interval's half-width over the value: what ``--precision`` bounds (inf when unknown)."""
    if figure is None or math.isinf(figure.high):
        return math.inf
    half = figure.high - figure.value
    return half / figure.value if figure.value else (0.0 if half == 0 else math.inf)
