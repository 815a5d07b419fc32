"""``run.traces`` decides which questions get a trace (in the run's trace shards, logged as
artifacts); ``run.transcripts`` which of them become MLflow transcripts: when unset, the first
hundred of those ``run.traces`` names."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgx.core.config import ConfigError
from kgx.core.trace_store import shard_lines
from tests.track.test_transcripts import question_ids, traces


def artifacts(tmp: Path, run_id: str) -> list[str]:
    """Every artifact file the run logged, relative to its artifact folder."""
    root = next((tmp / "mlruns").rglob(run_id)) / "artifacts"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


RUN_FILES = ["config.json", "metrics.json", "predictions.jsonl", "predictions.parquet", "report/index.html"]


def test_traces_off_writes_and_logs_no_file_per_question(run, in_tmp):
    out = run("method=tog", "dataset.limit=5", "run.traces=off")
    assert len(out.records) == 5 and all(r.trace == "" for r in out.records)
    assert not (out.out_dir / "traces").exists() and not (out.out_dir / "explanations").exists()
    assert artifacts(in_tmp, out.run_id) == RUN_FILES
    assert question_ids(traces(in_tmp, out.run_id, spans=False)) == []


def test_a_number_of_traces_writes_that_many_traces_and_transcripts(run, in_tmp):
    out = run("method=tog", "dataset.limit=5", "run.traces=2", "run.explain=5")
    [shard] = (out.out_dir / "traces").iterdir()
    assert shard.name.startswith("001-") and shard.name.endswith(".jsonl.gz")
    assert [r.trace for r in out.records] == [f"traces/{shard.name}"] * 2 + [""] * 3
    assert sorted(shard_lines(shard.read_bytes())) == ["demo-001", "demo-002"]
    logged = artifacts(in_tmp, out.run_id)
    assert [a for a in logged if a.startswith("traces/")] == [f"traces/{shard.name}"]
    assert len([a for a in logged if a.startswith("explanations/") and a.endswith(".txt")]) == 2
    assert question_ids(traces(in_tmp, out.run_id, spans=False)) == ["demo-001", "demo-002"]


def test_transcripts_off_keeps_the_traces(run, in_tmp):
    out = run("dataset.limit=3", "run.transcripts=off")
    [shard] = (out.out_dir / "traces").iterdir()
    assert sorted(shard_lines(shard.read_bytes())) == ["demo-001", "demo-002", "demo-003"]
    assert question_ids(traces(in_tmp, out.run_id, spans=False)) == []
    fewer = run("dataset.limit=3", "run.traces=all", "run.transcripts=1", "run.force=true")
    assert question_ids(traces(in_tmp, fewer.run_id, spans=False)) == ["demo-001"]


@pytest.mark.parametrize("traces_setting, transcripts", [("off", "all"), ("off", "1"), ("2", "3"), ("2", "all")])
def test_transcripts_beyond_the_trace_files_are_refused(compose_cfg, traces_setting, transcripts):
    from kgx.run.spec import to_run_spec

    with pytest.raises(ConfigError, match=rf"run\.transcripts={transcripts}: .* run\.traces={traces_setting} writes"):
        to_run_spec(compose_cfg("method=cot", f"run.traces={traces_setting}", f"run.transcripts={transcripts}"))
    with pytest.raises(ConfigError, match=r"run\.transcripts=some: use all, off, or a number N"):
        to_run_spec(compose_cfg("method=cot", "run.transcripts=some"))


def test_the_estimate_pilot_writes_no_trace_whatever_the_job_asks(compose_cfg, tmp_path):
    from kgx.estimate.pilot import pilot_spec
    from kgx.run.spec import to_run_spec

    spec = to_run_spec(compose_cfg("method=cot", "run.transcripts=all"))
    pilot = pilot_spec(spec, ["demo-001"], tmp_path)
    assert (spec.run.transcripts, pilot.run.traces, pilot.run.transcripts) == ("all", "off", None)
