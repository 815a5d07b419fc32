"""Real endpoints: the same runs on the embedded store, ``oxigraph serve`` and Virtuoso.

    KGX_DATA_DIR=/path/to/data python benchmarks/endpoints.py [--questions 30]

On the MetaQA KB (built into a store under a temp directory) it prints:

* for lmp, knowpath, tog, tog_r and cgpe on the first N MetaQA 2-hop questions with the scripted
  backbone: whether the predictions on each endpoint equal the embedded store's, and the median
  milliseconds per KG call of each backend (from the runs' traces);
* exact-name lookups (``kg.search`` of the topic entities' names) on Virtuoso: median ms;
* truncation: with Virtuoso's ResultSetMaxRows=100, the share of hub lookups (more than 100
  neighbours) that kgx reports as cut rather than using as complete.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

METHODS = ("lmp", "knowpath", "tog", "tog_r", "cgpe")


def run(method: str, n: int, work: Path, cache: Path, kg: list[str]) -> Path:
    """One run in its own tracking store; returns its output directory."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.execute import execute
    from kgx.run.spec import to_run_spec

    register_schemas()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(
            config_name="config",
            overrides=[
                f"method={method}",
                "llm=scripted",
                "dataset=metaqa_2hop",
                f"dataset.limit={n}",
                "run.progress=false",
                f"run.cache_dir={cache}",
                f"run.output_dir={work}",
                f"run.tracking_uri=sqlite:///{work}/mlflow.db",
                "kg=metaqa",
                *kg,
            ],
        )
    return execute(to_run_spec(cfg), work).out_dir


def answers(out_dir: Path) -> dict[str, list[str]]:
    rows = [json.loads(line) for line in (out_dir / "predictions.jsonl").read_text().splitlines()]
    return {r["id"]: r["prediction"]["answers"] for r in rows}


def kg_ms(out_dir: Path) -> list[float]:
    """Milliseconds of every KG call the run's traces recorded."""
    from kgx.core.trace_store import SUFFIX, shard_lines

    found = []
    for shard in (out_dir / "traces").glob(f"*{SUFFIX}"):
        for line in shard_lines(shard.read_bytes()).values():
            for event in json.loads(line)["events"]:
                if "operation" in event and not event.get("error"):
                    found.append(1000 * event["latency_s"])
    return found


def topic_names(n: int) -> list[str]:
    from dataclasses import replace

    from kgx.datasets import dataset_config, load

    questions = load(replace(dataset_config("metaqa_2hop"), limit=n))
    return sorted({name for q in questions for name in q.topic_entities.values()})


def search_ms(url: str, names: list[str]) -> list[float]:
    from kgx.kg.endpoint import EndpointKG

    kg = EndpointKG(url)
    timings = []
    for name in names:
        start = time.perf_counter()
        kg.search(name)
        timings.append(1000 * (time.perf_counter() - start))
    return timings


def hubs(store: Path, threshold: int, count: int) -> list[tuple[str, str, str]]:
    """(entity, relation, direction) lookups with more than ``threshold`` neighbours, both
    directions (a genre or a year has thousands of films pointing at it)."""
    import pyoxigraph as ox

    from kgx.kg.freebase import NS

    graph = ox.Store.read_only(str(store))
    found = []
    for direction, pattern, key in (("out", "?e ?p ?x", "?e"), ("in", "?x ?p ?e", "?e")):
        rows = graph.query(
            f"SELECT {key} ?p (COUNT(?x) AS ?n) WHERE {{ {pattern} FILTER(isIRI({key})) }} "
            f"GROUP BY {key} ?p HAVING (COUNT(?x) > {threshold}) ORDER BY DESC(?n) LIMIT {count}"
        )
        found += [(r[0].value[len(NS) :], r[1].value[len(NS) :], direction) for r in rows]
    return found


def truncation(store: Path, lookups: list[tuple[str, str, str]]) -> tuple[int, int]:
    from kgx.kg.endpoint import EndpointKG, KGUnavailable
    from kgx.kg.virtuoso import VirtuosoServer

    detected = 0
    with VirtuosoServer(store, max_rows=100) as server:
        kg = EndpointKG(server.url, retries=0)
        for entity, relation, direction in lookups:
            try:
                kg.neighbors(entity, relation, direction)
            except KGUnavailable as exc:
                detected += exc.kind == "kg.truncated"
    return detected, len(lookups)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--only", choices=("truncation",), help="run one part alone")
    args = parser.parse_args()
    if not os.environ.get("KGX_DATA_DIR"):
        raise SystemExit("set KGX_DATA_DIR to the folder holding metaqa/ (see ../shared/data/README.md)")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from kgx.kg.serve import OxigraphServer
    from kgx.kg.virtuoso import VirtuosoServer

    root = Path(tempfile.mkdtemp(prefix="kgx-endpoints-"))
    cache = root / "cache"
    if args.only == "truncation":
        from kgx.core.paths import resolve
        from kgx.kg import build_store

        store = build_store([resolve("metaqa/kb.txt")], "metaqa", cache / "kg" / "metaqa")
        detected, total = truncation(store, hubs(store, 100, 20))
        print(f"truncation with ResultSetMaxRows=100: {detected}/{total} hub lookups reported as cut")
        return
    latency: dict[str, list[float]] = {"embedded": [], "oxigraph serve": [], "virtuoso": []}
    same: dict[str, dict[str, bool]] = {}
    embedded = {m: run(m, args.questions, root / f"embedded-{m}", cache, []) for m in METHODS}
    for m in METHODS:
        latency["embedded"] += kg_ms(embedded[m])
    store = cache / "kg" / "metaqa"
    with OxigraphServer(store) as oxi, VirtuosoServer(store) as virt:
        print(f"virtuoso: started in {virt.startup_s:.1f} s, loaded the MetaQA KB in {virt.load_s:.1f} s")
        for name, url in (("oxigraph serve", oxi.url), ("virtuoso", virt.url)):
            for m in METHODS:
                out = run(
                    m,
                    args.questions,
                    root / f"{name.split()[0]}-{m}",
                    cache,
                    ["kg=sparql", f"kg.endpoint={url}", "kg.name=metaqa"],
                )
                same.setdefault(m, {})[name] = answers(out) == answers(embedded[m])
                latency[name] += kg_ms(out)
        exact = search_ms(virt.url, topic_names(args.questions))
    print(f"\npredictions equal to the embedded store's ({args.questions} MetaQA 2-hop questions, scripted):")
    print("method   | oxigraph serve | virtuoso")
    for m in METHODS:
        print(f"{m:8} | {'yes' if same[m]['oxigraph serve'] else 'NO':14} | {'yes' if same[m]['virtuoso'] else 'NO'}")
    print(
        "\nmedian ms per KG call: "
        + ", ".join(f"{name} {statistics.median(ms):.2f} ({len(ms)} calls)" for name, ms in latency.items() if ms)
    )
    print(f"virtuoso exact-name search: median {statistics.median(exact):.1f} ms over {len(exact)} names")
    detected, total = truncation(store, hubs(store, 100, 20))
    print(f"truncation with ResultSetMaxRows=100: {detected}/{total} hub lookups reported as cut")


if __name__ == "__main__":
    main()
