"""kgx: declarative experiments for knowledge-graph question answering.

``kgx.run_experiment(*overrides)`` runs one experiment, ``kgx.run_sweep(*overrides)`` a sweep, and
``kgx.load_runs()`` gives finished runs as a polars frame (:mod:`kgx.api`). They are imported on
first use: ``import kgx`` itself stays light.
"""

import os
from typing import Any

# litellm fetches its model price map from the internet at import unless told otherwise; offline
# that stalls every start (and deadlocks MLflow's server). The bundled map is used instead.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"
__all__ = ["Result", "SweepResult", "__version__", "load_runs", "run_experiment", "run_sweep"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kgx import api

        return getattr(api, name)
    raise AttributeError(f"module 'kgx' has no attribute '{name}'")
