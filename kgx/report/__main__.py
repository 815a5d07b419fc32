"""``python -m kgx.report {table,cost,failures,breakdown,plot,html,compare,paper,transcript,leaderboard}``: reports.

    python -m kgx.report table --rows method --cols dataset --metric hits1 --format md
    python -m kgx.report cost --rows method,dataset
    python -m kgx.report failures --rows method,dataset     # why questions were missed, and failures.png
    python -m kgx.report failures --parent SWEEP --list not_retrieved  # those questions, with where they left
    python -m kgx.report breakdown --by compositionality_type --metric hits1  # a metric per question type
    python -m kgx.report plot --cost total_tokens_per_q --param method.depth
    python -m kgx.report html --parent my_sweep --out report.html
    python -m kgx.report compare RUN_A RUN_B --metric hits1 --show 10
    python -m kgx.report paper knowpath_table1 --parent SWEEP   # a paper's table, kgx beside it
    python -m kgx.report paper lmp_table1 --released            # the authors' released outputs instead
    python -m kgx.report transcript RUN_ID demo-002             # one question's transcript in MLflow's trace view
    python -m kgx.report leaderboard --dataset webqsp --format html --out board.html  # every system's figure

Runs are every FINISHED run of ``--experiment``, or the runs of one sweep with ``--parent`` (its
run id or its name: of several sweeps of one name, the latest with finished runs, said on
stderr), or for ``html`` one run with ``--run``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kgx.core.cli import plain
from kgx.datasets import dataset_names
from kgx.report.compare import compare_labels, compare_runs, describe
from kgx.report.failure_table import failure_table, listing, plot_failures
from kgx.report.leaderboard import leaderboard
from kgx.report.leaderboard_render import FORMATS as BOARD_FORMATS
from kgx.report.leaderboard_render import written
from kgx.report.paper_layout import FORMATS as PAPER_FORMATS
from kgx.report.paper_published import TABLES, load_published
from kgx.report.paper_released import RELEASED, score_all
from kgx.report.paper_released import listing as released_listing
from kgx.report.paper_report import paper_report
from kgx.report.plots import plot_cost_accuracy, plot_param
from kgx.report.questions import DATASET_FIELDS, RECORD_FIELDS, QuestionFields, breakdown_table
from kgx.report.render import FORMATS, render
from kgx.report.runs import SHORT_KEYS, ReportError, client, load_runs
from kgx.report.sweep_summary import html_report
from kgx.report.sweeps import choose
from kgx.report.tables import cost_table, metric_table
from kgx.report.transcript import LOCAL_UI, transcript

KEYS_HELP = f"config keys, comma-separated: {', '.join(f'{k} ({v})' for k, v in SHORT_KEYS.items())} or any param"


def keys(text: str) -> list[str]:
    return [k.strip() for k in text.split(",") if k.strip()]


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m kgx.report",
        description=plain(__doc__).splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = top.add_subparsers(dest="command", required=True)

    table = _runs_command(commands, "table", "a metric by rows x columns, mean +- std over seeds")
    table.add_argument("--rows", type=keys, default=["method"], help=KEYS_HELP)
    table.add_argument("--cols", type=keys, default=["dataset"], help=KEYS_HELP)
    table.add_argument("--metric", default="hits1")
    _output(table)

    cost = _runs_command(commands, "cost", "LLM calls, tokens, seconds (and USD) per question")
    cost.add_argument("--rows", type=keys, default=["method", "dataset"], help=KEYS_HELP)
    _output(cost)

    failures = _runs_command(commands, "failures", "the failure breakdown (failure.* shares) and a stacked bar chart")
    failures.add_argument("--rows", type=keys, default=["method", "dataset"], help=KEYS_HELP)
    failures.add_argument("--out-dir", type=Path, default=Path("outputs/report"), help="where failures.png goes")
    failures.add_argument(
        "--list",
        default=None,
        metavar="CATEGORY",
        help="instead: every question of this category (e.g. not_retrieved), with why",
    )
    _output(failures)

    breakdown = _runs_command(commands, "breakdown", "a metric by rows x the values of a question field")
    breakdown.add_argument(
        "--by",
        required=True,
        help=f"a question field: {', '.join(DATASET_FIELDS)} (the dataset's); {', '.join(RECORD_FIELDS)} (the run's)",
    )
    breakdown.add_argument("--rows", type=keys, default=["method", "dataset"], help=KEYS_HELP)
    breakdown.add_argument("--metric", default="hits1")
    _output(breakdown)

    plot = _runs_command(commands, "plot", "PNGs: metric against cost, and against swept parameters")
    plot.add_argument("--metric", default="hits1")
    plot.add_argument("--cost", choices=["total_tokens_per_q", "cost_usd"], default="total_tokens_per_q")
    plot.add_argument("--param", type=keys, default=[], help="swept keys for metric-vs-parameter figures")
    plot.add_argument("--by", type=keys, default=["method"], help="one point/line per value of these keys")
    plot.add_argument("--out-dir", type=Path, default=Path("outputs/report"))

    page = _runs_command(commands, "html", "one self-contained HTML page: tables, figures and every question")
    page.add_argument("--run", default=None, metavar="RUN_ID", help="one run, whatever its status")
    page.add_argument("--metric", default="hits1")
    page.add_argument("--out", type=Path, default=Path("outputs/report/index.html"))

    compare = commands.add_parser("compare", help="two runs question by question (McNemar, bootstrap)")
    compare.add_argument("run_a")
    compare.add_argument("run_b")
    compare.add_argument("--metric", default="hits1")
    compare.add_argument("--show", type=int, default=20, help="list this many disagreeing question ids")
    compare.add_argument("--resamples", type=int, default=2000)
    compare.add_argument("--seed", type=int, default=0)
    compare.add_argument("--tracking-uri", default=None)

    paper = _runs_command(
        commands, "paper", "a paper's table in its layout: kgx's mean and interval beside each figure"
    )
    paper.add_argument("table", nargs="?", help=f"one of: {', '.join(TABLES)}; none: list them")
    paper.add_argument("--released", action="store_true", help="kgx's cells from the authors' released outputs")
    paper.add_argument("--backbone", default=None, help="lay out runs of this LLM config in every cell's place")
    paper.add_argument(
        "--kg",
        default=None,
        metavar="NAME",
        help="cells from runs on this KG (replay, demo, subgraph, ...), said in each cell; default: a KG that "
        "serves the dataset (its own, an endpoint, or RoG's subgraphs for webqsp_rog and cwq_rog)",
    )
    paper.add_argument("--format", choices=sorted(PAPER_FORMATS), default="text")
    paper.add_argument("--out", type=Path, default=None, help="write here instead of stdout")

    shown = commands.add_parser(
        "transcript",
        help="one question's transcript in MLflow's trace view: logged now if the run has none, and its address",
    )
    shown.add_argument("run_id")
    shown.add_argument("question_id")
    shown.add_argument("--tracking-uri", default=None)
    shown.add_argument("--ui", default=None, help=f"the MLflow UI's address (default: a server's own, else {LOCAL_UI})")

    board = _runs_command(
        commands,
        "leaderboard",
        "every system's figure on a dataset: the papers', released outputs scored by kgx, kgx's runs",
    )
    board.add_argument(
        "--dataset", required=True, choices=dataset_names(), metavar="DATASET", help=", ".join(dataset_names())
    )
    board.add_argument(
        "--metric",
        type=keys,
        default=None,
        help="metrics, comma-separated; default: the dataset's in the papers, and hits1",
    )
    board.add_argument("--format", choices=["text", "csv", "html"], default="text")
    board.add_argument("--out", type=Path, default=None, help="write here instead of stdout")
    board.add_argument(
        "--out-dir", type=Path, default=Path("outputs/report"), help="where the accuracy-against-cost PNG goes"
    )
    return top


def _runs_command(commands: argparse._SubParsersAction, name: str, text: str) -> argparse.ArgumentParser:
    sub = commands.add_parser(name, help=text, description=text)
    sub.add_argument("--experiment", default="kgx")
    sub.add_argument("--tracking-uri", default=None, help="default: $MLFLOW_TRACKING_URI, else ./mlruns/mlflow.db")
    sub.add_argument(
        "--parent",
        default=None,
        metavar="NAME_OR_ID",
        help="only the runs of this sweep: its parent run id, or its name in --experiment",
    )
    return sub


def _output(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--format", choices=sorted(FORMATS), default="term")
    sub.add_argument("--out", type=Path, default=None, help="write here instead of stdout")


def run(args: argparse.Namespace) -> str:
    """The command's output text."""
    if args.command == "compare":
        result = compare_runs(args.run_a, args.run_b, args.metric, args.tracking_uri, args.resamples, args.seed)
        label_a, label_b = compare_labels(args.run_a, args.run_b, args.tracking_uri)
        return f"A = {label_a}, run {args.run_a}\nB = {label_b}, run {args.run_b}\n" + describe(result, args.show)
    if args.command == "paper":
        return paper_command(args)
    if args.command == "transcript":
        return transcript(args.run_id, args.question_id, args.tracking_uri, args.ui)
    if args.command == "leaderboard":
        return leaderboard_command(args)
    if args.parent:
        said_of_parent(args)
    if args.command == "html":
        text = html_report(args.experiment, args.tracking_uri, args.parent, args.run, args.metric)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        return f"{args.out}\n"
    frame = load_runs(args.experiment, args.tracking_uri, args.parent)
    if args.command == "failures" and args.list:
        return listing(frame, args.list, args.tracking_uri)
    if args.command == "plot":
        paths = [plot_cost_accuracy(frame, args.out_dir, args.metric, args.cost, args.by)]
        paths += [plot_param(frame, args.out_dir, p, args.metric, args.by) for p in args.param]
        return "".join(f"{p}\n" for p in paths)
    if args.command == "breakdown":
        grid = breakdown_table(frame, QuestionFields(client(args.tracking_uri)), args.rows, args.by, args.metric)
    elif args.command == "table":
        grid = metric_table(frame, args.rows, args.cols, args.metric)
    elif args.command == "failures":
        grid = failure_table(frame, args.rows)
    else:
        grid = cost_table(frame, args.rows)
    text = render(grid, args.format)
    if args.command == "failures":
        text += f"{plot_failures(frame, args.out_dir, args.rows)}\n"
    return deliver(text, args.out)


def said_of_parent(args: argparse.Namespace) -> None:
    """On stderr, which sweep ``--parent NAME`` took when several have that name."""
    note = choose(client(args.tracking_uri), args.experiment, args.parent).note
    if note:
        print(f"kgx.report: {note}", file=sys.stderr)


def deliver(text: str, out: Path | None) -> str:
    """The text itself, or, written to ``out``, the path."""
    if out is None:
        return text
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return f"{out}\n"


def paper_command(args: argparse.Namespace) -> str:
    """A table in its paper's layout; without a table, the tables (or, with --released, the
    released outputs and what they fill)."""
    if args.table is None and args.released:
        return released_listing(score_all(RELEASED), load_published())
    if args.table is None:
        return "".join(f"{t.name:<16} {t.paper}, {t.source}: {t.title}\n" for t in TABLES.values())
    text = paper_report(
        args.table, args.format, args.experiment, args.tracking_uri, args.parent, args.released, args.backbone, args.kg
    )
    return deliver(text, args.out)


def leaderboard_command(args: argparse.Namespace) -> str:
    """The board in the format asked for; its figure is written to ``--out-dir``."""
    board = leaderboard(args.dataset, args.experiment, args.tracking_uri, args.parent, args.metric)
    return deliver(BOARD_FORMATS[args.format](board, written(board, args.out_dir)), args.out)


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        sys.stdout.write(run(args))
    except ReportError as exc:
        print(f"kgx.report: error: {exc.wording(cli=True)}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    from kgx.core.collector import tune

    tune()  # before MLflow is imported: see kgx.core.collector
    main()
