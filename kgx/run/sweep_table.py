"""A sweep's table on its parent run: every configuration's figures, the mean over the
replicates (seeds) of each, and the sweep's mean under the plain metric names."""

from __future__ import annotations

import math
import time
from typing import Any, Optional

from kgx.diagnose.breakdown import CATEGORIES
from kgx.track.tracker import HEADLINE, REUSED_TAG, Tracker, job_of, rounded, shown

BREAKDOWN = ("reachable", *(f"failure.{c}" for c in CATEGORIES))  # on the parent, not in its table


def short(key: str) -> str:
    """An override key as a name shows it: ``run.seed`` is ``seed``, ``+sweeps`` is ``sweeps``."""
    bare = key.lstrip("+~")
    return bare[len("run.") :] if bare.startswith("run.") else bare


def configuration(child: Any, varying: list[str], job: str = "") -> str:
    """The configuration a child ran, without its replicate keys (``run.*``, e.g. the seed):
    ``io``, ``io/cwq``, ``cot/temperature:0.5``. A group override is read back from the
    group's ``name`` param, another key from its own param; a group with no param of its own
    (``+experiment``, ``+paper/row``) from the job's name (``job``, else the run's), which names
    what varies."""
    named = dict(part.partition("=")[::2] for part in (job or job_of(child)).split())
    parts = []
    for key in varying:
        bare = key.lstrip("+~")
        if bare.startswith("run."):
            continue
        value = child.data.params.get(bare if "." in bare else f"{bare}.name") or named.get(short(key), "-")
        parts.append(f"{short(key)}:{value}" if "." in bare else value)
    return "/".join(parts) or "all"


def aggregate(children: list[Any], varying: list[str], parent_id: str = "") -> dict[str, dict[str, float]]:
    """The mean of every headline figure and of the failure breakdown (where logged) per
    configuration, over its replicates. A run the sweep reused is named by its job in this sweep."""
    groups: dict[str, list[Any]] = {}
    for child in children:
        job = child.data.tags.get(f"{REUSED_TAG}{parent_id}", "")
        groups.setdefault(configuration(child, varying, job), []).append(child)
    table = {}
    for label, runs in sorted(groups.items()):
        row = {"runs": float(len(runs))}
        for metric in (*HEADLINE, *BREAKDOWN):
            values = [v for r in runs if not math.isnan(v := r.data.metrics.get(metric, math.nan))]
            row[metric] = sum(values) / len(values) if values else math.nan
        table[label] = row
    return table


def render(table: dict[str, dict[str, float]]) -> str:
    """The aggregated table in markdown, figures rounded as kgx prints them."""
    head = ["configuration", "runs", *HEADLINE]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, row in table.items():
        lines.append("| " + " | ".join([label, f"{row['runs']:.0f}", *(shown(m, row[m]) for m in HEADLINE)]) + " |")
    return "\n".join(lines)


def best_run(children: list[Any]) -> Optional[Any]:
    """The child with the highest hits@1 (None when none has one)."""
    scored = [c for c in children if not math.isnan(c.data.metrics.get("hits1", math.nan))]
    return max(scored, key=lambda c: c.data.metrics["hits1"], default=None)


def log_table(tracker: Tracker, parent_id: str, children: list[Any], varying: list[str]) -> str:
    """Give the parent run the sweep's table: under the plain names the sweep's mean over its
    configurations (so the parent's row in the runs table reads as the sweep, not as its best),
    the best configuration in tag ``best`` and the best run in tag ``best_child`` (name and id),
    every configuration's figures in artifact ``sweep_table.json`` (as metrics, one per cell,
    they would fill the dashboard's charts with a section per configuration), and the rounded
    table as its description."""
    from mlflow.entities import Metric

    table = aggregate(children, varying, parent_id)
    if not table:
        return ""
    best = max(table, key=lambda label: -math.inf if math.isnan(table[label]["hits1"]) else table[label]["hits1"])
    now = int(time.time() * 1000)
    metrics = []
    for m in (*HEADLINE, *BREAKDOWN):
        values = [row[m] for row in table.values() if not math.isnan(row[m])]
        if values:
            metrics.append(Metric(m, rounded(m, sum(values) / len(values)), now, 0))
    tracker.client.log_batch(parent_id, metrics=metrics)
    tracker.client.log_dict(parent_id, table, "sweep_table.json")
    text = render(table)
    top = best_run(children)
    if top is not None:
        tracker.client.set_tag(parent_id, "best_child", f"{top.info.run_name} ({top.info.run_id})")
    tracker.client.set_tag(parent_id, "best", best)
    note = f"Figures: the mean over the {len(table)} configurations. Best: {best}"
    tracker.client.set_tag(parent_id, "mlflow.note.content", f"{note}\n\n{text}")
    return text
