"""``python -m kgx.datasets``: which datasets of ``conf/dataset`` this machine can run.

One row per config: its file as resolved here and its question count, or why it cannot be
loaded (a missing file says where to get it), so that a setup is checked before a sweep.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from kgx.core import paths
from kgx.core.cli import plain
from kgx.core.config import ConfigError
from kgx.datasets import DataError, dataset_config, dataset_file, dataset_names, load
from kgx.datasets.files import MissingFile


def status(name: str) -> tuple[str, str, str]:
    """(loader, question count or what went wrong, resolved file or the reason)."""
    try:
        cfg = dataset_config(name, whole=True)
    except ConfigError as exc:
        return "?", "bad config", str(exc)
    if not cfg.path and cfg.loader != "jsonl":  # a config for a file of one's own (dataset=custom)
        return cfg.loader, "-", cfg.source
    try:
        return cfg.loader, f"{len(load(cfg)):,}", str(dataset_file(cfg))
    except MissingFile as exc:
        return cfg.loader, "missing", f"{exc.path}  (get it: {exc.how})"
    except DataError as exc:
        return cfg.loader, "error", str(exc)


def table(rows: list[tuple[str, str, str, str]]) -> str:
    """Aligned columns, counts right-aligned; the last column is never padded."""
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        f"{name:<{widths[0]}}  {loader:<{widths[1]}}  {count:>{widths[2]}}  {file}"
        for name, loader, count, file in rows
    )


def main(argv: Sequence[str] = ()) -> None:
    argparse.ArgumentParser(
        prog="python -m kgx.datasets", description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args(argv)
    where = f"${paths.ENV}" if os.environ.get(paths.ENV) else f"${paths.ENV} is unset: per-user default"
    print(f"data directory: {paths.data_dir()} ({where})")
    rows = [("dataset", "loader", "questions", "file")]
    rows += [(name, *status(name)) for name in dataset_names()]
    print(table(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
