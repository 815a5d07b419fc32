"""Fault injection: what a run does when its providers fail, and what its reruns make of it.

    KGX_DATA_DIR=/path/to/data python benchmarks/faults.py [--questions 100] [--only flaky,outage,...]

Every scenario runs ``python -m kgx`` as a user would, in a fresh working directory, with the
scripted backbone on MetaQA 2-hop (the first N test questions), and prints what it measured:

* ``flaky``: ``llm.failure_rate=0.5`` for lmp, knowpath, tog and cgpe: exit code and MLflow status
  of the first run, the reruns it took to end FINISHED with 0 errors, and whether the predictions
  are identical to a run without failures.
* ``transient``: 20% transient failures: errors, lost questions, early stop (want 0, 0, no).
* ``outage``: ToG against ``oxigraph serve``; the server is killed a third of the way through
  and started again after the run stops: errors before the stop, and the rerun against a clean run.
* ``tracking``: ten runs started at once on a tracking database that does not exist yet.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlflow.tracking import MlflowClient

REPO = Path(__file__).resolve().parents[1]
BASE = ["llm=scripted", "dataset=metaqa_2hop", "kg=metaqa", "run.progress=false", "llm.backoff_s=0.01"]


def kgx(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "kgx", *args], cwd=cwd, env=env, capture_output=True, text=True)


def latest_run(cwd: Path):
    client = MlflowClient(f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("kgx")
    return client.search_runs([experiment.experiment_id], order_by=["attributes.start_time DESC"])[0]


def predictions(cwd: Path) -> dict[str, list[str]]:
    latest: dict[str, list[str]] = {}
    for log in cwd.glob("outputs/runs/*/predictions.jsonl"):
        for line in log.read_text().splitlines():
            record = json.loads(line)
            latest[record["id"]] = record["prediction"]["answers"]
    return latest


def workdir(name: str, cache: Path) -> Path:
    """A fresh working directory sharing the built KG stores (not the LLM response cache)."""
    path = Path(tempfile.mkdtemp(prefix=f"kgx-faults-{name}-"))
    (path / ".kgx_cache").mkdir()
    (path / ".kgx_cache" / "kg").symlink_to(cache / "kg", target_is_directory=True)
    return path


def flaky(n: int, cache: Path) -> None:
    print(f"\nflaky: llm.failure_rate=0.5 on {n} MetaQA 2-hop questions")
    print("method    | 1st exit | 1st status | 1st errors | reruns to FINISHED | errors at end | identical to clean")
    for method in ("lmp", "knowpath", "tog", "cgpe"):
        args = [*BASE, f"method={method}", f"dataset.limit={n}"]
        clean_dir = workdir("clean", cache)
        kgx(clean_dir, *args)
        clean = predictions(clean_dir)
        cwd = workdir(method, cache)
        first = kgx(cwd, *args, "llm.failure_rate=0.5")
        run = latest_run(cwd)
        first_status, first_errors = run.info.status, int(run.data.metrics["errors"])
        reruns, done = 0, first
        while done.returncode != 0 and reruns < 10:
            reruns += 1
            done = kgx(cwd, *args, "llm.failure_rate=0.5")
        end = latest_run(cwd)
        same = predictions(cwd) == clean
        print(
            f"{method:9} | {first.returncode:8} | {first_status:10} | {first_errors:10} | {reruns:18} | "
            f"{int(end.data.metrics['errors']):13} | {'yes' if same else 'NO'}"
        )


def transient(n: int, cache: Path) -> None:
    cwd = workdir("transient", cache)
    done = kgx(cwd, *BASE, "method=lmp", f"dataset.limit={n}", "llm.failure_rate=0.2", "llm.cache=false")
    run = latest_run(cwd)
    m = run.data.metrics
    print(
        f"\ntransient: 20% failures, lmp on {n} questions: exit {done.returncode}, {run.info.status}, "
        f"errors {int(m['errors'])}, lost {n - int(m['n_questions'])}, early stop "
        f"{run.data.tags.get('stopped_early')}, retries {int(m['retries'])}"
    )


def outage(n: int, cache: Path) -> None:
    from kgx.kg.serve import OxigraphServer

    store = cache / "kg" / "metaqa"
    args = [*BASE, "method=tog", f"dataset.limit={n}", "kg=sparql", "kg.retries=2", "kg.timeout_s=5", "llm.cache=false"]
    clean_dir = workdir("outage-clean", cache)
    with OxigraphServer(store) as server:
        kgx(clean_dir, *args, f"kg.endpoint={server.url}")
        port = server.port
    clean_run = latest_run(clean_dir)
    cwd = workdir("outage", cache)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = OxigraphServer(store, port=port)
    server.start()
    url = server.url
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgx", *args, f"kg.endpoint={url}"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while proc.poll() is None:
        logs = list(cwd.glob("outputs/runs/*/predictions.jsonl"))
        if logs and len(logs[0].read_text().splitlines()) >= n // 3:
            break
        time.sleep(0.05)
    killed_at = time.perf_counter()
    server.stop()
    _, err = proc.communicate()
    stopped_after = time.perf_counter() - killed_at
    run = latest_run(cwd)
    m = run.data.metrics
    print(
        f"\noutage: tog on {n} questions, oxigraph serve killed after {n // 3} answers: exit {proc.returncode}, "
        f"{run.info.status}, stopped {stopped_after:.1f} s after the kill with {int(m['errors'])} errors and "
        f"{int(m['unanswered'])} questions not run"
    )
    print("  said: " + (err.strip().splitlines() or [""])[-1][:300])
    with OxigraphServer(store, port=port):
        again = kgx(cwd, *args, f"kg.endpoint={url}")
    end = latest_run(cwd)
    same = predictions(cwd) == predictions(clean_dir)
    print(
        f"  rerun: exit {again.returncode}, {end.info.status}, errors {int(end.data.metrics['errors'])}, "
        f"hits1_tog {end.data.metrics['hits1_tog']:.1f} (clean {clean_run.data.metrics['hits1_tog']:.1f}), "
        f"identical predictions: {'yes' if same else 'NO'}"
    )


def tracking(cache: Path) -> None:
    cwd = workdir("tracking", cache)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kgx",
                "method=io",
                "llm=scripted",
                "dataset.limit=2",
                f"run.seed={i}",
                "run.progress=false",
            ],
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(10)
    ]
    codes = [p.wait() for p in procs]
    client = MlflowClient(f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("kgx").experiment_id])
    with sqlite3.connect(cwd / "mlruns" / "mlflow.db") as conn:
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
    finished = sum(r.info.status == "FINISHED" for r in runs)
    print(
        f"\ntracking: 10 runs at once on a new database: exit codes {sorted(set(codes))}, "
        f"{finished} FINISHED runs, integrity_check {check}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--only", default="flaky,transient,outage,tracking")
    args = parser.parse_args()
    if not os.environ.get("KGX_DATA_DIR"):
        raise SystemExit("set KGX_DATA_DIR to the folder holding metaqa/ (see ../shared/data/README.md)")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    cache = Path(tempfile.mkdtemp(prefix="kgx-faults-cache-"))
    build = kgx(
        cache.parent,
        "method=io",
        "llm=scripted",
        "dataset=metaqa_2hop",
        "kg=metaqa",
        "dataset.limit=1",
        f"run.cache_dir={cache}",
        f"run.tracking_uri=sqlite:///{cache}/mlflow.db",
        "run.progress=false",
        f"run.output_dir={cache}/warmup",
    )
    if build.returncode != 0:
        raise SystemExit(build.stderr)
    chosen = set(args.only.split(","))
    if "flaky" in chosen:
        flaky(args.questions, cache)
    if "transient" in chosen:
        transient(args.questions, cache)
    if "outage" in chosen:
        outage(max(args.questions, 300), cache)
    if "tracking" in chosen:
        tracking(cache)


if __name__ == "__main__":
    main()
