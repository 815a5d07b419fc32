"""Reachability of MetaQA gold answers: share reachable, unknown, KG queries and time
per question at each question set's own depth and one hop less, then the same from the cache.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/reach.py            # 100 questions per hop count
    KGX_DATA_DIR=... python benchmarks/reach.py --limit 20 --cache /tmp/c   # fewer; another store cache

The data README says of the reconstructed KB: 1-hop answers are all in it, at least one answer
of 97.7% of 2-hop and 99.9% of 3-hop questions. The KG store is built under ``--cache`` on first
use (``run.cache_dir``, shared with runs); reachability results go to a temporary directory, so
each invocation searches afresh and then reads its own results back.

Rows ``cvt:*`` search StructGPT's horizon (a hop out of an unnamed node is free) at depth = hops:
``cvt:ask`` as on a KG that may hold CVTs (each level's namedness is asked),
``cvt:none`` knowing from the KG's sources that it has none (``kgx.kg.unnamed_possible``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

HOPS = (1, 2, 3)


def load(hops: int, limit: int, cache: Path):
    """The run's questions and KG as ``python -m kgx kg=metaqa dataset=metaqa_<hops>hop`` has them."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from kgx import datasets
    from kgx.core.paths import CONF_DIR
    from kgx.kg import open_kg
    from kgx.run import preflight
    from kgx.run.compose import register_schemas
    from kgx.run.spec import to_run_spec

    register_schemas()
    GlobalHydra.instance().clear()
    with initialize_config_dir(str(CONF_DIR), version_base=None):
        cfg = compose(
            "config",
            [
                "kg=metaqa",
                f"dataset=metaqa_{hops}hop",
                f"dataset.limit={limit}",
                f"run.cache_dir={cache}",
                "llm=scripted",
            ],
        )
    GlobalHydra.instance().clear()
    spec = to_run_spec(cfg)
    kg = open_kg(spec.kg, cache)
    questions, _ = preflight.resolve_names(datasets.load(spec.dataset), kg)
    key = hashlib.sha256(json.dumps(asdict(spec.kg), sort_keys=True).encode()).hexdigest()
    return questions, kg, key, spec.kg


def measure(reacher, questions, horizon) -> dict[str, float]:
    start = time.perf_counter()
    results = [reacher.check(q, horizon) for q in questions]
    seconds = time.perf_counter() - start
    queries = [r.queries for r in results]
    return {
        "reachable": 100 * sum(r.reachable is True for r in results) / len(results),
        "unknown": 100 * sum(r.reachable is None for r in results) / len(results),
        "q_mean": statistics.mean(queries),
        "q_max": max(queries),
        "s_per_q": seconds / len(results),
        "cached": 100 * sum(r.cached for r in results) / len(results),
        "reasons": sorted({r.reason.split(" (")[0] for r in results if r.reason}),
    }


def main() -> None:
    from kgx.core.types import Horizon
    from kgx.diagnose.reach import Reacher
    from kgx.kg import unnamed_possible

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=100, help="first questions of each test set")
    parser.add_argument("--cache", type=Path, default=Path(".kgx_cache"), help="run.cache_dir (the KG store)")
    parser.add_argument("--max-frontier", type=int, default=20_000)
    args = parser.parse_args()
    print(
        f"{'set':<12}{'depth':>6}{'pass':>9}{'reach%':>8}{'unknown%':>10}{'q/mean':>8}{'q/max':>7}{'s/q':>9}  reasons"
    )
    for hops in HOPS:
        questions, kg, key, kg_cfg = load(hops, args.limit, args.cache)
        passes = [(Horizon(depth), True, attempt) for depth in (hops, hops - 1) for attempt in ("search", "cached")]
        passes += [(Horizon(hops, cvt_free=True), True, "cvt:ask"), (Horizon(hops, cvt_free=True), False, "cvt:none")]
        with tempfile.TemporaryDirectory() as results:
            for horizon, unnamed, attempt in passes:
                fresh = Path(tempfile.mkdtemp(dir=results)) if attempt.startswith("cvt") else Path(results)
                unnamed = unnamed or unnamed_possible(kg_cfg)
                reacher = Reacher(kg, key, fresh, max_frontier=args.max_frontier, unnamed=unnamed)
                row = measure(reacher, questions, horizon)
                reacher.close()
                print(
                    f"{f'{hops}-hop x{len(questions)}':<12}{horizon.depth:>6}{attempt:>9}{row['reachable']:>8.1f}"
                    f"{row['unknown']:>10.1f}{row['q_mean']:>8.2f}{row['q_max']:>7}{row['s_per_q']:>9.4f}"
                    f"  {', '.join(row['reasons'])}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
