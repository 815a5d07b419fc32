"""Helpers for tests that start kgx as a user would, in a subprocess."""
from __future__ import annotations

import os
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


def mlflow_run(tmp: Path, run_id: str):
    """The MLflow run ``run_id`` in the default store of launch directory ``tmp``."""
    from mlflow.tracking import MlflowClient

    return MlflowClient(f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}").get_run(run_id)


def swap_method(monkeypatch, name: str, answer) -> None:
    """Run ``answer(question, ctx)`` in place of the registered method ``name`` for one test."""
    import dataclasses

    from kgx import methods

    monkeypatch.setitem(methods.METHODS, name, dataclasses.replace(methods.method(name), answer=answer))
