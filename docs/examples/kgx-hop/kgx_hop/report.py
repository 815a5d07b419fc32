"""``python -m kgx.report hops``: each run's method with its hits@1 and LLM calls per question."""

from __future__ import annotations

import argparse

from kgx.report import load_runs
from kgx.report.commands import report_command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metric", default="hits1")


@report_command("hops", "each run's method, a metric and its LLM calls per question", _arguments)
def hops(args: argparse.Namespace) -> str:
    frame = load_runs(args.experiment, args.tracking_uri, args.parent)
    rows = frame.select("params.method.name", f"metrics.{args.metric}", "metrics.llm_calls_per_q").rows()
    return "".join(f"{method}\t{value:.1f}\t{calls:.2f}\n" for method, value, calls in sorted(rows))
