"""What a misbehaving model server does to a run, and what its rerun makes of it.

    python benchmarks/faults_replies.py [--questions 5] [--only surrogate,invalid,...]

Each case starts the fake OpenAI-compatible server of ``tests/llm/fake_server.py`` on loopback
misbehaving one way, runs ``python -m kgx`` as a user would (io on the bundled demo questions, the
API key in an environment variable), then runs the same command again, and prints:

* the first run's exit code, its wall seconds (process start to exit) and mean seconds per question,
  its MLflow status and error kinds (tag ``errors``);
* the rerun's exit code and status, and whether it converged (exit 0, the run FINISHED); for
  ``echo``, whose 400s are real errors, the server is fixed before the rerun;
* occurrences of the API key and of its base64 in every file both runs wrote (outputs, traces,
  the MLflow database and artifacts, the response cache, Hydra's logs): want 0;
* the bytes those files take, and the run's boundary counts (replies cut, lone surrogates, secrets).

``drip`` (one byte every 0.25 s) runs at ``llm.timeout_s=3`` with one retry and a breaker of 3, and
is fixed before the rerun; first, one call of kgx's client against it is timed alone
("drip: timeout after X s"): want ~3 s, an ``llm.timeout`` the breaker counts, the connection closed.
"""

from __future__ import annotations

import argparse
import base64
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from mlflow.tracking import MlflowClient

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kgx.core.faults import Breaker, classify  # noqa: E402
from kgx.core.trace import Trace  # noqa: E402
from kgx.llm.client import LLMClient  # noqa: E402
from kgx.llm.errors import LLMError  # noqa: E402
from kgx.llm.meter import Meter  # noqa: E402
from kgx.llm.question import QuestionLLM  # noqa: E402
from kgx.run.spec import llm_config  # noqa: E402
from tests.llm.fake_server import FakeServer, misbehaving  # noqa: E402

KEY = "sk-bench-7c4e91d2a0b6f3"
CASES = ("surrogate", "invalid", "echo", "huge", "injection", "drip")
FIXED_FOR_RERUN = ("echo", "drip")  # a 400 and a timeout are real errors: the rerun meets a fixed server
DRIP = ["llm.timeout_s=3", "llm.max_retries=1", "llm.backoff_s=0", "run.max_consecutive_errors=3"]


def kgx(cwd: Path, url: str, n: int, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "KGX_BENCH_KEY": KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("MLFLOW_TRACKING_URI", None)
    args = [
        "method=io",
        "dataset=demo",
        "kg=demo",
        f"dataset.limit={n}",
        "llm=llama3_8b",
        f"llm.api_base={url}",
        "llm.structured_output=prompted",
        "llm.api_key_env=KGX_BENCH_KEY",
        "llm.parse_retries=1",
        "run.progress=false",
        *extra,
    ]
    return subprocess.run([sys.executable, "-m", "kgx", *args], cwd=cwd, env=env, capture_output=True, text=True)


def latest(cwd: Path):
    client = MlflowClient(f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("kgx")
    return client.search_runs([experiment.experiment_id], order_by=["attributes.start_time DESC"])[0]


def secrets_in(cwd: Path) -> int:
    """Occurrences in every file, trace shards decompressed."""
    from kgx.core.trace_store import readable

    forms = [KEY.encode(), base64.b64encode(KEY.encode()).rstrip(b"=")]
    return sum(readable(p).count(f) for p in cwd.rglob("*") if p.is_file() for f in forms)


def written(cwd: Path) -> int:
    """Bytes of every file the runs wrote, the built demo KG store aside (not the runs' doing)."""
    store = cwd / ".kgx_cache" / "kg"
    return sum(p.stat().st_size for p in cwd.rglob("*") if p.is_file() and store not in p.parents)


def case(name: str, n: int) -> str:
    cwd = Path(tempfile.mkdtemp(prefix=f"kgx-replies-{name}-"))
    server = FakeServer(misbehaving(name, KEY))
    extra = DRIP if name == "drip" else []
    start = time.monotonic()
    first = kgx(cwd, server.url, n, *extra)
    took = time.monotonic() - start
    run = latest(cwd)
    if name in FIXED_FOR_RERUN:
        server.close()
        server = FakeServer(misbehaving("injection", KEY))
    again = kgx(cwd, server.url, n, *extra)
    server.close()
    rerun = latest(cwd)
    m = run.data.metrics
    converged = "yes" if again.returncode == 0 and rerun.info.status == "FINISHED" else "NO"
    counts = f"{int(m.get('replies_cut', 0))}/{int(m.get('unstorable_chars', 0))}/{int(m.get('secrets_redacted', 0))}"
    return (
        f"{name:9} | {first.returncode:4} | {took:6.1f} {m.get('latency_s_per_q', float('nan')):5.1f} | "
        f"{run.info.status:8} | {run.data.tags.get('errors', '?'):22} | "
        f"{again.returncode:4} {rerun.info.status:8} {converged:3} | {secrets_in(cwd):7} | "
        f"{written(cwd) / 1e6:7.2f} MB | {counts}"
    )


def drip_call() -> str:
    """One call of kgx's client against the dripping server, alone: how long until it gives up,
    what the breaker makes of it, and whether the server saw the connection closed."""
    server = FakeServer(misbehaving("drip", KEY))
    cfg = replace(
        llm_config("llama3_8b"),
        api_base=server.url,
        structured_output="prompted",
        max_retries=0,
        timeout_s=3.0,
        cache=False,
    )
    client = LLMClient(cfg, {}, None)
    client.prepare()
    client.preflight()  # the first call's one-time costs, as in a run
    start = time.monotonic()
    try:
        QuestionLLM(client, Meter(), Trace())("answer", [{"role": "user", "content": "Question: q?"}])
        return "drip: the call returned a reply (want a timeout)"
    except LLMError as exc:
        took, breaker = time.monotonic() - start, Breaker(1)
        counted = "breaker counted it" if breaker.observe(classify(exc)) else "breaker did NOT count it"
        time.sleep(0.5)
        closed = "closed" if server.hung_up else "NOT closed"
        return f"drip: timeout after {took:.1f} s at llm.timeout_s=3 ({exc.kind}), {counted}, connection {closed}"
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--only", default=",".join(CASES))
    args = parser.parse_args()
    print(f"io on {args.questions} demo questions against a misbehaving server; rerun of the same command")
    if "drip" in args.only.split(","):
        print(drip_call(), flush=True)
    print(
        "case      | exit | run s,  q s | status   | errors                 | rerun, converged  | secrets | written    "
        "| cut/surrogates/redacted"
    )
    for name in args.only.split(","):
        print(case(name, args.questions), flush=True)


if __name__ == "__main__":
    main()
