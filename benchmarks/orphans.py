"""Process hygiene: what a ``kill -9`` of a kgx process leaves running 10 s later.

    python benchmarks/orphans.py [--after 10]

* ``sweep``: a 4-job joblib sweep (``llm=scripted llm.latency_s=60``), killed once every job runs.
* ``serve``: ``python -m kgx.kg serve`` on the demo store, killed once it answers.
* ``ui``: ``python -m kgx.ui`` (mlflow, uvicorn, its workers), killed once it answers.

Every process a parent starts inherits a marker variable, so its descendants are counted whoever
adopted them (Linux /proc). Prints, per scenario, the processes running at the kill and those left.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.helpers import TINY_SWEEP, kgx_env  # noqa: E402
from tests.orphans import kill_and_count, loky_workers, marker, wait_for  # noqa: E402


def start(cwd: Path, args: list[str], mark: dict[str, str]) -> tuple[subprocess.Popen, Path]:
    log = cwd / "out.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(args, cwd=cwd, env={**kgx_env(), **mark}, stdout=out, stderr=subprocess.STDOUT)
    return proc, log


def sweep(cwd: Path, mark: dict[str, str]) -> subprocess.Popen:
    (cwd / "sweeps").mkdir()
    (cwd / "sweeps" / "tiny.yaml").write_text(TINY_SWEEP)
    args = [sys.executable, "-m", "kgx", "-m", "+sweeps=tiny", "llm=scripted", "llm.latency_s=60"]
    proc, _ = start(cwd, args + ["run.progress=false", "hydra/launcher=joblib", "hydra.launcher.n_jobs=4"], mark)
    wait_for(lambda: len(list(cwd.glob("outputs/multirun/*/*/*/.hydra"))) == 4, 300, "4 jobs did not start")
    wait_for(lambda: loky_workers(mark) == 4, 60, "4 workers are not running")
    return proc


def serve(cwd: Path, mark: dict[str, str]) -> subprocess.Popen:
    from kgx.kg import BUNDLED_KG, build_store
    from kgx.kg.serve import free_port

    store = build_store([BUNDLED_KG], "nt", cwd / "demo")
    args = [sys.executable, "-m", "kgx.kg", "serve", "--store", str(store), "--port", str(free_port())]
    proc, log = start(cwd, args, mark)
    wait_for(lambda: "SPARQL query endpoint" in log.read_text(), 60, "the server did not answer")
    return proc


def ui(cwd: Path, mark: dict[str, str]) -> subprocess.Popen:
    from kgx.kg.serve import free_port

    proc, log = start(cwd, [sys.executable, "-m", "kgx.ui", "--port", str(free_port())], mark)
    wait_for(lambda: "dashboard:" in log.read_text(), 180, "the UI did not answer")
    return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after", type=float, default=10.0, help="seconds between the kill and the count")
    parser.add_argument("--only", default="sweep,serve,ui")
    args = parser.parse_args()
    for name in args.only.split(","):
        mark = marker()
        with tempfile.TemporaryDirectory(prefix=f"kgx-orphans-{name}-") as tmp:
            parent = {"sweep": sweep, "serve": serve, "ui": ui}[name](Path(tmp), mark)
            left, before = kill_and_count(parent, mark, args.after)
            print(
                f"{name}: kill -9 of the parent with {len(before)} processes under it: "
                f"{left} left {args.after:g} s later"
            )


if __name__ == "__main__":
    main()
