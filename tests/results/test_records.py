"""A run's records scale: traces go to a few compressed shards rather than a file per question,
the run logs a bounded number of transcripts, and any other question's transcript is logged when
someone opens it (``python -m kgx.report transcript``). A shard a kill cut short reads up to its
last whole trace, and no rerun logs a transcript twice."""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
from pathlib import Path

import pytest

from kgx.core import trace_store
from kgx.core.trace import LLMEvent, Trace
from kgx.core.trace_store import TraceReader, TraceWriter, inflate, readable, shard_lines
from kgx.report.__main__ import main
from kgx.track import transcripts
from tests.track.test_transcripts import client, question_ids, traces

DEMO = Path(__file__).resolve().parents[2] / "kgx" / "datasets" / "demo" / "questions.jsonl"


def synthetic(n: int, where: Path) -> Path:
    """``n`` demo questions under new ids (as benchmarks/records.py makes its runs)."""
    demo = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    path = where / "questions.jsonl"
    path.write_text("".join(json.dumps({**demo[i % len(demo)], "id": f"syn-{i:04d}"}) + "\n" for i in range(n)))
    return path


def usage(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def test_a_run_of_hundreds_of_questions_writes_a_few_files_and_a_few_kilobytes_a_question(run, in_tmp):
    n = 400
    out = run(
        "method=io",
        "dataset=custom",
        f"dataset.path={synthetic(n, in_tmp)}",
        "dataset.name=synthetic",
        "run.concurrency=16",
    )
    assert out.status == "FINISHED" and len(out.records) == n
    assert len({r.trace for r in out.records}) == 1 and all(r.trace.endswith(".jsonl.gz") for r in out.records)
    size, files = (sum(pair) for pair in zip(usage(out.out_dir), usage(in_tmp / "mlruns")))
    # The run folder (9 files, one trace shard), the MLflow database and 5 artifacts; a file per
    # question, and a copy as an artifact, made it 800 more.
    assert files <= 20
    assert size / n < 10 * 1024  # predictions, parquet, the shard, the database and the artifacts
    # The first hundred questions have a transcript, the others are logged when opened.
    assert question_ids(traces(in_tmp, out.run_id, spans=False)) == [f"syn-{i:04d}" for i in range(transcripts.BOUND)]


def test_a_shard_cut_short_by_a_kill_breaks_no_rerun_and_no_transcript_is_logged_twice(run, in_tmp):
    args = ("method=io", "dataset.limit=8", "run.concurrency=1", "run.transcripts=off")
    first = run(*args)
    [shard] = (first.out_dir / "traces").iterdir()
    whole = list(shard_lines(shard.read_bytes()))
    assert whole == [f"demo-00{i}" for i in range(1, 9)]
    # A kill -9 mid-write: the shard ends inside a trace, and the last two questions' records were never written.
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size * 2 // 3])
    kept = list(shard_lines(shard.read_bytes()))
    assert 0 < len(kept) < 8 and kept == whole[: len(kept)]
    log = first.out_dir / "predictions.jsonl"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:6]))
    client(in_tmp).set_terminated(first.run_id, "KILLED")

    again = run(*args[:-1], "run.transcripts=all")
    assert again.run_id == first.run_id and again.status == "FINISHED" and again.computed == 2
    [newer] = [p for p in (first.out_dir / "traces").iterdir() if p != shard]
    assert newer.name.startswith("002-") and sorted(shard_lines(newer.read_bytes())) == ["demo-007", "demo-008"]
    logged = question_ids(traces(in_tmp, first.run_id, spans=False))
    assert logged == sorted([*kept, "demo-007", "demo-008"])  # a trace the kill cut has no transcript

    client(in_tmp).set_terminated(first.run_id, "KILLED")
    third = run(*args[:-1], "run.transcripts=all")
    assert third.computed == 0 and question_ids(traces(in_tmp, first.run_id, spans=False)) == logged


def test_any_question_s_transcript_is_logged_when_opened_and_only_once(run, in_tmp, capsys):
    out = run("method=tog", "dataset.limit=5", "run.traces=4", "run.transcripts=2")
    uri = f"sqlite:///{in_tmp / 'mlruns' / 'mlflow.db'}"
    assert question_ids(traces(in_tmp, out.run_id, spans=False)) == ["demo-001", "demo-002"]
    experiment = client(in_tmp).get_run(out.run_id).info.experiment_id

    def opened(qid: str) -> list[str]:
        main(["transcript", out.run_id, qid, "--tracking-uri", uri])
        return capsys.readouterr().out.splitlines()

    said, where = opened("demo-003")
    [found] = traces(in_tmp, out.run_id, "trace.name = 'demo-003'")
    assert said == f"demo-003: transcript {found.info.trace_id} of run {out.run_id}, logged now"
    assert where == (
        f"http://127.0.0.1:5000/#/experiments/{experiment}/traces?selectedEvaluationId={found.info.trace_id}"
        " (python -m kgx.ui serves it there)"
    )
    root = next(s for s in found.data.spans if s.parent_id is None)
    assert root.inputs["topic_entities"] and root.attributes["kgx.scores"] == out.records[2].scores
    assert len([s for s in found.data.spans if s.span_type == "CHAT_MODEL"]) == out.records[2].usage.calls
    assert opened("demo-003")[0].endswith(f"{found.info.trace_id} of run {out.run_id}, logged earlier")
    assert opened("demo-001")[0].endswith("logged earlier")

    shutil.rmtree(out.out_dir)  # another machine: the trace comes from the run's artifacts
    assert opened("demo-004")[0].endswith("logged now")
    assert question_ids(traces(in_tmp, out.run_id, spans=False)) == [f"demo-00{i}" for i in range(1, 5)]
    with pytest.raises(SystemExit):
        main(["transcript", out.run_id, "demo-005", "--tracking-uri", uri])
    err = capsys.readouterr().err
    assert f"question 'demo-005' of run {out.run_id} has no trace: its run.traces wrote none" in err


def trace(i: int) -> Trace:
    t = Trace()
    t.add(LLMEvent("answer", "m", [{"role": "user", "content": f"Question {i}: who?\u2028"}], "{x}", 0.0))
    return t


def test_threads_share_a_shard_and_a_full_shard_starts_the_next(tmp_path, monkeypatch):
    monkeypatch.setattr(trace_store, "SHARD_TRACES", 25)
    ids = [f"q{i}" for i in range(100)]
    where: dict[str, str] = {}
    with TraceWriter(tmp_path, invocation=3) as writer:
        threads = [
            threading.Thread(
                target=lambda part: where.update((q, writer.add(q, {}, trace(1))) for q in part), args=(p,)
            )
            for p in (ids[:50], ids[50:])
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    shards = sorted((tmp_path / "traces").iterdir())
    assert [p.name for p in shards] == [f"003-{os.getpid()}-000{i}.jsonl.gz" for i in range(1, 5)]
    assert all(len(shard_lines(p.read_bytes())) == 25 for p in shards)
    reader = TraceReader(tmp_path)
    assert all(reader.get(q, where[q])["id"] == q for q in ids)
    assert reader.get("q1", "") is None and reader.get("q1", "traces/gone.jsonl.gz") is None


def test_a_shard_read_at_any_cut_gives_its_whole_traces_only(tmp_path):
    with TraceWriter(tmp_path, invocation=1) as writer:
        for i in range(5):
            writer.add(f"q{i}", {"m.1": "A"}, trace(i))
    [shard] = (tmp_path / "traces").iterdir()
    blob = shard.read_bytes()
    full = inflate(blob)
    assert full.count(b"\n") == 5 and readable(shard) == full  # what a scan of the run's files for a secret reads
    for cut in range(len(blob)):  # a kill -9 mid-write, or a crash that left zeros or garbage after the cut
        for tail in (b"", bytes(512), random.Random(cut).randbytes(300)):
            lines = shard_lines(blob[:cut] + tail)
            assert list(lines) == [f"q{i}" for i in range(len(lines))]
            assert all(json.loads(line)["id"] == qid for qid, line in lines.items())
    assert len(shard_lines(blob[:-8])) == 5  # no gzip trailer: a shard its process never closed


def test_a_trace_file_of_a_folder_written_before_shards_still_reads(tmp_path):
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "demo-001.json").write_text(json.dumps({"events": [], "error": "", "explanation": None}))
    data = TraceReader(tmp_path).get("demo-001", "traces/demo-001.json")
    assert data["events"] == [] and data["end_ns"] > 0
