"""kgx's own ``python -m kgx.report`` commands (kgx.report.commands registers them)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kgx.datasets import dataset_names
from kgx.report.commands import KEYS_HELP, deliver, keys, output_arguments, report_command
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
from kgx.report.render import render
from kgx.report.runs import ReportError, client, load_runs
from kgx.report.sweep_figures import figures_of
from kgx.report.sweep_summary import html_report
from kgx.report.sweeps import choose
from kgx.report.tables import cost_table, metric_table
from kgx.report.transcript import LOCAL_UI, transcript


def runs_of(args: argparse.Namespace):  # noqa: ANN201 (a polars frame)
    """The runs a command over runs reads; which sweep ``--parent NAME`` took, on stderr, when
    several have that name."""
    if args.parent:
        note = choose(client(args.tracking_uri), args.experiment, args.parent).note
        if note:
            print(f"kgx.report: {note}", file=sys.stderr)
    return load_runs(args.experiment, args.tracking_uri, args.parent)


def _table_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--rows", type=keys, default=["method"], help=KEYS_HELP)
    sub.add_argument("--cols", type=keys, default=["dataset"], help=KEYS_HELP)
    sub.add_argument("--metric", default="hits1")
    output_arguments(sub)


@report_command("table", "a metric by rows x columns, mean +- std over seeds", _table_arguments)
def table(args: argparse.Namespace) -> str:
    return deliver(render(metric_table(runs_of(args), args.rows, args.cols, args.metric), args.format), args.out)


def _cost_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--rows", type=keys, default=["method", "dataset"], help=KEYS_HELP)
    output_arguments(sub)


@report_command("cost", "LLM calls, tokens, seconds (and USD) per question", _cost_arguments)
def cost(args: argparse.Namespace) -> str:
    return deliver(render(cost_table(runs_of(args), args.rows), args.format), args.out)


def _failures_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--rows", type=keys, default=["method", "dataset"], help=KEYS_HELP)
    sub.add_argument("--out-dir", type=Path, default=Path("outputs/report"), help="where failures.png goes")
    sub.add_argument(
        "--list",
        default=None,
        metavar="CATEGORY",
        help="instead: every question of this category (e.g. not_retrieved), with why",
    )
    output_arguments(sub)


@report_command("failures", "the failure breakdown (failure.* shares) and a stacked bar chart", _failures_arguments)
def failures(args: argparse.Namespace) -> str:
    frame = runs_of(args)
    if args.list:
        return listing(frame, args.list, args.tracking_uri)
    text = render(failure_table(frame, args.rows), args.format)
    return deliver(text + f"{plot_failures(frame, args.out_dir, args.rows)}\n", args.out)


def _breakdown_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--by",
        required=True,
        help=f"a question field: {', '.join(DATASET_FIELDS)} (the dataset's); {', '.join(RECORD_FIELDS)} (the run's)",
    )
    sub.add_argument("--rows", type=keys, default=["method", "dataset"], help=KEYS_HELP)
    sub.add_argument("--metric", default="hits1")
    output_arguments(sub)


@report_command("breakdown", "a metric by rows x the values of a question field", _breakdown_arguments)
def breakdown(args: argparse.Namespace) -> str:
    fields = QuestionFields(client(args.tracking_uri))
    return deliver(
        render(breakdown_table(runs_of(args), fields, args.rows, args.by, args.metric), args.format), args.out
    )


def _plot_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--metric", default="hits1")
    sub.add_argument("--cost", choices=["total_tokens_per_q", "cost_usd"], default="total_tokens_per_q")
    sub.add_argument("--param", type=keys, default=[], help="swept keys for metric-vs-parameter figures")
    sub.add_argument("--by", type=keys, default=["method"], help="one point/line per value of these keys")
    sub.add_argument("--out-dir", type=Path, default=Path("outputs/report"))


@report_command("plot", "PNGs: metric against cost, and against swept parameters", _plot_arguments)
def plot(args: argparse.Namespace) -> str:
    frame = runs_of(args)
    paths = [plot_cost_accuracy(frame, args.out_dir, args.metric, args.cost, args.by)]
    paths += [plot_param(frame, args.out_dir, p, args.metric, args.by) for p in args.param]
    return "".join(f"{p}\n" for p in paths)


def _figures_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--metric", default="hits1")
    sub.add_argument("--out-dir", type=Path, default=Path("outputs/report/figures"))
    sub.add_argument("--log", action="store_true", help="also log them to the sweep's parent run (figures/)")


@report_command(
    "figures",
    "a sweep's figures (PNG and HTML): accuracy against cost, by kind of question, against the paper, "
    "against a swept number",
    _figures_arguments,
)
def figures(args: argparse.Namespace) -> str:
    if not args.parent:
        raise ReportError("figures are of one sweep: name it with {parent}", parent=("--parent NAME_OR_ID", "parent="))
    runs_of(args)  # says which sweep --parent NAME took
    paths = figures_of(args.experiment, args.tracking_uri, args.parent, args.out_dir, args.log, args.metric)
    return "".join(f"{p}\n" for p in paths) or "nothing to draw for this sweep\n"


def _html_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--run", default=None, metavar="RUN_ID", help="one run, whatever its status")
    sub.add_argument("--metric", default="hits1")
    sub.add_argument("--out", type=Path, default=Path("outputs/report/index.html"))


@report_command("html", "one self-contained HTML page: tables, figures and every question", _html_arguments)
def html(args: argparse.Namespace) -> str:
    if args.parent:
        runs_of(args)  # says which sweep --parent NAME took
    text = html_report(args.experiment, args.tracking_uri, args.parent, args.run, args.metric)
    return deliver(text, args.out)


def _compare_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("run_a")
    sub.add_argument("run_b")
    sub.add_argument("--metric", default="hits1")
    sub.add_argument("--show", type=int, default=20, help="list this many disagreeing question ids")
    sub.add_argument("--resamples", type=int, default=2000)
    sub.add_argument("--seed", type=int, default=0)
    sub.add_argument("--tracking-uri", default=None)


@report_command("compare", "two runs question by question (McNemar, bootstrap)", _compare_arguments, runs=False)
def compare(args: argparse.Namespace) -> str:
    result = compare_runs(args.run_a, args.run_b, args.metric, args.tracking_uri, args.resamples, args.seed)
    label_a, label_b = compare_labels(args.run_a, args.run_b, args.tracking_uri)
    return f"A = {label_a}, run {args.run_a}\nB = {label_b}, run {args.run_b}\n" + describe(result, args.show)


def _paper_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("table", nargs="?", help="a paper table's name; none: list them")
    sub.add_argument("--released", action="store_true", help="kgx's cells from the authors' released outputs")
    sub.add_argument("--backbone", default=None, help="lay out runs of this LLM config in every cell's place")
    sub.add_argument(
        "--kg",
        default=None,
        metavar="NAME",
        help="cells from runs on this KG (replay, demo, subgraph, ...), said in each cell; default: a KG that "
        "serves the dataset (its own, an endpoint, or RoG's subgraphs for webqsp_rog and cwq_rog)",
    )
    sub.add_argument("--format", choices=sorted(PAPER_FORMATS), default="text")
    sub.add_argument("--out", type=Path, default=None, help="write here instead of stdout")


@report_command("paper", "a paper's table in its layout: kgx's mean and interval beside each figure", _paper_arguments)
def paper(args: argparse.Namespace) -> str:
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


def _transcript_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("run_id")
    sub.add_argument("question_id")
    sub.add_argument("--tracking-uri", default=None)
    sub.add_argument("--ui", default=None, help=f"the MLflow UI's address (default: a server's own, else {LOCAL_UI})")


@report_command(
    "transcript",
    "one question's transcript in MLflow's trace view: logged now if the run has none, and its address",
    _transcript_arguments,
    runs=False,
)
def transcript_command(args: argparse.Namespace) -> str:
    return transcript(args.run_id, args.question_id, args.tracking_uri, args.ui)


def _leaderboard_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--dataset", required=True, choices=dataset_names(), metavar="DATASET", help=", ".join(dataset_names())
    )
    sub.add_argument(
        "--metric",
        type=keys,
        default=None,
        help="metrics, comma-separated; default: the dataset's in the papers, and hits1",
    )
    sub.add_argument("--format", choices=sorted(BOARD_FORMATS), default="text")
    sub.add_argument("--out", type=Path, default=None, help="write here instead of stdout")
    sub.add_argument(
        "--out-dir", type=Path, default=Path("outputs/report"), help="where the accuracy-against-cost PNG goes"
    )


@report_command(
    "leaderboard",
    "every system's figure on a dataset: the papers', released outputs scored by kgx, kgx's runs",
    _leaderboard_arguments,
)
def leaderboard_command(args: argparse.Namespace) -> str:
    """The board in the format asked for; its figure is written to ``--out-dir``."""
    board = leaderboard(args.dataset, args.experiment, args.tracking_uri, args.parent, args.metric)
    return deliver(BOARD_FORMATS[args.format](board, written(board, args.out_dir)), args.out)
