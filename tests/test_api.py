"""kgx's Python API: ``kgx.run_experiment`` runs an experiment from overrides and returns its records,
``kgx.run_sweep`` a sweep, ``kgx.load_runs`` reads finished runs for a notebook (kgx.api)."""

from __future__ import annotations

import pytest

import kgx
from kgx.core.config import ConfigError


def test_run_returns_the_records_and_figures_of_the_command_line(in_tmp):
    result = kgx.run_experiment("method=cot", "llm=scripted", "dataset.limit=3", "run.progress=false")
    assert result.status == "FINISHED" and not result.skipped
    assert [r.id for r in result.records] == ["demo-001", "demo-002", "demo-003"]
    assert result.summary["n_questions"] == 3 and result.summary["llm_calls_per_q"] == 1.0
    assert (result.out_dir / "predictions.jsonl").exists()
    again = kgx.run_experiment("method=cot", "llm=scripted", "dataset.limit=3", "run.progress=false")
    assert again.skipped and again.run_id == result.run_id and again.records == []
    frame = kgx.load_runs()
    assert frame.height == 1 and frame["metrics.n_questions"].to_list() == [3.0]
    assert frame["params.method.name"].to_list() == ["cot"]


def test_run_refuses_bad_input_with_the_command_lines_message(in_tmp):
    with pytest.raises(ConfigError, match="run.concurrency=0: must be at least 1"):
        kgx.run_experiment("llm=scripted", "run.concurrency=0")


@pytest.mark.slow
def test_sweep_runs_every_job_and_loads_them(in_tmp):
    swept = kgx.run_sweep("method=io,cot", "llm=scripted", "dataset.limit=2", "run.progress=false")
    assert swept.returncode == 0 and "2 finished, 0 failed" in swept.output
    assert sorted(swept.runs["params.method.name"].to_list()) == ["cot", "io"]
    assert swept.runs.height == 2 and len(swept.parent_id) == 32


def test_a_sweep_that_cannot_start_raises_its_message(in_tmp):
    with pytest.raises(ConfigError, match=r"OPENAI_API_KEY is not set"):
        kgx.run_sweep("method=io,cot", "llm=gpt4o_mini", "dataset.limit=2")
