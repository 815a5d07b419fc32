"""Per-question transcripts: every question of a run becomes an MLflow trace linked to the run.

The run's Traces tab is then the transcript viewer: the question at the root, a span per stage
under it and a span per LLM and KG call under those (``kgx.track.spans`` builds them).

The traces are built after the question loop from the trace files it wrote, not live: a method
pays nothing, and the loop's wall time does not change. MLflow's live tracing costs more than a
scripted question per span, and its export queue drops traces when it fills (benchmarks/
transcripts.py), so the spans go to the tracking store in batches (``log_spans``) and are linked
to the run (``link_traces_to_run``), a hundred traces at a time.

A rerun logs only what the run has no transcript of yet: each trace carries the key of its
record's attempt (``kgx.attempt``), so questions answered earlier are not logged twice, one
whose transcript was lost (a killed invocation) is logged late, and a question computed again
after an error gets a second trace, of the new attempt. No secrets reach a trace: a trace file
holds prompts, replies and KG arguments, never a key or a header.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgx.core.config import share_size
from kgx.core.types import Question
from kgx.results.record import Record
from kgx.track.spans import PREFIX, Tree, attempt_key, build

BATCH = 100  # traces per write: MLflow links at most 100 traces to a run in one request


def limit(setting: str, total: int) -> int:
    """How many questions, in dataset order, ``run.transcripts`` (else ``run.traces``) asks a transcript of."""
    return int(share_size(setting, total))


def logged(tracker: Any) -> set[str]:
    """The attempt keys of the transcripts the run already has."""
    keys: set[str] = set()
    token = None
    while True:
        page = tracker.client.search_traces(
            locations=[tracker.experiment_id],
            run_id=tracker.run_id,
            include_spans=False,
            max_results=500,
            page_token=token,
        )
        keys.update(t.info.tags.get(PREFIX + "attempt", "") for t in page)
        token = page.token
        if not token:
            return keys


def due(records: list[Record], questions: list[Question], setting: str, done: set[str]) -> list[Record]:
    """The records, in dataset order, of the first questions the setting names that have no
    transcript of their attempt yet."""
    wanted = {q.id for q in questions[: limit(setting, len(questions))]}
    return [r for r in records if r.id in wanted and attempt_key(r) not in done]


def trees(records: list[Record], questions: list[Question], out_dir: Path) -> Iterator[Tree]:
    """Each record's trace from its trace file (a record without one has no transcript)."""
    by_id = {q.id: q for q in questions}
    for record in records:
        path = out_dir / record.trace
        if record.trace and path.is_file():
            yield build(record, by_id.get(record.id), json.loads(path.read_bytes()), path.stat().st_mtime_ns)


def batches(items: Iterator[Tree], size: int) -> Iterator[list[Tree]]:
    while batch := list(itertools.islice(items, size)):
        yield batch


def write(store: Any, tracker: Any, batch: list[Tree]) -> None:
    """One batch to the tracking store: spans (the store makes the traces and their tags from
    them), then the link of every trace to the run."""
    from mlflow.entities import Span

    store.log_spans(tracker.experiment_id, [Span.from_dict(s) for t in batch for s in t.spans])
    tracker.client.link_traces_to_run([t.trace_id for t in batch], tracker.run_id)


def log(
    tracker: Any, questions: list[Question], records: list[Record], out_dir: Path, setting: str, progress: bool = False
) -> int:
    """Log the transcripts the run is due; returns how many. A failure costs the transcripts,
    never the run: it is named in a warning and the next invocation logs what is missing."""
    from mlflow.tracing.client import TracingClient
    from tqdm import tqdm

    if limit(setting, len(questions)) == 0:
        return 0
    written = 0
    try:
        todo = due(records, questions, setting, logged(tracker))
        store = TracingClient(tracker.uri)
        with tqdm(total=len(todo), disable=not progress or not todo, unit="trace", desc="transcripts") as bar:
            for batch in batches(trees(todo, questions, out_dir), BATCH):
                write(store, tracker, batch)
                written += len(batch)
                bar.update(len(batch))
    except Exception as exc:  # the tracking store refused: the answers and figures still count
        print(f"kgx: warning: {written} transcripts logged, the rest not: {type(exc).__name__}: {exc}", file=sys.stderr)
    return written
