"""The response cache on a shared Redis server (``run.cache_url``): Debian's ``redis-server`` on a
loopback port, two runs as two machines (each its own launch directory and ``run.cache_dir``)
sharing it, parallel writers, an unreachable server, a password, the server killed mid-run.

Skipped without ``redis-server`` (``apt-get install redis-server``) or the redis package
(``pip install 'kgx[redis]'``), except in CI (the environment variable ``CI`` set), where either
missing fails: CI must run these.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from kgx.core.config import ConfigError, RunConfig
from kgx.core.masking import masked_url
from kgx.core.trace_store import readable
from kgx.kg.serve import free_port
from kgx.llm.cache_redis import PREFIX, CacheUnavailable, RedisCache
from tests.helpers import kgx_env, mlflow_run
from tests.inprocess import Done, kgx_main

pytestmark = pytest.mark.slow

ARGS = ["method=io", "kg=demo", "llm=scripted", "run.progress=false"]
PASSWORD = "s3cret-pw"  # what must not appear in any output


@dataclass
class Server:
    process: subprocess.Popen
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self, password: str | None = None):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, db=0, password=password)


def needed(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the Redis cache tests, but {message}")
    pytest.skip(message)


@pytest.fixture(scope="module")
def redis_installed() -> None:
    if not shutil.which("redis-server"):
        needed("redis-server not on PATH: apt-get install redis-server")
    try:
        import redis  # noqa: F401
    except ImportError:
        needed("the redis package is missing: pip install 'kgx[redis]'")


@pytest.fixture
def start_redis(redis_installed, tmp_path) -> Iterator:
    """``start_redis(*options)``: a throwaway redis-server on loopback, without persistence;
    stopped (if still running) after the test."""
    started: list[subprocess.Popen] = []

    def _start(*options: str) -> Server:
        port = free_port()
        work = tmp_path / f"redis-{port}"
        work.mkdir()
        process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(work),
                *options,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        with socket.socket() as probe:
            deadline = time.time() + 30
            while probe.connect_ex(("127.0.0.1", port)) != 0:
                assert process.poll() is None and time.time() < deadline, "redis-server did not start"
                time.sleep(0.05)
        return Server(process, port)

    yield _start
    for process in started:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture
def server(start_redis) -> Server:
    return start_redis()


def kgx(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Done:
    """A run as a machine of a sweep starts it; in this process (what the run writes is the subject)."""
    cwd.mkdir(parents=True, exist_ok=True)
    return kgx_main(cwd, *args, env=env)


def machine(root: Path, name: str, url: str) -> list[str]:
    """The overrides of one machine of a sweep: its own cache folder, the shared server."""
    return [*ARGS, f"run.cache_dir={root / name / 'cache'}", f"run.cache_url={url}"]


def the_run(launch_dir: Path):
    [run_id] = [p.read_text() for p in (launch_dir / "outputs" / "runs").glob("*/mlflow_run_id")]
    return mlflow_run(launch_dir, run_id)


def response(i: int) -> dict:
    return {"text": f"answer {i} " + "x" * 400, "input_tokens": i, "output_tokens": 1}


# ----------------------------------------------------------------------------- the shared cache


def test_a_second_machine_bills_nothing_and_its_calls_are_all_cache_hits(server, tmp_path):
    first = kgx(tmp_path / "a", *machine(tmp_path, "a", server.url), "dataset.limit=4")
    assert first.returncode == 0, first.stderr
    second = kgx(tmp_path / "b", *machine(tmp_path, "b", server.url), "dataset.limit=4")
    assert second.returncode == 0, second.stderr
    assert "4 answered, 0 resumed" in first.stdout and "4 answered, 0 resumed, 0 billed" in second.stdout

    one, two = the_run(tmp_path / "a").data, the_run(tmp_path / "b").data
    assert one.metrics["billed_calls"] > 0 and one.metrics["cached_calls"] == 0
    assert two.metrics["billed_calls"] == 0
    assert two.metrics["cached_calls"] == two.metrics["llm_calls_per_q"] * 4 == one.metrics["billed_calls"]
    assert one.params["run.cache_url"] == server.url
    assert one.tags["config_hash"] == two.tags["config_hash"]  # the same run, as on two machines of a sweep

    keys = server.client().keys("*")
    assert len(keys) == one.metrics["billed_calls"] and all(k.startswith(PREFIX.encode()) for k in keys)
    assert all("text" in json.loads(server.client().get(k)) for k in keys)
    assert not list(tmp_path.glob("*/cache/llm.sqlite*"))  # the local file is not used beside the server


def test_parallel_writers_leave_every_value_whole(server):
    shared = RedisCache(server.url)
    writers = [shared] * 4 + [RedisCache(server.url) for _ in range(4)]  # threads of one process, and "machines"
    keys = 200
    start = threading.Barrier(len(writers))
    errors: list[BaseException] = []

    def write(cache: RedisCache, n: int) -> None:
        try:
            start.wait()
            for round_ in range(3):
                for i in range(keys):
                    cache.put(f"k{(i + n * 25) % keys}", response((i + n * 25) % keys))
                    assert cache.get(f"k{(i + round_) % keys}") in (None, response((i + round_) % keys))
        except BaseException as exc:  # collected: an assert in a thread would otherwise be lost
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(c, n)) for n, c in enumerate(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    fresh = RedisCache(server.url)
    assert [fresh.get(f"k{i}") for i in range(keys)] == [response(i) for i in range(keys)]
    assert server.client().dbsize() == keys


def test_a_value_that_is_not_a_json_object_is_a_miss(server):
    cache = RedisCache(server.url)
    raw = server.client()
    raw.set(PREFIX + "cut", '{"text": "cut sh')
    raw.set(PREFIX + "bytes", b"\xff\x00\xfe")
    raw.set(PREFIX + "list", "[1, 2]")
    assert [cache.get(k) for k in ("cut", "bytes", "list", "absent")] == [None] * 4
    cache.put("cut", response(1))
    assert cache.get("cut") == response(1)


# ----------------------------------------------------------------------------- failures


def test_an_unreachable_server_stops_the_run_before_any_question(redis_installed, tmp_path):
    url = f"redis://127.0.0.1:{free_port()}/0"
    done = kgx(tmp_path, *machine(tmp_path, "a", url), "dataset.limit=4")
    assert done.returncode != 0
    assert f"kgx: error: run.cache_url={url}: cannot use the Redis response cache (ConnectionError" in done.stderr
    assert not list(tmp_path.glob("outputs/runs/*/predictions.jsonl"))


def test_a_finished_run_is_reported_while_the_server_is_down(server, tmp_path):
    """The skip of a FINISHED config comes before the cache is opened: it needs no LLM call."""
    args = [*machine(tmp_path, "a", f"redis://127.0.0.1:{server.port}/0"), "dataset.limit=2"]
    assert kgx(tmp_path, *args).returncode == 0
    server.process.terminate()
    server.process.wait(timeout=30)
    again = kgx(tmp_path, *args)
    assert again.returncode == 0 and "already finished: mlflow run" in again.stdout, again.stderr[-2000:]


def test_a_missing_redis_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis now raises ImportError
    with pytest.raises(ConfigError, match=r"needs the redis package: pip install 'kgx\[redis\]'"):
        RedisCache("redis://127.0.0.1:6379/0")


@pytest.mark.parametrize(
    "url, shown",
    [
        ("redis://:pw@host:6379/0", "redis://:***@host:6379/0"),
        ("rediss://default:p%40ss@host/2", "rediss://default:***@host/2"),
        ("redis://token@host", "redis://***@host"),
        ("redis://host:6379/0?password=pw&socket_timeout=1", "redis://host:6379/0?password=***&socket_timeout=1"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
    ],
)
def test_masked_url_hides_the_password(url, shown):
    assert masked_url(url) == shown


def test_a_cache_url_that_is_not_redis_is_refused_without_its_password():
    with pytest.raises(ConfigError) as refused:
        RunConfig(cache_url=f"http://:{PASSWORD}@host:6379/0")
    assert str(refused.value).startswith("run.cache_url=http://:***@host:6379/0: use redis://")
    assert PASSWORD not in str(refused.value)


def test_a_password_never_reaches_output_logs_or_mlflow(start_redis, tmp_path):
    server = start_redis("--requirepass", PASSWORD)
    env = {"KGX_TEST_REDIS_PASSWORD": PASSWORD}
    # As the README advises: the password from the environment, so Hydra's saved overrides hold none.
    url = f"redis://:${{oc.env:KGX_TEST_REDIS_PASSWORD}}@127.0.0.1:{server.port}/0"
    shown = f"redis://:***@127.0.0.1:{server.port}/0"
    done = kgx(tmp_path / "a", *machine(tmp_path, "a", url), "dataset.limit=2", env=env)
    assert done.returncode == 0, done.stderr
    run = the_run(tmp_path / "a")
    assert run.data.params["run.cache_url"] == shown
    assert server.client(PASSWORD).dbsize() > 0

    wrong = kgx(
        tmp_path / "b", *machine(tmp_path, "b", f"redis://:{PASSWORD}x@127.0.0.1:{server.port}/0"), "dataset.limit=2"
    )
    assert wrong.returncode != 0
    assert f"kgx: error: run.cache_url={shown}: cannot use the Redis response cache" in wrong.stderr

    for text in (
        done.stdout,
        done.stderr,
        wrong.stdout,
        wrong.stderr,
        json.dumps(run.data.params),
        json.dumps(run.data.tags),
    ):
        assert PASSWORD not in text
    for path in (tmp_path / "a").rglob("*"):  # config.json, Hydra's files, the MLflow store, artifacts
        if path.is_file():
            assert PASSWORD.encode() not in readable(path), path


def test_an_outage_mid_run_is_one_warning_and_every_call_then_misses(server, recwarn):
    cache = RedisCache(server.url)
    cache.put("k0", response(0))
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=30)
    assert cache.get("k0") is None
    cache.put("k1", response(1))
    assert cache.get("k1") is None
    [warning] = [w for w in recwarn if issubclass(w.category, CacheUnavailable)]
    assert str(warning.message).startswith(f"LLM response cache {server.url} failed (ConnectionError")
    assert str(warning.message).endswith("this process no longer uses the cache; the provider answers instead")


def test_a_server_killed_mid_run_leaves_every_question_answered(server, tmp_path):
    questions = 12
    args = [*machine(tmp_path, "a", server.url), f"dataset.limit={questions}", "llm.latency_s=0.4", "run.concurrency=2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgx", *args],
        cwd=tmp_path,
        env=kgx_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    done_before = 0
    deadline = time.time() + 120
    while time.time() < deadline and not done_before:
        found = list((tmp_path / "outputs" / "runs").glob("*/predictions.jsonl"))
        done_before = len(found[0].read_text().splitlines()) if found else 0
        time.sleep(0.05)
    server.process.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert 0 < done_before < questions
    assert f"over {questions} questions (0 errors)" in out and f"{questions} answered, 0 resumed" in out
    assert err.count("CacheUnavailable") == 1 and f"LLM response cache {server.url} failed" in err
    assert (
        the_run(tmp_path).data.metrics["billed_calls"] == the_run(tmp_path).data.metrics["llm_calls_per_q"] * questions
    )
