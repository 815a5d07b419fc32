"""``python -m kgx.report COMMAND``: reports of kgx runs; kgx's commands, and any an installed
package registers (kgx.report.commands, entry-point group ``kgx.reports``).

    python -m kgx.report table --rows method --cols dataset --metric hits1 --format md
    python -m kgx.report cost --rows method,dataset
    python -m kgx.report failures --rows method,dataset     # why questions were missed, and failures.png
    python -m kgx.report failures --parent SWEEP --list not_retrieved  # those questions, with where they left
    python -m kgx.report breakdown --by compositionality_type --metric hits1  # a metric per question type
    python -m kgx.report plot --cost total_tokens_per_q --param method.depth
    python -m kgx.report html --parent my_sweep --out report.html
    python -m kgx.report figures --parent my_sweep          # its figures: accuracy against cost, by kind, ...
    python -m kgx.report compare RUN_A RUN_B --metric hits1 --show 10
    python -m kgx.report paper knowpath_table1 --parent SWEEP   # a paper's table, kgx beside it
    python -m kgx.report leaderboard --dataset webqsp --format html --out board.html  # every system's figure
    python -m kgx.report drop --parent kg_drop                  # a metric against kg.drop per method
    python -m kgx.report paper lmp_table1 --released            # the authors' released outputs instead
    python -m kgx.report transcript RUN_ID demo-002             # one question's transcript in MLflow's trace view

Runs are every FINISHED run of ``--experiment``, or the runs of one sweep with ``--parent`` (its
run id or its name: of several sweeps of one name, the latest with finished runs, said on
stderr), or for ``html`` one run with ``--run``.
"""

from __future__ import annotations

import argparse
import sys

from kgx.core.cli import plain
from kgx.report.commands import REPORTS
from kgx.report.runs import ReportError


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m kgx.report",
        description=plain(__doc__).splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = top.add_subparsers(dest="command", required=True)
    for name, command in REPORTS.items():
        sub = commands.add_parser(name, help=command.help, description=command.help)
        if command.runs:
            sub.add_argument("--experiment", default="kgx")
            sub.add_argument(
                "--tracking-uri", default=None, help="default: $MLFLOW_TRACKING_URI, else ./mlruns/mlflow.db"
            )
            sub.add_argument(
                "--parent",
                default=None,
                metavar="NAME_OR_ID",
                help="only the runs of this sweep: its parent run id, or its name in --experiment",
            )
        command.arguments(sub)
    return top


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        sys.stdout.write(REPORTS[args.command].run(args))
    except ReportError as exc:
        print(f"kgx.report: error: {exc.wording(cli=True)}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    from kgx.core.collector import tune

    tune()  # before MLflow is imported: see kgx.core.collector
    main()
