"""``python -m kgx.ui``: the MLflow UI over kgx's store, on loopback, opened on the comparison
(with ``--tracking-uri http://...``: the dashboard URL on that server, which serves the UI itself).

MLflow 3 opens an experiment with traces in its GenAI mode (an empty overview) and shows no
metric column in its runs table until one is picked. So the experiment is marked as a classic
one and given a saved runs-table view with the headline figures (kgx.track.tracker.present), and the
URL printed (and opened with ``--open``) is the runs table in that view.

MLflow's server imports litellm when it is installed; without a local price map that import
waits on the network forever, so the environment it needs is set here, not left to the user
(with MLflow's job runner off: kgx starts no GenAI job).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import webbrowser
from pathlib import Path
from typing import Optional

from kgx.core.cli import plain
from kgx.core.config import RunConfig
from kgx.core.lifeline import guard_group
from kgx.track.tracker import present, runs_url, tracking_uri


def command(port: int, uri: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "mlflow",
        "ui",
        "--backend-store-uri",
        uri,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def dashboard(uri: str, experiment: str, base: str) -> str:
    """The runs table of ``experiment`` in the kgx view; the bare UI when the store or the
    experiment does not exist yet (nothing is created here)."""
    if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///") :]).exists():
        return base
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return base
    present(client, found.experiment_id)  # stores made before the view existed get it too
    return runs_url(base, found.experiment_id)


def port_taken(port: int) -> Optional[str]:
    """Why 127.0.0.1:``port`` cannot be served on, or None: said at once, not after the server
    has spent its start-up (about 20 s) failing to bind."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def wait_up(base: str, server: subprocess.Popen, timeout_s: float = 120.0) -> bool:
    deadline = time.time() + timeout_s
    while time.time() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=2) as reply:
                if reply.read() == b"OK":
                    return True
        except OSError:
            time.sleep(0.5)
    return False


def serve_remote(uri: str, experiment: str, open_it: bool) -> None:
    """A tracking server is its own UI: nothing to start, only the view to store and the URL to
    print (the team's runs table, in the kgx view)."""
    url = dashboard(uri, experiment, uri.rstrip("/"))
    print(f"MLflow UI of the tracking server {uri}\ndashboard: {url}", flush=True)
    if open_it:
        webbrowser.open(url)


def stop(server: subprocess.Popen, timeout_s: float = 30.0) -> None:
    """SIGTERM to the server's process group (mlflow, uvicorn and its workers), SIGKILL to what
    is left after ``timeout_s``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(server.pid, sig)
            server.wait(timeout=timeout_s)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # a terminated kgx.ui stops its server rather than orphaning it


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kgx.ui", description=plain(__doc__).splitlines()[0])
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--tracking-uri", default=None, help="default: $MLFLOW_TRACKING_URI, else ./mlruns/mlflow.db")
    parser.add_argument("--experiment", default=RunConfig().experiment)
    parser.add_argument("--open", action="store_true", help="open the dashboard in a browser")
    args = parser.parse_args(argv)
    uri = args.tracking_uri or tracking_uri(RunConfig(), Path.cwd())
    if uri.startswith(("http://", "https://")):
        serve_remote(uri, args.experiment, args.open)
        return
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    # MLflow's job runner (seven huey consumer processes for its GenAI jobs, which kgx does not
    # use) would double the server's start-up time and memory.
    os.environ.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")
    base = f"http://127.0.0.1:{args.port}"
    taken = port_taken(args.port)
    if taken:
        raise SystemExit(f"kgx: error: cannot serve on {base}: {taken}; is port {args.port} taken? Try --port")
    url = dashboard(uri, args.experiment, base)
    print(f"starting the MLflow UI for {uri} ...", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)
    # Its own process group, guarded: a kill -9 of this process takes mlflow, uvicorn and its
    # workers along (kgx.core.lifeline) rather than leaving them holding the port.
    server = subprocess.Popen(command(args.port, uri), start_new_session=True)
    guard = guard_group(server.pid)
    try:
        if not wait_up(base, server):  # the URL is printed only once it answers
            stop(server)
            raise SystemExit(
                f"kgx: error: the MLflow UI did not come up on {base} (exit code {server.wait()}); "
                f"is port {args.port} taken? Try --port"
            )
        print(f"MLflow UI for {uri} on {base}\ndashboard: {url}", flush=True)
        if args.open:
            webbrowser.open(url)
        raise SystemExit(server.wait())
    except KeyboardInterrupt:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second signal must not cut the shutdown short
        stop(server)
    finally:
        guard.terminate()


if __name__ == "__main__":
    main()
