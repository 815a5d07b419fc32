"""LLM calls and tokens per question of KG methods on the same RoG-sample questions, scripted backbone.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/rog_cost.py                 # ToG and Paths-over-Graph
    KGX_DATA_DIR=... python benchmarks/rog_cost.py --methods tog,paths_over_graph --limit 100 --dataset cwq

Runs each method with ``llm=scripted`` (kgx.llm.scripted: replies derived from the prompt, real token
counts) on the first ``--limit`` questions of ``rog_sample``'s WebQSP (or CWQ) file, ``kg=subgraph`` in
question scope, each at its paper settings for the dataset (``<method>_webqsp_rog``), and prints per
method: questions, errors, LLM calls per question (mean and most), input, output and total tokens per
question, KG queries per question and the method's call bound. The scripted backbone is no model: its
choices are word overlaps, so the figures are each method's cost for that way of choosing, the same for
every method, not a real model's (whose answers end a search earlier or later). KG stores are built
once under ``--work``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

METHODS = ("tog", "paths_over_graph")


def run(method: str, dataset: str, limit: int, work: Path):
    """One scripted run in process on the sample file, question scope; returns its spec and records."""
    from rog_oracle import spec

    from kgx.run.execute import execute

    chosen = spec(method, dataset, "question", limit, work, 1, llm="scripted")
    return chosen, execute(chosen, work).records


def bound(spec) -> str:
    """The method's calls-per-question bound at the run's settings, if it declares one."""
    from kgx.methods import method as registered

    found = getattr(importlib.import_module(registered(spec.method.name).answer.__module__), "call_bound", None)
    return str(found(spec.method)) if found else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--dataset", default="webqsp", choices=("webqsp", "cwq"))
    parser.add_argument("--limit", type=int, default=100, help="the first N questions of the file (default 100)")
    parser.add_argument("--work", type=Path, help="stores, runs, MLflow store (default: a temp folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kgx-rog-cost."))
    print(f"{args.dataset}: the first {args.limit} questions of rog_sample, scripted backbone, question scope")
    print(
        f"{'method':<18}{'n':>5}{'errors':>8}{'calls/q':>9}{'most':>6}{'in tok/q':>10}{'out tok/q':>11}"
        f"{'tokens/q':>10}{'KG q/q':>8}{'bound':>7}",
        flush=True,
    )
    for name in args.methods.split(","):
        spec, records = run(name, args.dataset, args.limit, work)
        n = len(records)
        calls = [r.calls for r in records]
        tokens_in = sum(r.usage.input_tokens for r in records) / n
        tokens_out = sum(r.usage.output_tokens for r in records) / n
        kg = sum(r.kg.queries for r in records) / n
        errors = sum(r.status == "error" for r in records)
        print(
            f"{name:<18}{n:>5}{errors:>8}{sum(calls) / n:>9.2f}{max(calls):>6}{tokens_in:>10.0f}{tokens_out:>11.0f}"
            f"{tokens_in + tokens_out:>10.0f}{kg:>8.1f}{bound(spec):>7}",
            flush=True,
        )
    if not args.work:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
