"""The per-question records of runs, for their HTML page: from a run's folder, or from MLflow.

A page links each question's trace and explanation picture where the run logged them, under its
artifact root. A page logged as an artifact links relative to itself (it may be viewed through
any server, or from a copy of the store); a page written elsewhere links to the runs' artifact
URIs when they are local files, the only kind a browser opens, and otherwise names the paths.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any, Optional, Sequence

import polars as pl

from kgx.report.html import MAX_PICTURES, RunQuestions, explanation_path
from kgx.report.runs import ReportError, download, natural_key, run_titles
from kgx.results.predlog import PredictionLog
from kgx.results.record import Record


def from_folder(run_id: str, label: str, out_dir: Path, records: Sequence[Record]) -> RunQuestions:
    """A run's questions as its own ``report/index.html`` shows them: the pictures are the
    ones kgx.run.execute wrote beside the records, and links go up from ``report/``."""
    drawn = set(os.listdir(out_dir / "explanations")) if (out_dir / "explanations").is_dir() else set()
    explained = {r.id for r in records if posixpath.basename(explanation_path(r.id)) in drawn}  # no stat a question
    shown = [r.id for r in records if r.id in explained][:MAX_PICTURES]
    return RunQuestions(
        run_id,
        label,
        list(records),
        "../",
        explained,
        {qid: (out_dir / explanation_path(qid)).read_bytes() for qid in shown},
    )


def from_mlflow(mlflow: Any, frame: pl.DataFrame, page_uri: Optional[str]) -> list[RunQuestions]:
    """The questions of every run of ``frame``, ordered by label. ``page_uri`` is the artifact
    URI of the folder the page is logged to, or None for a page written outside the store.
    Pictures are embedded, up to ``MAX_PICTURES`` in all; the others are linked."""
    runs, budget = [], MAX_PICTURES
    for label, run_id in sorted(zip(run_titles(frame), frame["run_id"])):
        root = mlflow.get_run(run_id).info.artifact_uri
        with tempfile.TemporaryDirectory() as tmp:
            records = run_records(mlflow, run_id, tmp)
            wanted = {explanation_path(r.id): r.id for r in records}
            logged = [a.path for a in _listing(mlflow, run_id, "explanations") if a.path in wanted]
            pictures = {wanted[path]: download(mlflow, run_id, path, tmp).read_bytes() for path in logged[:budget]}
        budget -= len(pictures)
        runs.append(RunQuestions(run_id, label, records, _href(root, page_uri), {wanted[p] for p in logged}, pictures))
    return runs


def run_records(mlflow: Any, run_id: str, where: str) -> list[Record]:
    """The last record of each question; none when the run logged no predictions (a job that
    failed before its first question)."""
    try:
        log = PredictionLog(download(mlflow, run_id, "predictions.jsonl", where)).read()
    except ReportError:
        return []
    return sorted(log.latest.values(), key=lambda r: natural_key(r.id))


def _listing(mlflow: Any, run_id: str, path: str) -> list[Any]:
    return [a for a in mlflow.list_artifacts(run_id, path) if not a.is_dir]


def _href(root: str, page_uri: Optional[str]) -> Optional[str]:
    """The run's artifact root as seen from the page, ending in ``/``."""
    target = urllib.parse.urlparse(root)
    if page_uri is None:
        return root.rstrip("/") + "/" if target.scheme == "file" else None
    page = urllib.parse.urlparse(page_uri)
    if (page.scheme, page.netloc) != (target.scheme, target.netloc):
        return None
    return posixpath.relpath(target.path, page.path) + "/"
