"""kg=subgraph at the size of RoG's WebQSP + CWQ: build time, store size, peak memory, 1-hop latency, per scope.

    python benchmarks/rog_subgraph_build.py                       # ~2,000 questions x ~4,000 triples
    python benchmarks/rog_subgraph_build.py --questions 200 --work /tmp/rog-bench   # a quick look
    python benchmarks/rog_subgraph_build.py --source $KGX_DATA_DIR/rog_sample/cwq-test-sample.parquet
    python benchmarks/rog_subgraph_build.py --scopes union        # one scope's store only

Writes a synthetic file in the exact RoG schema (``id, question, answer, q_entity, a_entity,
graph, choices``; graph = ``[head, relation, tail]`` strings) at the size of RoG's files: ~8M triples
drawn from a pool of ~2.6M entities (a third unnamed mids like ``m.0abc12``, the rest names) and
7,058 relations, each question a neighbourhood of its topic entity (whose out-degree follows rog_sample's: median 22,
p95 ~220), hubs shared across questions; or takes a RoG file as it is (``--source``).
Then it builds ``kg=subgraph`` from it for each scope, each in a child process (so that the peak
memory printed is that build's, from the child's own ``getrusage``), and prints the build's time,
triples/s, quads stored (the union store keeps a triple listed by many subgraphs once), the store's
size on disk, and the median and p95 milliseconds of the two 1-hop calls every method makes,
``relations(entity)`` and ``neighbors(entity, relation)``, in question scope (a fresh view per
call, so no result cache helps) and in union scope (its own store, cache cleared per call).
Targets: build under 10 minutes on 2 cores, a 1-hop call under 1 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENTITIES = 2_600_000
RELATIONS = 7_058
HUBS = 50_000  # popular entities (countries, languages, genders) that many subgraphs share
NODES_PER_QUESTION = 1_370  # WebQSP's mean nodes per subgraph (RoG)
TOPIC_DEGREE = 22  # median out-edges of a topic entity in rog_sample's WebQSP subgraphs (p95 221)


def pools(seed: int):
    """Entity and relation strings: names of realistic length, a third of entities mids."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    idx = pl.Series("i", np.arange(ENTITIES))
    words = pl.Series(
        [
            "north",
            "river",
            "john",
            "smith",
            "united",
            "film",
            "album",
            "city",
            "saint",
            "house",
            "music",
            "award",
            "college",
            "county",
            "war",
            "league",
            "party",
            "island",
            "book",
            "star",
        ]
    )
    first = words.gather(rng.integers(0, len(words), ENTITIES))
    second = words.gather(rng.integers(0, len(words), ENTITIES)).str.to_titlecase()
    names = first.str.to_titlecase() + " " + second + " " + idx.cast(pl.String)
    mids = "m.0" + idx.map_elements(lambda i: np.base_repr(i, 36).lower(), return_dtype=pl.String)
    entities = pl.Series("e", np.where(rng.random(ENTITIES) < 0.33, mids.to_numpy(), names.to_numpy()))
    domains = [f"domain{d}" for d in range(120)]
    relations = pl.Series("r", [f"{domains[i % 120]}.type{i % 997}.property_{i}" for i in range(RELATIONS)])
    return entities, relations


def write_synthetic(path: Path, questions: int, triples: int, seed: int) -> int:
    """The RoG-schema parquet file; returns its triples."""
    import numpy as np
    import polars as pl

    entities, relations = pools(seed)
    rng = np.random.default_rng(seed + 1)
    per_q = triples // questions
    nodes = rng.integers(HUBS, ENTITIES, (questions, NODES_PER_QUESTION))
    hubs = rng.integers(0, HUBS, (questions, NODES_PER_QUESTION // 10))
    pool = np.concatenate([nodes, hubs], axis=1)
    heads = np.take_along_axis(pool, rng.integers(0, pool.shape[1], (questions, per_q)), axis=1)
    # The topic entity (column 0) heads a lognormal number of edges: median 22, p95 ~220, as in
    # rog_sample's WebQSP subgraphs.
    degree = np.clip(rng.lognormal(np.log(TOPIC_DEGREE), 1.4, questions), 1, per_q // 2).astype(int)
    at_topic = np.arange(per_q)[None, :] < degree[:, None]
    heads[at_topic] = np.broadcast_to(pool[:, :1], heads.shape)[at_topic]
    tails = np.take_along_axis(pool, rng.integers(0, pool.shape[1], (questions, per_q)), axis=1)
    rels = rng.zipf(1.3, (questions, per_q)) % RELATIONS
    flat = pl.DataFrame(
        {
            "q": np.repeat(np.arange(questions), per_q),
            "h": entities.gather(heads.ravel()),
            "r": relations.gather(rels.ravel()),
            "t": entities.gather(tails.ravel()),
        }
    )
    graphs = flat.group_by("q", maintain_order=True).agg(graph=pl.concat_list("h", "r", "t"))
    topic = entities.gather(pool[:, 0])
    answer = entities.gather(tails[:, 0])
    frame = pl.DataFrame(
        {
            "id": [f"Synth-{i:05d}" for i in range(questions)],
            "question": [f"what is related to {t}?" for t in topic],
            "answer": [[a] for a in answer],
            "q_entity": [[t] for t in topic],
            "a_entity": [[a] for a in answer],
            "graph": graphs["graph"],
            "choices": [[] for _ in range(questions)],
        }
    )
    frame.write_parquet(path, row_group_size=64)
    return questions * per_q


def build(source: Path, cache: Path, scope: str) -> None:
    """The child process: build the store of ``scope`` as ``open_kg`` does, print its figures
    and the process's peak memory as JSON."""
    from dataclasses import asdict

    from kgx.kg.pipelines.rog_subgraphs import build_subgraphs

    store = cache / "kg" / ("subgraph" if scope == "question" else f"subgraph-{scope}")
    result = build_subgraphs([source], store, scope=scope)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB -> GB
    print(json.dumps({**asdict(result), "peak_gb": peak}, default=str))


def one_hop(stores: dict[str, Path], source: Path, samples: int, seed: int) -> dict[str, list[float]]:
    """Milliseconds of relations() and neighbors() per scope, at the topic entity of a sampled
    question and at a random head of its subgraph (where most of a search's calls land). A first
    pass over every scope only warms the page cache, as a run's first questions do."""
    import polars as pl

    from kgx.core.sources import name_id
    from kgx.kg.subgraph import SubgraphKG

    rows = pl.read_parquet(source, columns=["id", "q_entity", "graph"]).filter(
        pl.col("q_entity").list.len() > 0, pl.col("graph").list.len() > 0
    )
    rows = rows.sample(min(samples, rows.height), seed=seed)
    timings: dict[str, list[float]] = {}
    for timed in (False, True):
        for scope, store in stores.items():
            kg = SubgraphKG(store)
            for qid, topics, graph in rows.iter_rows():
                pick = random.Random(qid)
                for where, entity in (("topic", topics[0]), ("any node", pick.choice(graph)[0])):
                    view = kg.for_question(qid)
                    view._cache.clear()  # the union's cache is shared: every call must reach the store
                    start = time.perf_counter()
                    relations = view.relations(name_id(entity), "out")
                    took = 1000 * (time.perf_counter() - start)
                    if timed:
                        timings.setdefault(f"relations {scope:<8} {where}", []).append(took)
                    if not relations:  # a topic entity that only heads no edge here: nothing to follow
                        continue
                    start = time.perf_counter()
                    view.neighbors(name_id(entity), pick.choice(relations), "out")
                    took = 1000 * (time.perf_counter() - start)
                    if timed:
                        timings.setdefault(f"neighbors {scope:<8} {where}", []).append(took)
    return timings


def size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder."""
    return path.stat().st_size if path.is_file() else sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2_000)
    parser.add_argument("--triples", type=int, default=8_000_000, help="in all (split evenly over questions)")
    parser.add_argument("--samples", type=int, default=500, help="1-hop calls timed per scope and call")
    parser.add_argument("--work", type=Path, help="keep the file and store here (default: a temp folder)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reuse", action="store_true", help="keep stores already built in --work (latency only)")
    parser.add_argument("--source", type=Path, help="a RoG parquet file to build from instead of the synthetic one")
    parser.add_argument("--scopes", default="question,union", help="the stores to build and time")
    parser.add_argument("--build", nargs=3, metavar=("SOURCE", "CACHE", "SCOPE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        return build(Path(args.build[0]), Path(args.build[1]), args.build[2])
    work = args.work or Path(tempfile.mkdtemp(prefix="kgx-rog-bench."))
    work.mkdir(parents=True, exist_ok=True)
    source = args.source or work / f"synthetic-{args.questions}x{args.triples // args.questions}.parquet"
    start = time.perf_counter()
    if not source.exists():
        write_synthetic(source, args.questions, args.triples, args.seed)
    print(
        f"file: {source.name}, {size(source) / 2**20:,.1f} MB ({time.perf_counter() - start:.0f} s to write)",
        flush=True,
    )
    cache = work / "cache"
    if not args.reuse:
        shutil.rmtree(cache / "kg", ignore_errors=True)
    stores = {}
    for scope in args.scopes.split(","):
        command = [sys.executable, __file__, "--build", str(source), str(cache), scope]
        child = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
        built = json.loads(child.stdout.strip().splitlines()[-1])
        stores[scope] = Path(built["store"])
        memory = "reused: time of its build" if built["reused"] else f"peak memory {built['peak_gb']:.2f} GB"
        print(
            f"build {scope:<8}: {built['questions']:,} questions, {built['triples']:,} triples, "
            f"{built['quads']:,} quads (with names) in {built['seconds']:.0f} s = "
            f"{built['triples'] / built['seconds']:,.0f} triples/s; store {size(stores[scope]) / 2**30:.3f} GB "
            f"on disk; {memory}",
            flush=True,
        )
    for call, ms in one_hop(stores, source, args.samples, args.seed).items():
        ms.sort()
        print(
            f"1-hop {call:<28} median {statistics.median(ms):.3f} ms  p95 {ms[int(0.95 * len(ms))]:.3f} ms"
            f"  (n={len(ms)})"
        )
    if not args.work:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
