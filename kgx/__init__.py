"""kgx: declarative experiments for knowledge-graph question answering."""

import os

# litellm fetches its model price map from the internet at import unless told otherwise; offline
# that stalls every start (and deadlocks MLflow's server). The bundled map is used instead.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"
