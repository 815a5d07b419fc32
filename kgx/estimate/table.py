"""The estimates as a table: aligned text, Markdown, CSV or JSON (``python -m kgx.estimate --format``).

Every figure is shown with its interval, ``1,234 [1,100-1,370]``; a figure that cannot be
predicted says why in the job's note; a pilot too small for its intervals says why in a warning
under the table (``kgx.estimate.model.warnings``). CSV and JSON keep the numbers as numbers.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict
from typing import Optional

from kgx.estimate.interval import Figure
from kgx.estimate.model import JobEstimate
from kgx.estimate.strata import DEFAULT_PILOT

INTERVAL = "95% t-interval of the pilot mean × questions, finite-population corrected, clipped at 0"
FORMATS = ("text", "md", "csv", "json")

COLUMNS = (
    ("calls", "LLM calls"),
    ("input_tokens", "input tokens"),
    ("output_tokens", "output tokens"),
    ("tokens", "tokens"),
    ("cost_usd", "cost USD"),
    ("wall_s", "wall"),
)


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


def render(jobs: list[JobEstimate], total: JobEstimate, fmt: str, settings: dict[str, object]) -> str:
    """The table in ``fmt`` (FORMATS); csv and json keep the numbers as numbers, json also the
    pilot ``settings`` it was asked for (each job's ``pilot`` is the size it reached)."""
    rows = [*jobs, total]
    if fmt == "json":
        return (
            json.dumps(
                {"interval": INTERVAL, **settings, "jobs": [asdict(j) for j in jobs], "total": asdict(total)}, indent=2
            )
            + "\n"
        )
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(
            [
                "job",
                "questions",
                "pilot",
                "errors",
                *(f"{n}{s}" for n, _ in COLUMNS for s in ("", "_low", "_high")),
                "stratified_by",
                "reached",
                "note",
                "warnings",
            ]
        )
        for j in rows:
            cells = [
                (f.value, f.low, f.high) if (f := getattr(j, n)) and not j.errors else ("", "", "") for n, _ in COLUMNS
            ]
            writer.writerow(
                [
                    j.job,
                    j.questions,
                    j.pilot,
                    j.errors,
                    *(x for c in cells for x in c),
                    j.stratified_by,
                    "" if j.reached is None else j.reached,
                    j.note,
                    "; ".join(j.warnings),
                ]
            )
        return out.getvalue()
    header = ["job", "questions", "pilot", "errors", *(title for _, title in COLUMNS)]
    body = [
        [j.job, str(j.questions), str(j.pilot), str(j.errors), *(shown(n, getattr(j, n), j.errors) for n, _ in COLUMNS)]
        for j in rows
    ]
    notes = [f"{j.job}: {j.note}" for j in jobs if j.note]
    warned = [f"{j.job}: warning: {w}" for j in jobs for w in j.warnings]
    sizes = {j.pilot for j in jobs}
    pilots = f"pilot {sizes.pop()} questions per job" if len(sizes) == 1 else "pilot questions per job in column pilot"
    if settings.get("pilot") is None:
        pilots += f" (by default {DEFAULT_PILOT}; --pilot N to choose)"
    footer = [f"[low-high]: {INTERVAL}; {pilots}", *notes, *warned]
    if fmt == "md":
        lines = [header, ["---"] + ["---:"] * (len(header) - 1), *body]
        table = "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in lines)
        return table + "\n\n" + "\n".join(footer) + "\n"
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *map(line, body[:-1]), rule, line(body[-1]), *footer]) + "\n"
