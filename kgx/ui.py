"""``python -m kgx.ui``: the MLflow UI over kgx's store, on loopback.

MLflow's server imports litellm when it is installed; without a local price map that import
waits on the network forever, so the environment it needs is set here, not left to the user.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kgx.config import RunConfig
from kgx.tracking import tracking_uri


def command(port: int, uri: str) -> list[str]:
    return [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri,
            "--host", "127.0.0.1", "--port", str(port)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kgx.ui", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--tracking-uri", default=None,
                        help="default: $MLFLOW_TRACKING_URI, else ./mlruns/mlflow.db")
    args = parser.parse_args(argv)
    uri = args.tracking_uri or tracking_uri(RunConfig(), Path.cwd())
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    print(f"MLflow UI for {uri} on http://127.0.0.1:{args.port}", flush=True)
    os.execv(sys.executable, command(args.port, uri))


if __name__ == "__main__":
    main()
