"""Helpers for tests that start kgx as a user would, in a subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Two methods x two seeds on three demo questions: the smallest sweep with something to compare.
TINY_SWEEP = """# @package _global_
hydra:
  sweeper:
    params:
      method: io,cot
      run.seed: 0,1
dataset:
  limit: 3
"""


def kgx_env() -> dict[str, str]:
    """Environment for ``python -m kgx`` subprocesses, importing this checkout."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("MLFLOW_TRACKING_URI", None)
    return env


def kgx_process(cwd: Path, *args: str) -> subprocess.Popen:
    """``python -m kgx *args`` started in ``cwd``, its output discarded but for stderr (text)."""
    out = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "text": True}
    return subprocess.Popen([sys.executable, "-m", "kgx", *args], cwd=cwd, env=kgx_env(), **out)


def stop_group(proc: subprocess.Popen, timeout_s: float = 30) -> None:
    """End a server started with ``start_new_session=True`` and everything it spawned (uvicorn or
    gunicorn workers): SIGTERM to its group, SIGKILL to what is left after ``timeout_s``. A server
    slow to stop under load must not fail a test that has passed."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=timeout_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what is left: the server itself, or workers it left behind
    except ProcessLookupError:
        pass
    proc.wait(timeout=timeout_s)


def mlflow_run(tmp: Path, run_id: str):
    """The MLflow run ``run_id`` in the default store of launch directory ``tmp``."""
    from mlflow.tracking import MlflowClient

    return MlflowClient(f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}").get_run(run_id)


def migrated_mlflow_db(directory: Path) -> Path:
    """An MLflow sqlite database in ``directory`` with the current schema and no experiment at all.

    kgx copies it (``$KGX_MLFLOW_TEMPLATE``, kgx.track.tracker) where it would create a new store,
    so MLflow finds its tables and skips the migrations. The default experiment is deleted: MLflow
    adds it to the copy on first use, with that store's artifact root and time, as to a new one."""
    import sqlite3

    from mlflow.tracking import MlflowClient

    db = directory / "mlflow.db"
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    client.search_experiments()  # creates the tables and runs the migrations
    client._tracking_client.store.engine.dispose()
    con = sqlite3.connect(db)
    with con:
        con.execute("DELETE FROM experiment_tags")
        con.execute("DELETE FROM experiments")
    con.execute("VACUUM")
    con.close()
    return db


def swap_method(monkeypatch, name: str, answer) -> None:
    """Run ``answer(question, ctx)`` in place of the registered method ``name`` for one test."""
    import dataclasses

    from kgx import methods

    monkeypatch.setitem(methods.METHODS, name, dataclasses.replace(methods.method(name), answer=answer))


def run_notebook(tmp_path: Path, env: dict[str, str], monkeypatch):
    """notebooks/compare.ipynb executed top to bottom in ``tmp_path`` with ``env``, on a kernel that
    is this interpreter whatever kernelspecs the machine has (a python3 spec first on JUPYTER_PATH)."""
    import sys

    import nbformat
    from ipykernel.kernelspec import install
    from jupyter_client.kernelspec import KernelSpecManager
    from nbclient import NotebookClient

    install(prefix=str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter" / "share" / "jupyter"))
    assert KernelSpecManager().get_kernel_spec("python3").argv[0] == sys.executable
    nb = nbformat.read(REPO / "notebooks" / "compare.ipynb", as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute(
        env=env
    )
    return nb


def cell_outputs(nb, code: str) -> list[dict]:
    """The outputs of the notebook code cell whose source contains ``code``."""
    return next(c.outputs for c in nb.cells if c.cell_type == "code" and code in c.source)


def start_mlflow_server(home: Path, port: int) -> subprocess.Popen:
    """``mlflow server`` on loopback with a sqlite database under ``home`` and --serve-artifacts, in
    its own process group (``stop_group``); its stderr goes to ``home/server.log``."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--backend-store-uri",
            f"sqlite:///{home / 'mlflow.db'}",
            "--serve-artifacts",
            "--artifacts-destination",
            str(home / "artifacts"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
        ],
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
        stdout=subprocess.DEVNULL,
        stderr=(home / "server.log").open("ab"),
        start_new_session=True,
    )  # a file: a server must never block on a full pipe


def trace_of(out_dir: Path, record) -> dict:
    """A record's trace, from the run folder's trace shards (kgx.core.trace_store)."""
    from kgx.core.trace_store import TraceReader

    data = TraceReader(out_dir).get(record.id, record.trace)
    assert data is not None, f"no trace of {record.id} in {out_dir / record.trace}"
    return data


def kg_methods() -> list[str]:
    """Every registered method that reads the KG (its schema has a horizon), from the registry: a
    new method is in every test that takes this list as soon as it exists."""
    from kgx.methods import METHODS

    return sorted(name for name, found in METHODS.items() if found.config().horizon() is not None)


def unwrapped(text: str) -> str:
    """A paper table in text with its notes (after the table's last blank line) one per line again,
    as they are before wrapping: a wrapped note's further lines start with two spaces."""
    table, _, notes = text.rpartition("\n\n")
    return f"{table}\n\n{notes.replace(chr(10) + '  ', ' ')}"
