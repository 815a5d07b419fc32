"""From a pilot's records to a full run's figures (the statistics: ``kgx.estimate.interval``; the
questions' kinds and the pilot's default size: ``kgx.estimate.strata``; the table: ``kgx.estimate.table``).

Every per-question figure (calls, tokens, cost, latency) is estimated for the whole job with its
95% interval (``total_of``). What the interval rests on is said beside the table: a note when a
figure's pilot values were all equal and a prior stood in for their spread, and a warning when
the pilot is too small for the interval it prints (``warnings``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from kgx.core.config import LLMConfig
from kgx.core.masking import masked_url
from kgx.estimate.interval import Figure, Prior, relative_spread, skewness, too_few, total_of
from kgx.estimate.strata import Strata
from kgx.estimate.wall import Total, remembered, wall_time
from kgx.results.record import Record
from kgx.run.spec import RunSpec

FIGURES = ("calls", "input_tokens", "output_tokens", "tokens", "cost_usd")  # sums of per-question figures


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
    flat: list[str] = field(default_factory=list)  # calls/tokens equal on every pilot question: no evidence (no_spread)
    note: str = ""  # the pilot's size and precision, why a figure is missing, what stood in for a spread
    warnings: list[str] = field(default_factory=list)  # why the pilot is too small for its intervals


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
    only the pilot's billed calls measure it; the figure is kept per backbone under
    ``run.cache_dir`` (``kgx.estimate.wall.remembered``), so that estimating again (every call now
    cached) still has it. None when no pilot of this backbone ever reached the provider."""
    key = f"{spec.llm.model} {masked_url(spec.llm.api_base or '')}".strip()  # a file under run.cache_dir
    billed = sum(r.usage.billed_calls for r in records)
    if billed:
        return remembered(spec, key, sum(r.usage.latency_s for r in records) / billed), ""
    found = remembered(spec, key)
    return found, "" if found is None else "wall from an earlier pilot's seconds per call (this one was cached)"


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


def call_bound(spec: RunSpec) -> Optional[float]:
    """The method's bound on LLM calls per question (kgx.methods.call_bound), or None."""
    from kgx.methods import call_bound as bound

    return bound(spec.method)


def no_spread(strata: Strata, kinds: list[str], values: dict[str, list[float]]) -> list[str]:
    """Which of calls and tokens (what ``--precision`` bounds) were equal on every question of a
    pilot of two or more, short of the job, that is no evidence that the job's are: a prior stands
    in for their spread (``kgx.estimate.interval.Prior``), which says how wide the spread may be,
    not that the pilot saw it. CGPE on PathQuestion made 5 calls on each of a 5-question pilot and
    7.6 on average over the job, and the tokens' spread stood in for a ±6% interval. Only equal
    values across every kind of a job of several kinds count as evidence: the kinds are where
    calls differ most."""
    n, sizes = len(values["calls"]), strata.sizes
    if not 1 < n < len(strata.kind) or (len(sizes) > 1 and set(kinds) == set(sizes)):
        return []
    return [name for name in ("calls", "tokens") if len(set(values[name])) == 1]


def warnings(strata: Strata, kinds: list[str], values: dict[str, list[float]]) -> list[str]:
    """Why the pilot (its questions' ``kinds`` and ``values``) is too small for the intervals it
    prints: one question; kinds it did not reach (their figures are guessed from the others');
    calls or tokens equal on every pilot question (``no_spread``); calls or tokens more skewed
    than its size allows (Cochran's rule, ``kgx.estimate.interval``). A pilot of the whole job is
    exact: no warning."""
    n, sizes = len(values["calls"]), strata.sizes
    if n >= len(strata.kind):
        return []
    found = []
    if n < 2:
        found.append("one pilot question says nothing about the spread: the intervals are open")
    for name in no_spread(strata, kinds, values):
        found.append(
            f"{name} {values[name][0]:g} on every one of the {n} pilot questions: the pilot shows no spread, so "
            "the width of the interval is unknown (a prior stands in for it); --precision grows the pilot until it "
            "shows one"
        )
    reached = set(kinds)
    if len(reached) < len(sizes):
        missed = sum(size for kind, size in sizes.items() if kind not in reached)
        found.append(
            f"the pilot reached {len(reached)} of {len(sizes)} kinds of {strata.key}: the other {missed} questions "
            f"are guessed from those (intervals widened); --pilot {strata.default_pilot()} covers every kind"
        )
    for name in ("calls", "tokens"):
        need = too_few(values[name])
        if need:
            found.append(
                f"{name} skewed (G1 {skewness(values[name]):.1f}): Cochran's rule n >= 25 G1^2 asks {need} pilot "
                f"questions, the pilot has {n}: the 95% interval is approximate"
            )
    return found


def estimate_job(
    job: str,
    spec: RunSpec,
    records: list[Record],
    strata: Strata,
    parallel: int,
    cold_left: int = 0,
    rounds: Optional[list[tuple[list[Record], float]]] = None,
) -> JobEstimate:
    """The full-run figures of one job from its pilot's records (all answered); ``cold_left`` of
    its questions are not in the reachability cache (``kgx.estimate.wall.uncached``); ``rounds``:
    the pilot's rounds with their loops' wall times (``kgx.estimate.wall.core_share``)."""
    kinds, sizes = [strata.kind[r.id] for r in records], strata.sizes
    values = {
        "calls": [float(r.calls) for r in records],
        "input_tokens": [float(r.usage.input_tokens) for r in records],
        "output_tokens": [float(r.usage.output_tokens) for r in records],
        "tokens": [float(r.usage.input_tokens + r.usage.output_tokens) for r in records],
    }
    like_tokens = Prior(relative=relative_spread(values["tokens"]))
    priors = {"calls": Prior(call_bound(spec), like_tokens.relative), "tokens": Prior()}

    def total(samples: list[float], prior: Prior = like_tokens) -> Figure:
        return total_of(samples, kinds, sizes, prior)

    est = JobEstimate(job, len(strata.kind), len(records), 0, stratified_by=strata.key)
    notes = []
    for name, samples in values.items():
        setattr(est, name, total(samples, priors.get(name, like_tokens)))
        if 1 < len(samples) < est.questions and len(set(samples)) == 1:
            notes.append(
                f"{name.replace('_', ' ')} {samples[0]:g} on every pilot question: "
                f"spread from {priors.get(name, like_tokens).says()}"
            )
    est.warnings = warnings(strata, kinds, values)
    est.flat = no_spread(strata, kinds, values)
    costs = [question_cost(r, spec) for r in records]
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
        est.wall_s, said = wall_time(
            spec,
            records,
            est.questions,
            total,
            per_call,
            cold_left,
            lambda side: rate_bound(spec, records, total, parallel, side),
            rounds,
        )
        notes += said
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
