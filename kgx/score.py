"""``python -m kgx.score``: score released predictions with the rules kgx's own runs use.

Other systems' outputs can then be compared with kgx runs figure for figure::

    python -m kgx.score --dataset webqsp --predictions lmp_webqsp_gpt-4_1hop.jsonl --rule lmp

The formats it reads (kgx, LMP, PoG, ToG, AoG records) and the matching of records to questions
are kgx.results.released's, which ``kgx.report paper --released`` uses as well.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from kgx.core.config import ConfigError
from kgx.datasets import DataError, dataset_config, dataset_names, load
from kgx.results.released import RULES, match, read_predictions, summary

# --------------------------------------------------------------------------- command line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m kgx.score", description="Score released predictions with the rules kgx's own runs use."
    )
    parser.add_argument(
        "--dataset",
        required=True,
        choices=dataset_names(),
        metavar="DATASET",
        help=f"a conf/dataset option: {', '.join(dataset_names())}",
    )
    parser.add_argument("--predictions", required=True, type=Path, help="a JSONL file of predictions")
    parser.add_argument(
        "--rule",
        required=True,
        choices=sorted(RULES),
        help="exact: kgx.core.metrics.hits1 on the parsed answers; tog: hits1_tog on the "
        "text (ToG/PoG); lmp: hit_any, LMP's any-mention rule",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        questions = load(dataset_config(args.dataset, whole=True))
        predictions = read_predictions(args.predictions)
    except (ConfigError, DataError) as exc:
        sys.exit(f"kgx.score: error: {exc}")
    records = predictions.records
    pairs, unmatched = match(records, questions)
    hits, f1 = summary(pairs, args.rule)
    formats = ", ".join(f"{name} {n:,}" for name, n in Counter(r.format for r in records).most_common())
    superseded = (
        f", and {predictions.superseded:,} superseded by a later record of the same id"
        if predictions.superseded
        else ""
    )
    print(
        f"{args.predictions}: {len(records):,} records ({formats or 'none'}){superseded}; dataset "
        f"{args.dataset}: {len(questions):,} questions, {len(questions) - len(pairs):,} without a prediction"
    )
    print(f"n={len(pairs)} hits1={hits:.1f} f1={f1:.1f} unmatched={unmatched}")


if __name__ == "__main__":
    main()
