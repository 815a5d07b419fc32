"""From a pilot's records to a full run's figures (``kgx.estimate.pilot``; the table: ``kgx.estimate.table``).

A pilot answers n of the N questions a job would answer. When the questions say their kind
(``Strata``: MetaQA's ``qtype``, CWQ's ``compositionality_type``, GrailQA's ``level``, a
dataset's ``hops``), the job splits into H strata of N_h questions and the pilot is drawn across
them (``Strata.order``): calls and tokens vary far less within a kind than between kinds, so the
stratified estimate needs fewer questions for the same precision. Every per-question figure
(calls, tokens, cost, latency) is estimated for the whole job as ``Σ N_h × mean_h`` over the
strata the pilot reached, scaled by N over their questions (a kind the pilot has not reached yet
counts as those it has). Its 95% interval is ``± t(0.975, df) · √(Σ N_h² · s_h²/n_h · (1 -
n_h/N_h))``, clipped at 0, with Welch-Satterthwaite's df: ``1 - n_h/N_h`` is the finite-population
correction (a stratum the pilot covers whole has no spread left to guess); a stratum with one
pilot question has no spread of its own and takes the pooled within-kind variance. While the
pilot has fewer than about two questions a kind (n - H < H), those spreads rest on too few
questions to trust (a pooled variance of one degree of freedom can be 0): every stratum takes the
pilot's plain variance instead, which bounds them from above. Without kinds there is one stratum
and this is the textbook simple-random-sample estimate ``N × mean ± t(0.975, n-1) · s/√n · N ·
√(1 - n/N)``. A pilot of one question says nothing about the spread: its interval is [0, ∞).
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from kgx.core.config import ConfigError, LLMConfig
from kgx.core.types import Question
from kgx.results.record import Record
from kgx.run.spec import RunSpec

LATENCY_FILE = "estimate_latency.json"  # under run.cache_dir: seconds per provider call, per backbone
FIGURES = ("calls", "input_tokens", "output_tokens", "tokens", "cost_usd")  # sums of per-question figures


@dataclass(frozen=True)
class Figure:
    """A full-run figure predicted from the pilot, with its interval."""

    value: float
    low: float
    high: float


@dataclass
class JobEstimate:
    """One job's prediction. Figures are None when they cannot be predicted: a pilot with errors
    (never turned into numbers), an unpriced backbone (cost), or no measured call (wall time)."""

    job: str
    questions: int  # the job's full size: its dataset after selection
    pilot: int  # questions the pilot answered, all rounds of a growing pilot
    errors: int  # pilot questions that ended in an error or were not run
    calls: Optional[Figure] = None
    input_tokens: Optional[Figure] = None
    output_tokens: Optional[Figure] = None
    tokens: Optional[Figure] = None  # input plus output: with calls, what --precision bounds
    cost_usd: Optional[Figure] = None
    wall_s: Optional[Figure] = None
    stratified_by: str = ""  # the meta key of the pilot's strata; "" for a plain random pilot
    reached: Optional[bool] = None  # whether the pilot reached --precision (None without it)
    note: str = ""  # the pilot's size and precision, why a figure is missing


KINDS = ("qtype", "compositionality_type", "level", "hops")  # meta keys that say a question's kind


@dataclass(frozen=True)
class Strata:
    """The job's questions by kind: ``kind`` maps every question id to its stratum, ``key`` the
    meta key that said it ("" for one stratum: plain random sampling)."""

    key: str
    kind: dict[str, str]

    @classmethod
    def of(cls, questions: list[Question], key: str = "auto") -> Strata:
        """Strata by meta ``key``; "auto": the first of KINDS that every question carries with
        more than one value among them, else one stratum; "none": one stratum."""
        if key == "auto":
            key = next(
                (
                    k
                    for k in KINDS
                    if all(k in q.meta for q in questions) and len({str(q.meta[k]) for q in questions}) > 1
                ),
                "none",
            )
        if key == "none":
            return cls("", {q.id: "" for q in questions})
        lacking = [q.id for q in questions if key not in q.meta]
        if lacking:
            raise ConfigError(f"--strata {key}: {len(lacking)} questions have no meta '{key}' (e.g. {lacking[0]})")
        return cls(key, {q.id: str(q.meta[key]) for q in questions})

    @property
    def sizes(self) -> dict[str, int]:
        return dict(Counter(self.kind.values()))

    def order(self, seed: int) -> list[str]:
        """Every question id in the order the pilot draws them, so that a pilot of any size is
        its first ids and a growing pilot takes the next ones: each stratum in its own seeded
        random order; one question of every stratum first (the largest first), so that once the
        pilot is as large as the number of kinds each has a mean of its own, then always one of
        the stratum furthest below its proportional share of the pilot."""
        rng = random.Random(seed)
        members: dict[str, list[str]] = {}
        for qid, kind in self.kind.items():
            members.setdefault(kind, []).append(qid)
        queues = {kind: rng.sample(ids, len(ids)) for kind, ids in sorted(members.items())}
        taken, size, order = dict.fromkeys(queues, 0), len(self.kind), []
        for n in range(1, size + 1):
            kind = max(
                (k for k in queues if taken[k] < len(queues[k])),
                key=lambda k: (taken[k] == 0, len(queues[k]) * n / size - taken[k], len(queues[k])),
            )
            order.append(queues[kind][taken[kind]])
            taken[kind] += 1
        return order


def total_of(samples: list[float], kinds: list[str], sizes: dict[str, int]) -> Figure:
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
    if n < 2:
        return Figure(value, 0.0, math.inf)
    squares = {k: sum((x - means[k]) ** 2 for x in xs) for k, xs in groups.items()}
    factor = {k: sizes[k] ** 2 / len(xs) * (1 - len(xs) / sizes[k]) for k, xs in groups.items()}
    within = n - len(groups)  # degrees of freedom of the spread within kinds
    if within < len(groups):  # about one question a kind: the plain spread bounds theirs
        mean = sum(samples) / n
        parts = [(sum(factor.values()) * sum((x - mean) ** 2 for x in samples) / (n - 1), n - 1)]
    else:  # each kind's own variance; a kind with one question takes the pooled one
        parts = [(factor[k] * squares[k] / (len(xs) - 1), len(xs) - 1) for k, xs in groups.items() if len(xs) > 1]
        parts.append(
            (sum(squares.values()) / within * sum(factor[k] for k, xs in groups.items() if len(xs) == 1), within)
        )
    variance = sum(v for v, _ in parts)
    df = variance**2 / sum(v**2 / d for v, d in parts) if variance else n - 1  # Welch-Satterthwaite
    half = scale * float(t.ppf(0.975, df)) * math.sqrt(variance)
    return Figure(value, max(0.0, value - half), value + half)


def spread(figure: Optional[Figure]) -> float:
    """The interval's half-width over the value: what ``--precision`` bounds (inf when unknown)."""
    if figure is None or math.isinf(figure.high):
        return math.inf
    half = figure.high - figure.value
    return half / figure.value if figure.value else (0.0 if half == 0 else math.inf)


def price(cfg: LLMConfig) -> Optional[tuple[float, float]]:
    """USD per input and output token: the config's, else litellm's price map; None if unknown.
    The pilot's own cost cannot be used: a cached call is free but the full run may pay for it."""
    if cfg.input_cost_per_token is not None and cfg.output_cost_per_token is not None:
        return cfg.input_cost_per_token, cfg.output_cost_per_token
    import litellm

    try:
        cost_in, cost_out = litellm.cost_per_token(model=cfg.model, prompt_tokens=1000, completion_tokens=1000)
    except Exception:  # not in litellm's map
        return None
    return cost_in / 1000, cost_out / 1000


def question_cost(record: Record, spec: RunSpec) -> Optional[float]:
    """What the record's calls cost at list price, each stage at its own backbone's price."""
    cost = 0.0
    for stage, usage in (record.stages or {"": record.usage}).items():
        prices = price(spec.stages.get(stage, spec.llm))
        if prices is None and usage.calls:
            return None
        if prices:
            cost += usage.input_tokens * prices[0] + usage.output_tokens * prices[1]
    return cost


def call_latency(spec: RunSpec, records: list[Record]) -> tuple[Optional[float], str]:
    """Seconds per provider call and where the figure comes from. A cache hit takes no time, so
    only the pilot's billed calls measure it; the figure is kept per backbone in
    ``<run.cache_dir>/estimate_latency.json``, so that estimating again (every call now cached)
    still has it. None when no pilot of this backbone ever reached the provider."""
    path = Path(spec.run.cache_dir) / LATENCY_FILE
    known = json.loads(path.read_text()) if path.exists() else {}
    key = f"{spec.llm.model} {spec.llm.api_base or ''}".strip()
    billed = sum(r.usage.billed_calls for r in records)
    if not billed:
        found = known.get(key)
        return found, "" if found is None else "wall from an earlier pilot's seconds per call (this one was cached)"
    known[key] = sum(r.usage.latency_s for r in records) / billed
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(known, indent=1, sort_keys=True))
    return known[key], ""


Total = Callable[[list[float]], Figure]  # a pilot's per-question samples -> the job's total


def rate_bound(spec: RunSpec, records: list[Record], total: Total, parallel: int, side: str) -> float:
    """Seconds the rate limits alone impose on the job: per backbone, its (per-job share of)
    ``llm.rpm`` over the calls and ``llm.tpm`` over the tokens its limiter counts (the prompt plus
    the ``max_tokens`` budget of each call). ``side`` is the figure's value, low or high."""
    longest = 0.0
    backbones: dict[str, tuple[LLMConfig, list[float], list[float]]] = {}
    for i, r in enumerate(records):
        for stage, usage in (r.stages or {"": r.usage}).items():
            cfg = spec.stages.get(stage, spec.llm)
            entry = backbones.setdefault(cfg.name, (cfg, [0.0] * len(records), [0.0] * len(records)))
            entry[1][i] += usage.calls
            entry[2][i] += usage.input_tokens + usage.calls * cfg.max_tokens
    for cfg, calls, tokens in backbones.values():
        for limit, samples in ((cfg.rpm, calls), (cfg.tpm, tokens)):
            if limit:
                figure = total(samples)
                longest = max(longest, 60.0 * getattr(figure, side) / max(1, limit // parallel))
    return longest


def estimate_job(job: str, spec: RunSpec, records: list[Record], strata: Strata, parallel: int) -> JobEstimate:
    """The full-run figures of one job from its pilot's records (all answered)."""
    kinds, sizes = [strata.kind[r.id] for r in records], strata.sizes

    def total(samples: list[float]) -> Figure:
        return total_of(samples, kinds, sizes)

    est = JobEstimate(job, len(strata.kind), len(records), 0, stratified_by=strata.key)
    est.calls = total([float(r.calls) for r in records])
    est.input_tokens = total([float(r.usage.input_tokens) for r in records])
    est.output_tokens = total([float(r.usage.output_tokens) for r in records])
    est.tokens = total([float(r.usage.input_tokens + r.usage.output_tokens) for r in records])
    costs = [question_cost(r, spec) for r in records]
    notes = []
    if any(c is None for c in costs):
        notes.append(
            f"cost unknown: no price for {spec.llm.model} (set llm.input_cost_per_token and llm.output_cost_per_token)"
        )
    else:
        est.cost_usd = total([float(c) for c in costs if c is not None])
    per_call, source = call_latency(spec, records)
    notes += [source] if source else []
    if per_call is None:
        notes.append("wall unknown: every pilot call came from the cache and no earlier pilot measured one")
    else:
        # A question's latency as if none of its calls had been cached.
        latency = total([r.latency_s + r.usage.cached_calls * per_call for r in records])
        workers = spec.workers
        est.wall_s = Figure(
            *(
                max(getattr(latency, side) / workers, rate_bound(spec, records, total, parallel, side))
                for side in ("value", "low", "high")
            )
        )
    est.note = "; ".join(notes)
    return est


def add_up(jobs: list[JobEstimate], parallel: int) -> JobEstimate:
    """The total row: sums of the jobs' figures, each side of the interval the root sum of squares
    of the jobs' (independent pilots'); wall time divided by the jobs the launcher runs at once."""
    targets = [j.reached for j in jobs if j.reached is not None]
    total = JobEstimate(
        "total",
        sum(j.questions for j in jobs),
        sum(j.pilot for j in jobs),
        sum(j.errors for j in jobs),
        reached=all(targets) if targets else None,
    )
    for name in (*FIGURES, "wall_s"):
        figures = [getattr(j, name) for j in jobs]
        if not figures or any(f is None for f in figures):
            continue
        value = sum(f.value for f in figures)
        down = math.sqrt(sum((f.value - f.low) ** 2 for f in figures))
        up = math.sqrt(sum((f.high - f.value) ** 2 for f in figures))
        scale = parallel if name == "wall_s" else 1
        setattr(total, name, Figure(value / scale, max(0.0, value - down) / scale, (value + up) / scale))
    return total
