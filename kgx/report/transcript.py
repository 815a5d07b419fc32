"""``python -m kgx.report transcript RUN QUESTION``: one question's transcript in MLflow's trace view.

A run logs the transcripts of its first questions only (kgx.track.transcripts); the drill-downs
(``failures --list``, the HTML report's question rows) print this command for any question. It
logs the question's transcript when the run has none of its last attempt, from the run's trace
shards (its folder when it is on this machine, else its MLflow artifacts), and prints the
address where the MLflow UI shows it.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from kgx.core.trace_store import TraceReader
from kgx.report.pages import run_records
from kgx.report.runs import ReportError, client, download
from kgx.results.record import Record
from kgx.track import transcripts
from kgx.track.spans import attempt_key, build

LOCAL_UI = "http://127.0.0.1:5000"  # where python -m kgx.ui serves a local store by default


@dataclass
class RunStore:
    """A logged run as kgx.track.transcripts writes to it (the face of kgx.track.tracker.Tracker)."""

    client: Any
    uri: str
    experiment_id: str
    run_id: str


def transcript(run_id: str, question_id: str, uri: Optional[str] = None, ui: Optional[str] = None) -> str:
    """Log the question's transcript unless the run has it; the lines that say where it is."""
    mlflow = client(uri)
    try:
        run = mlflow.get_run(run_id)
    except Exception:
        raise ReportError(f"no run {run_id} in the MLflow store {mlflow.tracking_uri}") from None
    store = RunStore(mlflow, mlflow.tracking_uri, run.info.experiment_id, run_id)
    with tempfile.TemporaryDirectory() as tmp:
        record = next((r for r in run_records(mlflow, run_id, tmp) if r.id == question_id), None)
        if record is None:
            raise ReportError(f"run {run_id} has no question '{question_id}' in its predictions.jsonl")
        if not record.trace:
            raise ReportError(f"question '{question_id}' of run {run_id} has no trace: its run.traces wrote none")
        trace_id = transcripts.logged(store, question_id).get(attempt_key(record))
        said = "logged earlier"
        if trace_id is None:
            tree = build(record, _trace(mlflow, run, record, tmp))
            transcripts.write(store, [tree])
            trace_id, said = tree.trace_id, "logged now"
    base = ui or (store.uri if store.uri.startswith(("http://", "https://")) else LOCAL_UI)
    serve = "" if ui or base != LOCAL_UI else " (python -m kgx.ui serves it there)"
    return (
        f"{question_id}: transcript {trace_id} of run {run_id}, {said}\n"
        f"{transcripts.url(base, store.experiment_id, trace_id)}{serve}\n"
    )


def _trace(mlflow: Any, run: Any, record: Record, tmp: str) -> dict[str, Any]:
    """The record's trace from the run's folder, if it is on this machine, else from its artifacts."""
    folder = Path(run.data.tags.get("output_dir", ""))
    if run.data.tags.get("output_dir") and (folder / record.trace).is_file():
        data = TraceReader(folder).get(record.id, record.trace)
    else:
        shard = download(mlflow, run.info.run_id, record.trace, tmp)
        data = TraceReader(shard.parent).get(record.id, shard.name)
    if data is None:
        raise ReportError(f"the trace of '{record.id}' is not in {record.trace} of run {run.info.run_id}")
    return data
