"""A real ``oxigraph serve`` killed in the middle of a run and started again: the run stops
within the breaker's budget, keeps what finished, and its rerun ends where a clean run does."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from kgx.kg import BUNDLED_KG, build_store
from kgx.kg.endpoint import EndpointKG, KGUnavailable
from kgx.kg.serve import OxigraphServer
from kgx.run.execute import execute
from kgx.run.spec import to_run_spec

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store([BUNDLED_KG], "nt", tmp_path_factory.mktemp("kg") / "demo")


def test_the_endpoint_dies_mid_run_and_the_rerun_completes_it(store, compose_cfg, in_tmp):
    server = OxigraphServer(store)
    server.start()
    args = (
        "method=tog",
        "llm=scripted",
        "run.progress=false",
        "dataset.limit=40",
        "kg=sparql",
        f"kg.endpoint={server.url}",
        "kg.retries=1",
        "run.concurrency=2",
        "llm.latency_s=0.05",
    )

    def run(*extra: str):
        return execute(to_run_spec(compose_cfg(*args, *extra)), in_tmp)

    clean_dir = in_tmp / "clean"
    clean = run(f"run.output_dir={clean_dir}", f"run.tracking_uri=sqlite:///{clean_dir}/mlflow.db")
    assert clean.status == "FINISHED"

    def kill_after(n: int) -> None:
        deadline = time.time() + 120
        while time.time() < deadline:
            logs = list(in_tmp.glob("outputs/runs/*/predictions.jsonl"))
            if logs and len(logs[0].read_text().splitlines()) >= n:
                break
            time.sleep(0.02)
        server.stop()

    killer = threading.Thread(target=kill_after, args=(10,))
    killer.start()
    first = run()
    killer.join()
    assert first.status == "FAILED" and first.tripped.kind == "kg.unreachable"
    # Stopped within the budget: in the order questions finished, the breaker trips on the 5th
    # failure in a row, and after it only the question the other worker had in hand may finish.
    # Before that streak a question that had done its KG calls may still succeed and restart the
    # count, so the total number of failures is not fixed.
    failed = {r.id for r in first.records if r.failure}
    finished = [json.loads(line)["id"] for line in (first.out_dir / "predictions.jsonl").read_text().splitlines()]
    streak, trip = 0, None
    for i, qid in enumerate(finished):
        streak = streak + 1 if qid in failed else 0
        if streak == 5 and trip is None:
            trip = i
    assert trip is not None and len(finished) - trip - 1 <= 1
    assert len(first.records) + first.not_started == 40
    assert first.not_started >= 15
    assert all(f.kind == "kg.unreachable" for f in first.failures)

    with OxigraphServer(store, port=server.port):
        again = run()
    assert again.status == "FINISHED" and again.summary["errors"] == 0
    assert again.retried == len(first.failures) and again.resumed == len(first.records) - len(first.failures)
    assert again.summary["hits1_tog"] == clean.summary["hits1_tog"]
    assert {r.id: r.prediction.answers for r in again.records} == {r.id: r.prediction.answers for r in clean.records}


def test_half_a_second_timeout_means_half_a_second():
    with socket.socket() as silent:  # accepts connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/query"
        kg = EndpointKG(url, timeout_s=0.5, retries=0)
        start = time.perf_counter()
        with pytest.raises(KGUnavailable) as caught:
            kg.ping()
        assert 0.4 < time.perf_counter() - start < 1.5
        assert caught.value.kind == "kg.timeout"


def test_a_timeout_must_be_positive(compose_cfg):
    from kgx.core.config import ConfigError

    with pytest.raises(ConfigError, match="kg.timeout_s=0.0: must be a positive number of seconds"):
        to_run_spec(compose_cfg("kg=sparql", "kg.endpoint=http://127.0.0.1:9/sparql", "kg.timeout_s=0"))
