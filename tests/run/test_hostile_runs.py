"""Whole runs against a misbehaving OpenAI-compatible server on loopback: a run whose
questions all finished concludes and logs, an invalid final answer is a fallback that converges,
and no file the run writes holds the API key the server echoes back."""

from __future__ import annotations

import base64
from pathlib import Path

import polars as pl
import pytest

from kgx.core.boundary import SECRETS
from kgx.core.trace_store import readable
from tests.helpers import mlflow_run, trace_of
from tests.inprocess import Done, kgx_main
from tests.llm.fake_server import FakeServer, misbehaving
from tests.methods.test_golden import DEMO_METHODS

KEY = "sk-test-0d1e2a3d4b5e"


@pytest.fixture
def hostile(run, monkeypatch):
    """``hostile(case, *overrides, method="io")``: ``method`` on 3 demo questions against a server
    misbehaving as ``case`` (one server per case, so that a second call is a rerun of the same config)."""
    monkeypatch.setenv("KGX_TEST_KEY", KEY)
    servers: dict[str, FakeServer] = {}

    def _run(case: str, *overrides: str, method: str = "io"):
        if case not in servers:  # a second call reruns the same config: the same api_base
            servers[case] = FakeServer(misbehaving(case, KEY))
        server = servers[case]
        args = [f"llm.api_base={server.url}", "llm.structured_output=prompted", "llm.api_key_env=KGX_TEST_KEY"]
        return run(f"method={method}", "dataset=demo", "kg=demo", "dataset.limit=3", "llm=llama3_8b", *args, *overrides)

    yield _run
    for server in servers.values():
        server.close()
    SECRETS.clear()


def test_a_lone_surrogate_in_every_reply_still_concludes_and_logs(hostile, in_tmp):
    outcome = hostile("surrogate")
    assert outcome.status == "FINISHED" and outcome.summary["unstorable_chars"] == 3
    table = pl.read_parquet(outcome.out_dir / "predictions.parquet")
    assert table["answers"].to_list() == [["Par\ufffdis"]] * 3
    assert mlflow_run(in_tmp, outcome.run_id).info.status == "FINISHED"


def test_an_invalid_final_answer_is_a_fallback_and_the_run_converges(hostile):
    outcome = hostile("invalid", "llm.parse_retries=1")
    assert outcome.status == "FINISHED" and outcome.summary["errors"] == 0
    assert {r.status for r in outcome.records} == {"fallback"}
    assert all("no valid final answer" in r.prediction.reason for r in outcome.records)
    assert outcome.summary["fallback_rate"] == 100.0 and outcome.summary["cached_calls"] == 0
    assert hostile("invalid", "llm.parse_retries=1").skipped  # nothing left for a rerun


@pytest.mark.parametrize("method", DEMO_METHODS)
def test_every_stage_of_every_method_falls_back_on_replies_that_stay_invalid(hostile, method):
    """No JSON at all, at every stage: each stage's documented fallback applies (the KG methods
    search on, then answer nothing), no question is an error, and the rerun has nothing to do."""
    outcome = hostile("invalid", "dataset.limit=1", "llm.parse_retries=0", method=method)
    assert outcome.status == "FINISHED" and outcome.summary["errors"] == 0
    assert {r.status for r in outcome.records} == {"fallback"}
    assert all(r.prediction.answers == [] for r in outcome.records)
    assert outcome.summary["parse_failures"] >= 1 and outcome.summary["cached_calls"] == 0
    assert hostile("invalid", "dataset.limit=1", "llm.parse_retries=0", method=method).skipped


def test_no_file_the_run_writes_holds_the_echoed_key(hostile, in_tmp):
    outcome = hostile("echo")
    assert outcome.status == "FAILED" and [f.kind for f in outcome.failures] == ["llm.bad_request"]
    assert outcome.summary["secrets_redacted"] == 2
    assert "[secret KGX_TEST_KEY]" in (outcome.out_dir / "predictions.jsonl").read_text()
    forms = [KEY.encode(), base64.b64encode(KEY.encode()).rstrip(b"=")]
    files = [p for p in Path(in_tmp).rglob("*") if p.is_file()]
    assert len(files) > 10  # outputs, traces, the MLflow db and artifacts, the response cache
    found = {str(p.relative_to(in_tmp)): n for p in files if (n := sum(readable(p).count(f) for f in forms))}
    assert found == {}


def test_a_huge_reply_is_cut_and_recorded(hostile):
    outcome = hostile("huge", "dataset.limit=1", "llm.parse_retries=0", "llm.max_reply_chars=1000")
    assert outcome.status == "FINISHED" and outcome.summary["replies_cut"] == 1
    trace = trace_of(outcome.out_dir, outcome.records[0])
    assert any(e.get("message", "").startswith("reply cut at llm.max_reply_chars=1000") for e in trace["events"])
    assert sum(p.stat().st_size for p in outcome.out_dir.rglob("*") if p.is_file()) < 200_000


def test_a_credential_on_the_command_line_is_in_no_file_a_run_or_sweep_writes(tmp_path):
    """Hydra records the command line in .hydra/ (and a sweep's multirun.yaml) before kgx starts; kgx
    rewrites those, even for a setting it then refuses, and config.json, MLflow params and the
    sweep's tags show ``[secret <key>]`` instead."""
    token, password = "hf_cmdline_9b8a7c6d5e", "redis-pw-5f4e3d2c"
    args = [
        "method=io",
        "dataset=demo",
        "kg=demo",
        "dataset.limit=2",
        "llm=scripted",
        "run.progress=false",
        f"+llm.extra.hf_token={token}",
    ]

    def kgx(*extra: str) -> Done:
        done = kgx_main(tmp_path, *extra, *args)
        assert token not in done.stdout + done.stderr and password not in done.stdout + done.stderr
        return done

    refused = kgx(f"+method.db_password={password}")
    assert refused.returncode == 1 and "method.db_password: io has no such setting" in refused.stderr
    for extra in ([], ["-m"]):
        assert kgx(*extra).returncode == 0
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "overrides.yaml" for p in files) and any(p.name == "multirun.yaml" for p in files)
    forms = [s.encode() for s in (token, password)] + [base64.b64encode(token.encode()).rstrip(b"=")]
    found = {str(p.relative_to(tmp_path)): n for p in files if (n := sum(readable(p).count(f) for f in forms))}
    assert found == {}
    overrides = next(p for p in files if p.name == "overrides.yaml").read_text()
    assert "[secret llm.extra.hf_token]" in overrides
