"""``python -m kgx.score``: score released predictions with the rules kgx's own runs use.

Other systems' outputs can then be compared with kgx runs figure for figure::

    python -m kgx.score --dataset webqsp --predictions lmp_webqsp_gpt-4_1hop.jsonl --rule lmp
    python -m kgx.score --dataset cwq --predictions gnn-rag-cwq.detailed_eval_result.jsonl

Without ``--rule`` every rule's figure is printed, each named. The formats it reads (kgx, LMP,
PoG, ToG, AoG, RoG and GNN-RAG records) and the matching of records to questions are
kgx.results.released's, which ``kgx.report paper --released`` uses as well. A RoG or GNN-RAG file
carries its own gold and, once evaluated, the authors' figures: it is also scored under the
authors' rule (kgx.results.rog_eval), beside kgx's, and compared with their ``eval_result.txt``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from kgx.core.config import ConfigError
from kgx.core.metrics import normalize
from kgx.core.types import Question
from kgx.datasets import DataError, dataset_config, dataset_names, load
from kgx.results import rog_eval
from kgx.results.released import (
    ROG,
    RULE_TEXT,
    RULES,
    PredictionRecord,
    Predictions,
    authors_figures,
    figures,
    match,
    read_predictions,
)

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
        default=None,
        choices=sorted(RULES),
        help="exact: kgx.core.metrics.hits1 on the parsed answers; tog: hits1_tog on the "
        "text (ToG/PoG); lmp: hit_any, LMP's any-mention rule; default: every rule",
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
    if records and not pairs:
        sys.exit(f"kgx.score: error: {matched_none(args.predictions, records, args.dataset, questions)}")
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
    if predictions.repeated and any(r.format != "kgx" for r in records):
        print(repeated_line(predictions))
    found = figures(pairs)
    if args.rule is None:
        print(every_rule(found, args.dataset, len(pairs)))
    if any(r.format == ROG for r in records):
        print(authors_report(args.predictions, records, pairs, found, args.dataset))
    if args.rule is None:
        print(f"n={len(pairs)} {' '.join(f'{k}={v:.1f}' for k, v in found.items())} unmatched={unmatched}")
    else:
        print(f"n={len(pairs)} hits1={found[RULES[args.rule]]:.1f} f1={found['f1']:.1f} unmatched={unmatched}")


def every_rule(found: dict[str, float], dataset: str, n: int) -> str:
    """kgx's figure under each rule, the rule named."""
    lines = [f"kgx's rules, against dataset {dataset}'s gold, over the {n:,} questions with a prediction:"]
    lines += [f"  {rule:<6} {metric:<10} {found[metric]:5.1f}  {RULE_TEXT[rule]}" for rule, metric in RULES.items()]
    lines.append(f"  {'':<6} {'f1':<10} {found['f1']:5.1f}  F1 of the answers against the gold answers")
    return "\n".join(lines)


def matched_none(path: Path, records: list[PredictionRecord], dataset: str, questions: list[Question]) -> str:
    """Why a file gives no figure: none of its records is a question of the dataset."""
    ids = [r.id for r in records if r.id is not None][:3]
    theirs = f"its ids {', '.join(ids)}, ..." if ids else f"its first question '{records[0].question}'"
    return (
        f"{path}: none of its {len(records):,} records is a question of dataset {dataset} "
        f"({len(questions):,} questions, ids {', '.join(q.id for q in questions[:2])}, ...) by id or by question "
        f"text ({theirs}); is --dataset the file's?"
    )


def repeated_line(predictions: Predictions) -> str:
    """One line on ids a released file repeats: kgx scores each once, by its last record."""
    repeated = predictions.repeated
    shown = ", ".join(f"{qid} {n}x" for qid, n in list(repeated.items())[:3])
    return (
        f"warning: {len(repeated):,} ids occur more than once ({sum(repeated.values()):,} records: {shown}"
        f"{', ...' if len(repeated) > 3 else ''}); each question is scored once, by its last record "
        f"({predictions.superseded:,} earlier records left out)"
    )


def authors_report(
    path: Path,
    records: list[PredictionRecord],
    pairs: list[tuple[Question, PredictionRecord]],
    found: dict[str, float],
    dataset: str,
) -> str:
    """A RoG/GNN-RAG file under the authors' own rule, against their eval_result.txt and each
    line's own figures, and how kgx's rules (on the dataset's gold) compare with their Hit."""
    authored = [r for r in records if r.format == ROG]
    computed = authors_figures(authored)
    totals = rog_eval.totals(computed)
    lines = [
        f"the authors' rule ({rog_eval.RULE}), over the file's {len(authored):,} records:",
        "  " + "  ".join(f"{name} {totals[name]:.2f}" for name in rog_eval.FIGURES),
    ]
    stated = rog_eval.stated_totals(path)
    if stated is None:
        lines.append("  no eval_result.txt beside the file: no figure of the authors' to compare with")
    else:
        lines.append(f"  {stated.path.name}: {stated_comparison(totals, stated.figures)}")
    agree = rog_eval.agreement(computed, [r.stated for r in authored])
    if agree:
        counts = ", ".join(f"{field} {same:,} of {total:,}" for field, (same, total) in agree.items())
        lines.append(f"  each line's own figures, recomputed by kgx equal on: {counts} questions")
    hit = stated.figures.get("Hit", totals["Hit"]) if stated else totals["Hit"]
    deltas = ", ".join(f"{metric} ({rule}) {found[metric] - hit:+.1f}" for rule, metric in RULES.items())
    names = [({normalize(a[0]) for a in q.answers if a}, {normalize(g) for g in r.ground_truth}) for q, r in pairs]
    same = sum(ours == theirs for ours, theirs in names)
    lines.append(
        f"kgx's rules against the authors' Hit {hit:.2f} (any gold answer within any output): {deltas}; "
        "kgx's Hits@1 (exact) counts a question only when its top output is a gold answer, and kgx's rules "
        f"read dataset {dataset}'s gold, which names the file's ground_truth answers for {same:,} of the "
        f"{len(pairs):,} questions"
    )
    return "\n".join(lines)


def stated_comparison(computed: dict[str, float], stated: dict[str, float]) -> str:
    """Whether kgx's figures under the authors' rule are theirs, figure by figure."""
    differ = [
        f"{name} {computed[name]:.2f} against their {value:.2f}"
        for name, value in stated.items()
        if abs(computed[name] - value) > 1e-9
    ]
    if differ:
        return f"kgx's figures differ from the authors': {'; '.join(differ)}"
    figures_text = ", ".join(f"{name} {value:.2f}" for name, value in stated.items())
    return f"the authors state {figures_text}; kgx's figures are exactly theirs ({len(stated)} of {len(stated)})"


if __name__ == "__main__":
    main()
