"""The MLflow store reports read: a client on an existing store, searches that page through every
run, and the error a report raises (worded for a shell or for Python)."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Optional

from kgx.core.config import RunConfig
from kgx.track.tracker import PARENT_TAG, REUSED_TAG, tracking_uri


class ReportError(Exception):
    """Nothing to report, or a request the runs cannot answer; the message says which.

    A message that tells the reader what to change names a command-line option to a shell user
    and a keyword argument to a notebook, so it is a template with one ``{fix}`` per ``fixes``
    entry, a (command line, Python) pair. ``str()`` is the Python wording; the CLI asks for its own.
    """

    def __init__(self, message: str, **fixes: tuple[str, str]) -> None:
        self.template, self.fixes = message, fixes
        super().__init__(self.wording(cli=False))

    def wording(self, cli: bool) -> str:
        """The message for a shell user (``cli``) or a Python caller. Only the ``fixes``
        placeholders are replaced, so braces in run names or paths stay as they are."""

        def fix(match: re.Match) -> str:
            pair = self.fixes.get(match.group(1))
            return match.group(0) if pair is None else pair[0 if cli else 1]

        return re.sub(r"\{(\w+)\}", fix, self.template)


def default_uri() -> str:
    """Where ``python -m kgx`` launched from this directory logs (kgx.track.tracker's rule)."""
    return tracking_uri(RunConfig(), Path.cwd())


def client(uri: Optional[str] = None) -> Any:
    """An MlflowClient on an existing store. A missing sqlite file is an error here rather
    than an empty store MLflow would silently create."""
    from mlflow.tracking import MlflowClient

    uri = uri or default_uri()
    if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///") :]).exists():
        raise ReportError(
            f"no MLflow store at {uri[len('sqlite:///') :]} (tracking URI {uri}); run an experiment first or {{uri}}",
            uri=("pass --tracking-uri", "set KGX_TRACKING_URI or pass uri="),
        )
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return MlflowClient(tracking_uri=uri)


def search(
    mlflow: Any, experiment_id: str, parent: Optional[str], query: str = "attributes.status = 'FINISHED'"
) -> list[Any]:
    if not parent:
        return all_pages(mlflow, experiment_id, query)
    # A sweep's runs: its children and the FINISHED runs it reused (kgx.track.tracker.REUSED_TAG).
    return [
        *all_pages(mlflow, experiment_id, f"{query} and tags.`{PARENT_TAG}` = '{parent}'"),
        *all_pages(mlflow, experiment_id, f"{query} and tags.`{REUSED_TAG}{parent}` != ''"),
    ]


def all_pages(mlflow: Any, experiment_id: str, query: str) -> list[Any]:
    runs, token = [], None
    while True:
        page = mlflow.search_runs([experiment_id], filter_string=query, max_results=1000, page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs
