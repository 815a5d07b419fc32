"""From a pilot's records to a full run's figures, and the figures as a table (``kgx.estimate``).

A pilot answers n questions drawn at random from the N a job would answer. Every per-question
figure (calls, input and output tokens, cost, latency) is then estimated for the whole job as
``N × mean``, the usual estimator of a population total from a simple random sample; its 95%
interval is ``N × (mean ± t(0.975, n-1) · sd/√n · √((N-n)/(N-1)))``, clipped at 0. The last
factor is the finite-population correction: a pilot that covers the whole job has no spread
left to guess. A pilot of one question says nothing about the spread: its interval is [0, ∞).
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from kgx.config import LLMConfig
from kgx.record import Record
from kgx.spec import RunSpec

INTERVAL = "95% t-interval of the pilot mean × questions, finite-population corrected, clipped at 0"
FORMATS = ("text", "md", "csv", "json")
LATENCY_FILE = "estimate_latency.json"  # under run.cache_dir: seconds per provider call, per backbone


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
    pilot: int  # questions the pilot answered
    errors: int  # pilot questions that ended in an error or were not run
    calls: Optional[Figure] = None
    input_tokens: Optional[Figure] = None
    output_tokens: Optional[Figure] = None
    cost_usd: Optional[Figure] = None
    wall_s: Optional[Figure] = None
    note: str = ""  # why a figure is missing


def total_of(samples: list[float], size: int) -> Figure:
    """The estimated total over ``size`` questions from per-question ``samples`` (module docstring)."""
    from scipy.stats import t

    n = len(samples)
    mean = sum(samples) / n
    if n >= size:
        return Figure(mean * size, mean * size, mean * size)
    if n < 2:
        return Figure(mean * size, 0.0, math.inf)
    sd = math.sqrt(sum((x - mean) ** 2 for x in samples) / (n - 1))
    half = float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n) * math.sqrt((size - n) / (size - 1)) * size
    return Figure(mean * size, max(0.0, mean * size - half), mean * size + half)


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


def rate_bound(spec: RunSpec, records: list[Record], size: int, parallel: int, side: str) -> float:
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
                figure = total_of(samples, size)
                longest = max(longest, 60.0 * getattr(figure, side) / max(1, limit // parallel))
    return longest


def estimate_job(job: str, spec: RunSpec, records: list[Record], size: int, parallel: int) -> JobEstimate:
    """The full-run figures of one job from its pilot's records (all answered)."""
    est = JobEstimate(job, size, len(records), 0)
    est.calls = total_of([float(r.calls) for r in records], size)
    est.input_tokens = total_of([float(r.usage.input_tokens) for r in records], size)
    est.output_tokens = total_of([float(r.usage.output_tokens) for r in records], size)
    costs = [question_cost(r, spec) for r in records]
    notes = []
    if any(c is None for c in costs):
        notes.append(f"cost unknown: no price for {spec.llm.model} (set llm.input_cost_per_token and "
                     f"llm.output_cost_per_token)")
    else:
        est.cost_usd = total_of([float(c) for c in costs if c is not None], size)
    per_call, source = call_latency(spec, records)
    notes += [source] if source else []
    if per_call is None:
        notes.append("wall unknown: every pilot call came from the cache and no earlier pilot measured one")
    else:
        # A question's latency as if none of its calls had been cached.
        latency = total_of([r.latency_s + r.usage.cached_calls * per_call for r in records], size)
        workers = spec.workers
        est.wall_s = Figure(*(max(getattr(latency, side) / workers, rate_bound(spec, records, size, parallel, side))
                              for side in ("value", "low", "high")))
    est.note = "; ".join(notes)
    return est


def add_up(jobs: list[JobEstimate], parallel: int) -> JobEstimate:
    """The total row: sums of the jobs' figures, each side of the interval the root sum of squares
    of the jobs' (independent pilots'); wall time divided by the jobs the launcher runs at once."""
    total = JobEstimate("total", sum(j.questions for j in jobs), sum(j.pilot for j in jobs),
                        sum(j.errors for j in jobs))
    for name in ("calls", "input_tokens", "output_tokens", "cost_usd", "wall_s"):
        figures = [getattr(j, name) for j in jobs]
        if not figures or any(f is None for f in figures):
            continue
        value = sum(f.value for f in figures)
        down = math.sqrt(sum((f.value - f.low) ** 2 for f in figures))
        up = math.sqrt(sum((f.high - f.value) ** 2 for f in figures))
        scale = parallel if name == "wall_s" else 1
        setattr(total, name, Figure(value / scale, max(0.0, value - down) / scale, (value + up) / scale))
    return total


COLUMNS = (("calls", "LLM calls"), ("input_tokens", "input tokens"), ("output_tokens", "output tokens"),
           ("cost_usd", "cost USD"), ("wall_s", "wall"))


def shown(name: str, figure: Optional[Figure], errors: int) -> str:
    """``1,234 [1,100-1,370]``; ``unknown`` for a figure that cannot be predicted."""
    if errors:
        return "pilot failed"
    if figure is None:
        return "unknown"

    minutes = name == "wall_s" and figure.value >= 600  # one unit for the value and its interval

    def one(x: float) -> str:
        if math.isinf(x):
            return "inf"
        if name == "cost_usd":
            return f"{x:.4f}"
        if name == "wall_s":
            return f"{x / 60:.1f}m" if minutes else f"{x:.1f}s"
        return f"{x:,.0f}"

    return f"{one(figure.value)} [{one(figure.low)}-{one(figure.high)}]"


def render(jobs: list[JobEstimate], total: JobEstimate, fmt: str, pilot: int) -> str:
    """The table in ``fmt`` (FORMATS); csv and json keep the numbers as numbers."""
    rows = [*jobs, total]
    if fmt == "json":
        return json.dumps({"interval": INTERVAL, "pilot": pilot, "jobs": [asdict(j) for j in jobs],
                           "total": asdict(total)}, indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["job", "questions", "pilot", "errors", *(f"{n}{s}" for n, _ in COLUMNS
                                                                  for s in ("", "_low", "_high")), "note"])
        for j in rows:
            cells = [(f.value, f.low, f.high) if (f := getattr(j, n)) and not j.errors else ("", "", "")
                     for n, _ in COLUMNS]
            writer.writerow([j.job, j.questions, j.pilot, j.errors, *(x for c in cells for x in c), j.note])
        return out.getvalue()
    header = ["job", "questions", "pilot", "errors", *(title for _, title in COLUMNS)]
    body = [[j.job, str(j.questions), str(j.pilot), str(j.errors), *(shown(n, getattr(j, n), j.errors)
                                                                      for n, _ in COLUMNS)] for j in rows]
    notes = [f"{j.job}: {j.note}" for j in jobs if j.note]
    footer = [f"[low-high]: {INTERVAL}; pilot {pilot} questions per job", *notes]
    if fmt == "md":
        lines = [header, ["---"] + ["---:"] * (len(header) - 1), *body]
        table = "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in lines)
        return table + "\n\n" + "\n".join(footer) + "\n"
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *map(line, body[:-1]), rule, line(body[-1]), *footer]) + "\n"
