"""Per-question transcripts: a question of a run becomes an MLflow trace linked to the run.

The run's Traces tab is then the transcript viewer: the question at the root, a span per stage
under it and a span per LLM and KG call under those (``kgx.track.spans`` builds them).

The traces are built after the question loop from the traces it wrote (kgx.core.trace_store),
not live: a method pays nothing, and the loop's wall time does not change. MLflow's live tracing
costs more than a scripted question per span, and its export queue drops traces when it fills
(benchmarks/transcripts.py), so the spans go to the tracking store in batches (``log_spans``) and
are linked to the run (``link_traces_to_run``), a hundred traces at a time.

Even so the store spends about 13 ms and 8 KB of database on a transcript (benchmarks/records.py),
several times a scripted question's loop time: a run logs the first ``BOUND`` questions' unless
``run.transcripts`` asks for more, and any other question's is logged when someone opens it
(``python -m kgx.report transcript``, which the drill-downs print), from the run's trace shards.

A rerun logs only what the run has no transcript of yet: each trace carries the key of its
record's attempt (``kgx.attempt``), so questions answered earlier are not logged twice, one
whose transcript was lost (a killed invocation) is logged late, and a question computed again
after an error gets a second trace, of the new attempt. No secrets reach a trace: a trace holds
prompts, replies and KG arguments, never a key or a header.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from kgx.core.config import RunConfig, share_size
from kgx.core.trace_store import TraceReader
from kgx.core.types import Question
from kgx.results.record import Record
from kgx.track.spans import PREFIX, Tree, attempt_key, build, trace_name

BATCH = 100  # traces per write: MLflow links at most 100 traces to a run in one request
BOUND = 100  # transcripts a run logs when run.transcripts is unset: its first questions'


def setting(run: RunConfig) -> str:
    """Which questions get a transcript: ``run.transcripts``, else the first ``BOUND`` of the
    questions ``run.traces`` writes a trace of."""
    if run.transcripts is not None:
        return run.transcripts
    return "off" if run.traces == "off" else str(int(min(share_size(run.traces), BOUND)))


def limit(setting: str, total: int) -> int:
    """How many questions, in dataset order, a transcripts setting asks a transcript of."""
    return int(share_size(setting, total))


def logged(store: Any, question_id: Optional[str] = None) -> dict[str, str]:
    """The transcripts the run already has (of one question, given its id): attempt key -> trace id.
    ``store`` is the run's kgx.track.tracker.Tracker, or anything with its ``client``,
    ``experiment_id`` and ``run_id``."""
    found: dict[str, str] = {}
    name = trace_name(question_id) if question_id is not None else None
    # The search narrows to the name when the filter can quote it; the tag decides either way.
    named = f"trace.name = '{name}'" if name is not None and "'" not in name else None
    token = None
    while True:
        page = store.client.search_traces(
            locations=[store.experiment_id],
            run_id=store.run_id,
            filter_string=named,
            include_spans=False,
            max_results=500,
            page_token=token,
        )
        found.update(
            (t.info.tags.get(PREFIX + "attempt", ""), t.info.trace_id)
            for t in page
            if name is None or t.info.tags.get("mlflow.traceName") == name
        )
        token = page.token
        if not token:
            return found


def due(records: list[Record], questions: list[Question], setting: str, done: set[str]) -> list[Record]:
    """The records, in dataset order, of the first questions the setting names that have no
    transcript of their attempt yet."""
    wanted = {q.id for q in questions[: limit(setting, len(questions))]}
    return [r for r in records if r.id in wanted and attempt_key(r) not in done]


def trees(records: list[Record], out_dir: Path, topics: Optional[dict[str, dict[str, str]]] = None) -> Iterator[Tree]:
    """Each record's transcript from its trace (a record without one has none). ``topics``: the
    questions' topic entities, for traces written before they held them."""
    reader = TraceReader(out_dir)
    for record in records:
        data = reader.get(record.id, record.trace)
        if data is not None:
            data.setdefault("topic_entities", (topics or {}).get(record.id, {}))
            yield build(record, data)


def batches(items: Iterator[Tree], size: int) -> Iterator[list[Tree]]:
    while batch := list(itertools.islice(items, size)):
        yield batch


def write(store: Any, batch: list[Tree]) -> None:
    """One batch to the tracking store: spans (the store makes the traces and their tags from
    them), then the link of every trace to the run."""
    from mlflow.entities import Span
    from mlflow.tracing.client import TracingClient

    TracingClient(store.uri).log_spans(store.experiment_id, [Span.from_dict(s) for t in batch for s in t.spans])
    store.client.link_traces_to_run([t.trace_id for t in batch], store.run_id)


def log(
    tracker: Any, questions: list[Question], records: list[Record], out_dir: Path, setting: str, progress: bool = False
) -> int:
    """Log the transcripts the run is due; returns how many. A failure costs the transcripts,
    never the run: it is named in a warning and the next invocation logs what is missing."""
    from tqdm import tqdm

    if limit(setting, len(questions)) == 0:
        return 0
    written = 0
    try:
        todo = due(records, questions, setting, set(logged(tracker)))
        topics = {q.id: q.topic_entities for q in questions}
        with tqdm(total=len(todo), disable=not progress or not todo, unit="trace", desc="transcripts") as bar:
            for batch in batches(trees(todo, out_dir, topics), BATCH):
                write(tracker, batch)
                written += len(batch)
                bar.update(len(batch))
    except Exception as exc:  # the tracking store refused: the answers and figures still count
        print(f"kgx: warning: {written} transcripts logged, the rest not: {type(exc).__name__}: {exc}", file=sys.stderr)
    return written


def command(run_id: str, uri: Optional[str] = None) -> str:
    """The command, but for the question id, that shows a question of ``run_id`` (kgx.report.transcript)."""
    return f"python -m kgx.report transcript {run_id}{f' --tracking-uri {uri}' if uri else ''}"


def url(base: str, experiment_id: str, trace_id: str) -> str:
    """Where MLflow's UI (``base``: kgx.ui's address, or a tracking server's) shows one trace."""
    return f"{base.rstrip('/')}/#/experiments/{experiment_id}/traces?selectedEvaluationId={trace_id}"
