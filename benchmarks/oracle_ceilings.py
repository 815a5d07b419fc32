"""Oracle ceilings per KG method on the chain datasets: MetaQA 2-hop/3-hop and PathQuestion PQ-2H/PQ-3H.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/oracle_ceilings.py                 # 50 per set
    KGX_DATA_DIR=... python benchmarks/oracle_ceilings.py --sets pq_3h --methods structgpt --why
    KGX_DATA_DIR=... python benchmarks/oracle_ceilings.py --sets costar --methods pog,structgpt \\
        --set method.walk_back=true                                                  # co-stars, walking back
    python benchmarks/oracle_ceilings.py --heldout --why     # kgx's held-out set on its small KBs (no data needed)
    KGX_DATA_DIR=... python benchmarks/oracle_ceilings.py --heldout --full-kb                # ... on the whole KBs
    python benchmarks/oracle_ceilings.py --fresh --why       # the fresh held-out set (tests/data/heldout_fresh)

Runs each method with ``llm=oracle`` (kgx.llm.oracle: it takes what lies on the question's gold chain,
in the chain's order) on a seeded sample of each set's test split and prints per method and set: the
questions, how many had a gold answer within the method's depth (``reach``), how many the oracle got
right, the ceiling (right / reachable, in %) and the misses by category. ``--why`` adds each miss's
drill-down note (``left_at``: where the search left the gold path, and whether the method's design or
the KG stopped it). ``costar`` is the MetaQA 2-hop questions whose chain walks one relation back and
forth (co-stars, co-directors, co-writers, and movies sharing an actor, director or writer): the ones a
method that never walks back along the relation that reached an entity cannot answer on a KG without
inverse relations. ``--heldout`` runs kgx's held-out set instead (tests/data/heldout, built by
benchmarks/heldout_set.py: questions in kgx's own words), every question of each set, on the small
KBs committed with it or, with ``--full-kb``, on the whole MetaQA and PathQuestion KBs; the
figures on the small KBs are the ones tests/methods/test_heldout.py holds. ``--fresh`` runs the second
held-out set (tests/data/heldout_fresh, built by benchmarks/heldout_fresh.py: MetaQA topics drawn
with a seed nobody tuned to, in new wording) the same way. Runs go to a temporary folder;
KG stores are kept in ``--cache``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

METHODS = ("lmp", "knowpath", "tog", "tog_r", "cgpe", "pog", "structgpt", "fidelis", "paths_over_graph", "gog")
SETS = {  # set -> (dataset, kg)
    "metaqa_2hop": ("metaqa_2hop", "metaqa"),
    "metaqa_3hop": ("metaqa_3hop", "metaqa"),
    "pq_2h": ("pq_2h", "pathquestion"),
    "pq_3h": ("pq_3h", "pathquestion"),
    "costar": ("metaqa_2hop", "metaqa"),
}
HELDOUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "heldout"
FRESH = HELDOUT.parent / "heldout_fresh"
HELDOUT_SETS = ("metaqa_1hop", "metaqa_2hop", "metaqa_3hop", "pq_2h", "pq_3h")
FRESH_SETS = ("metaqa_1hop", "metaqa_2hop", "metaqa_3hop")
EXTRA = {"lmp": ["method.depth=3"]}  # LMP's default depth 1 cannot reach a 2-hop answer
BACK_AND_FORTH = ("actor_to_movie_to_actor", "director_to_movie_to_director", "writer_to_movie_to_writer")


def pick(name: str, dataset: str, size: int, seed: int) -> list[str]:
    """The question ids of a set: a seeded sample of the test split (costar: of its back-and-forth types)."""
    import random

    from kgx import datasets
    from kgx.datasets import dataset_config

    questions = datasets.load(replace(dataset_config(dataset), limit=None))
    if name == "costar":
        kinds = {*BACK_AND_FORTH, *(f"movie_to_{k}_to_movie" for k in ("actor", "director", "writer"))}
        questions = [q for q in questions if q.meta.get("qtype") in kinds]
    chosen = random.Random(seed).sample(questions, min(size, len(questions)))
    return [q.id for q in chosen]


def heldout(name: str, full_kb: bool, folder: Path = HELDOUT) -> list[str]:
    """The dataset and KG overrides of a held-out set: its questions, on its small KB or the whole one."""
    metaqa = name.startswith("metaqa")
    where = ["dataset=custom", f"dataset.path={folder / (name + '.jsonl')}", f"dataset.name={folder.name}_{name}"]
    if full_kb:
        return [*where, f"kg={'metaqa' if metaqa else 'pathquestion'}"]
    small = folder / ("metaqa_kb.txt" if metaqa else "pq_kb.txt")
    kg = "metaqa" if metaqa else "pathquestion"
    return [*where, f"kg={kg}", f"kg.name={folder.name}_{kg}", f"kg.sources=[{small}]"]


def run(method: str, dataset: str, kg: str, ids: list[str], overrides: list[str], cache: Path):
    """One oracle run of ``method`` on the questions ``ids``: its records."""
    from fidelity import outcome

    chosen = [f"method={method}", *EXTRA.get(method, []), "llm=oracle", "llm.cache=false"]
    where = [f"dataset={dataset}", f"dataset.ids=[{','.join(ids)}]", f"kg={kg}"] if ids else []
    return outcome([*chosen, *where, *overrides], cache).records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="metaqa_2hop,metaqa_3hop,pq_2h,pq_3h")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--questions", type=int, default=50, help="per set, a seeded sample of the test split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", nargs="*", default=[], help="extra overrides for every run")
    parser.add_argument("--why", action="store_true", help="print each miss's drill-down note")
    parser.add_argument("--cache", type=Path, default=Path(".kgx_cache"))
    parser.add_argument("--heldout", action="store_true", help="kgx's held-out set (tests/data/heldout)")
    parser.add_argument("--full-kb", action="store_true", help="with --heldout: on the whole KBs ($KGX_DATA_DIR)")
    parser.add_argument("--fresh", action="store_true", help="the fresh held-out set (tests/data/heldout_fresh)")
    args = parser.parse_args()
    folder = FRESH if args.fresh else HELDOUT
    args.heldout = args.heldout or args.fresh
    if args.heldout and args.sets == parser.get_default("sets"):
        args.sets = ",".join(FRESH_SETS if args.fresh else HELDOUT_SETS)
    print(f"{'method':<18}{'set':<13}{'n':>4}{'reach':>6}{'right':>6}{'ceiling%':>9}{'s':>6}  misses", flush=True)
    for name in args.sets.split(","):
        dataset, kg = SETS.get(name, ("", ""))
        ids = [] if args.heldout else pick(name, dataset, args.questions, args.seed)
        extra = [*heldout(name, args.full_kb, folder), *args.set] if args.heldout else args.set
        for method in args.methods.split(","):
            start = time.perf_counter()
            records = run(method, dataset, kg, ids, extra, args.cache.resolve())
            reach = [r for r in records if r.reach is not None and r.reach.reachable]
            right = [r for r in reach if r.breakdown == "correct"]
            misses = Counter(r.breakdown for r in records if r.breakdown != "correct")
            ceiling = 100.0 * len(right) / len(reach) if reach else float("nan")
            print(
                f"{method:<18}{name:<13}{len(records):>4}{len(reach):>6}{len(right):>6}{ceiling:>9.1f}"
                f"{time.perf_counter() - start:>6.0f}  {dict(sorted(misses.items()))}",
                flush=True,
            )
            if args.why:
                for r in records:
                    if r.breakdown != "correct":
                        note = (r.left_at or {}).get("why", r.prediction.reason)
                        print(f"    {r.breakdown:<14}{r.question[:70]:<72}{note}", flush=True)


if __name__ == "__main__":
    main()
