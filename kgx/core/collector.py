"""Python's cyclic garbage collector, set for processes that run kgx.

Before its first question, a kgx process imports about a million objects that live as long as it
does: litellm, MLflow and SQLAlchemy, Hydra. Python's default thresholds (700, 10, 10) were made for
small heaps: a run of ``python -m kgx llm=scripted dataset.limit=2`` made 1,557 young and 10 full
collections, and each full collection traversed that whole heap again. Together they took 3.5 s of the
run's 19.2 s of CPU. With kgx's thresholds the same run makes 189 young and no full collection, 1.0 s
in all, and takes 16.0 s of CPU (``benchmarks/startup.py``). Garbage is still collected: a young
collection runs after every 10,000 new container objects, and a full one still runs on a long run,
after at least 4 million.

Only the entry points call :func:`tune` (``python -m kgx``, ``kgx.estimate``, ``kgx.report``, the
workers' fork server) and the test suite. Importing kgx as a library leaves the host process's
collector alone.
"""

from __future__ import annotations

import gc

PYTHON_DEFAULTS = (700, 10, 10)
THRESHOLDS = (10_000, 20, 20)


def tune() -> None:
    """Set :data:`THRESHOLDS` unless the process already set thresholds of its own."""
    if gc.get_threshold() == PYTHON_DEFAULTS:
        gc.set_threshold(*THRESHOLDS)
