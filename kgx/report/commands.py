"""``python -m kgx.report`` commands, registered where they are defined and found through the
entry-point group ``kgx.reports`` (kgx's own in its pyproject.toml, a plugin's in its own).

A command is a function from its parsed arguments to the text it prints, with a function that
adds its arguments. A command over runs (``runs=True``) also takes ``--experiment``,
``--tracking-uri`` and ``--parent``, and reads the runs with ``kgx.report.load_runs``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kgx.core.registry import Registry
from kgx.report.render import FORMATS
from kgx.report.runs import SHORT_KEYS

Run = Callable[[argparse.Namespace], str]
Arguments = Callable[[argparse.ArgumentParser], None]
KEYS_HELP = f"config keys, comma-separated: {', '.join(f'{k} ({v})' for k, v in SHORT_KEYS.items())} or any param"


@dataclass(frozen=True)
class ReportCommand:
    name: str
    help: str
    run: Run
    arguments: Arguments
    runs: bool = True  # reads runs: takes --experiment, --tracking-uri and --parent


REPORTS: Registry[ReportCommand] = Registry("report", "kgx.reports")


def no_arguments(parser: argparse.ArgumentParser) -> None:
    """A command with no arguments of its own."""


def report_command(
    name: str, help: str, arguments: Arguments = no_arguments, runs: bool = True
) -> Callable[[Run], Run]:
    """Register ``run`` as ``python -m kgx.report <name>``; ``arguments`` adds its own arguments."""

    def add(run: Run) -> Run:
        REPORTS.register(name, ReportCommand(name, help, run, arguments, runs), run.__module__)
        return run

    return add


def keys(text: str) -> list[str]:
    """``method,dataset`` as a list of config keys."""
    return [k.strip() for k in text.split(",") if k.strip()]


def output_arguments(sub: argparse.ArgumentParser) -> None:
    """``--format`` (term, md, csv, ...) and ``--out FILE`` for a command that prints a table."""
    sub.add_argument("--format", choices=sorted(FORMATS), default="term")
    sub.add_argument("--out", type=Path, default=None, help="write here instead of stdout")


def deliver(text: str, out: Path | None) -> str:
    """The text itself, or, written to ``out``, the path."""
    if out is None:
        return text
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return f"{out}\n"
