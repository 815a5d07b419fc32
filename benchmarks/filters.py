"""What each dataset's relation filters (``kg.filters``) drop: relations, triples, and the gold paths
that walk a dropped relation.

    KGX_DATA_DIR=/path/to/shared/data python benchmarks/filters.py

Reads each KG's source files as its config names them (``conf/kg/<name>.yaml``: its ``filters``,
the defaults where it sets none) and prints per KG the dropped relations with their triples, and,
for datasets that give gold paths (PathQuestion), how many questions' paths walk one. The same
counts under the default filters show what a KG's own filters keep.
"""

from __future__ import annotations

import fnmatch
import os
from collections import Counter
from pathlib import Path

import polars as pl
import yaml

from kgx.core.kg_config import DEFAULT_FILTERS
from kgx.kg.name_level import relation_id

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("KGX_DATA_DIR", "."))
# kg config -> (source files and their separator, question files with gold paths)
KGS = {
    "metaqa": ([("metaqa/kb.txt", "|")], []),
    "pathquestion": (
        [(f"pathquestion/{f}", "\t") for f in ("2H-kb.txt", "3H-kb.txt", "PQL2-KB.txt", "PQL3-KB.txt")],
        [f"pathquestion/{f}" for f in ("PQ-2H.txt", "PQ-3H.txt", "PQL-2H.txt", "PQL-3H.txt")],
    ),
}
ROG = ("rog_sample/webqsp-test-sample.parquet", "rog_sample/cwq-test-sample.parquet")


def dropped(relation: str, filters: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(relation, p) for p in filters)


def filters_of(kg: str) -> list[str]:
    found = yaml.safe_load((ROOT / "conf" / "kg" / f"{kg}.yaml").read_text()).get("filters")
    return list(found) if found else list(DEFAULT_FILTERS)


def report(name: str, relations: Counter, filters: list[str], paths: dict[str, list[list[str]]]) -> None:
    gone = {r: n for r, n in relations.items() if dropped(r, filters)}
    print(f"{name}: filters {filters}")
    triples = f"{sum(gone.values()):,} of {sum(relations.values()):,} triples"
    print(f"  drops {len(gone)} of {len(relations)} relations, {triples}")
    for relation, n in sorted(gone.items(), key=lambda x: -x[1])[:12]:
        print(f"    {relation:<55}{n:>8,}")
    for file, rows in paths.items():
        hit = sum(any(dropped(r, filters) for r in row) for row in rows)
        print(f"  {file}: {hit} of {len(rows)} questions' gold paths walk a dropped relation")


def main() -> None:
    for kg, (sources, questions) in KGS.items():
        fmt = kg
        relations: Counter = Counter()
        for file, sep in sources:
            for line in (DATA / file).read_text(encoding="utf-8").splitlines():
                parts = line.split(sep)
                if len(parts) == 3:
                    relations[relation_id(fmt, parts[1])] += 1
        paths = {
            q: [
                [relation_id(fmt, r) for r in line.split("\t")[2].split("#")[1::2] if r and r != "<end>"]
                for line in (DATA / q).read_text(encoding="utf-8").splitlines()
                if line.count("\t") >= 2
            ]
            for q in questions
        }
        for label, filters in ((f"{kg} (its own)", filters_of(kg)), (f"{kg} (defaults)", list(DEFAULT_FILTERS))):
            report(label, relations, filters, paths)
    for file in ROG:
        frame = pl.read_parquet(DATA / file, columns=["graph"])
        relations = Counter(r for graph in frame["graph"] for _, r, _ in graph)
        report(f"subgraph {file}", relations, filters_of("subgraph"), {})


if __name__ == "__main__":
    main()
