"""Every KG method on RoG's per-question subgraphs with the oracle backbone: errors, ceilings, coverage.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/rog_oracle.py              # 400 + 400 questions
    KGX_DATA_DIR=... python benchmarks/rog_oracle.py --limit 50 --methods lmp,tog   # a quicker look
    KGX_DATA_DIR=... python benchmarks/rog_oracle.py --scopes question              # the papers' setting only

Runs lmp, knowpath, cgpe, tog, tog_r, pog, structgpt, fidelis, paths_over_graph and gog with ``kg=subgraph``
on ``rog_sample``'s WebQSP and CWQ files (the exact schema of HF rmanluo/RoG-webqsp and RoG-cwq; graphs from the replay
KG, so these are not accuracy figures) in both scopes, ``llm=oracle``, and prints per method,
dataset and scope: errors (must be 0), Hits@1 (the oracle's ceiling for the method's search),
and answer coverage: the share of questions with a gold answer reachable within the method's
horizon in the KG the question sees (``reachable``). The first line per dataset gives the share
whose ``a_entity`` is in the question's own subgraph at all, read from the file. The stores are
built once per file and scope under ``--work`` (``run.cache_dir``) and reused by every run.
Coverage counts the questions whose gold answer is a node of the KG they see: in the union, a
gold answer that only another question's subgraph holds is a node, so a few more count (as not
reachable) than in question scope.

On 2 shared cores a method takes 10 s to about 2 minutes per scope and 400 questions (CGPE the
longest: its name searches scan every name of the KG a question sees); all 40 runs ~45 minutes.
``--limit`` keeps the whole table short.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

METHODS = ("lmp", "knowpath", "cgpe", "tog", "tog_r", "pog", "structgpt", "fidelis", "paths_over_graph", "gog")
DATASETS = ("webqsp", "cwq")
SCOPES = ("question", "union")


def spec(method: str, dataset: str, scope: str, limit: int | None, work: Path, concurrency: int, llm: str = "oracle"):
    """The run spec of one run on a sample file, as ``python -m kgx`` would compose it."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.spec import to_run_spec

    register_schemas()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(
            config_name="config",
            overrides=[
                f"method={method}",
                f"llm={llm}",
                "llm.cache=false",
                f"dataset={dataset}_rog",
                f"dataset.path=rog_sample/{dataset}-test-sample.parquet",
                f"dataset.limit={limit or 'null'}",
                "kg=subgraph",
                f"kg.scope={scope}",
                "run.progress=false",
                "run.traces=off",
                "run.explain=0",
                f"run.concurrency={concurrency}",
                f"run.cache_dir={work / 'cache'}",
                f"run.output_dir={work / 'runs' / f'{method}-{dataset}-{scope}-{llm}'}",
                f"run.tracking_uri=sqlite:///{work / 'mlflow.db'}",
            ],
        )
    return to_run_spec(cfg)


def run(method: str, dataset: str, scope: str, limit: int | None, work: Path, concurrency: int, llm: str = "oracle"):
    """One run in process (``llm=oracle`` unless ``llm`` says otherwise); returns its summary."""
    from kgx.run.execute import execute

    return execute(spec(method, dataset, scope, limit, work, concurrency, llm), work).summary


def in_subgraph(dataset: str, limit: int | None) -> tuple[int, int]:
    """(questions with an a_entity among their subgraph's nodes, questions), from the file."""
    import polars as pl

    from kgx.core.paths import resolve

    frame = pl.read_parquet(resolve(f"rog_sample/{dataset}-test-sample.parquet"), columns=["a_entity", "graph"])
    frame = frame.head(limit) if limit else frame
    hits = sum(bool(set(answers) & {x for h, _, t in graph for x in (h, t)}) for answers, graph in frame.iter_rows())
    return hits, frame.height


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="first N questions of each file (default: all 400)")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--scopes", default=",".join(SCOPES))
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--work", type=Path, help="stores, runs, MLflow store (default: a temp folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kgx-rog-oracle."))
    print(
        f"{'method':<18}{'dataset':<8}{'scope':<10}{'n':>5}{'errors':>8}{'hits@1':>8}{'coverage':>10}{'s':>7}",
        flush=True,
    )
    for dataset in DATASETS:
        hits, n = in_subgraph(dataset, args.limit)
        print(
            f"{'(file)':<18}{dataset:<8}{'question':<10}{n:>5}{'':>8}{'':>8}{100 * hits / n:>10.1f}"
            "  a_entity in the question's own subgraph",
            flush=True,
        )
        for method in args.methods.split(","):
            for scope in args.scopes.split(","):
                start = time.perf_counter()
                s = run(method, dataset, scope, args.limit, work, args.concurrency)
                print(
                    f"{method:<18}{dataset:<8}{scope:<10}{int(s['n_questions']):>5}{int(s['errors']):>8}"
                    f"{s['hits1']:>8.1f}{s.get('reachable', float('nan')):>10.1f}"
                    f"{time.perf_counter() - start:>7.0f}",
                    flush=True,
                )
    if not args.work:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
