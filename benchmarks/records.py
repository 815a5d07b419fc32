"""What a run's records cost: the loop's time, the time after it, bytes and files a question.

    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/records.py                   # 1k, 20k, 100k
    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/records.py --sizes 1000 20000 --baseline main

Each figure is one run of ``method=M kg=demo llm=scripted run.concurrency=128`` (``--methods``:
ToG, about 25 spans a transcript and 3.7 ms a question in the loop, and IO, 3 spans and 0.5 ms)
with every record setting at its default (traces and transcripts on) on the demo questions
repeated under new ids, in a child process of its own and a fresh working directory (a new MLflow
store). **after** is everything ``execute`` does once the question loop has returned: the parquet file,
the artifacts, the explanations, the transcripts and the run report; its parts are timed too.
**bytes** and **files** are what the run left besides its question file: the run folder
(``outputs/``) and the MLflow store (``mlruns/``: its database and artifacts). ``--baseline REF``
runs the same sizes with another git ref's code too (a temporary ``git worktree``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from loop_kg import checkout  # noqa: E402  (beside this file)

HERE = Path(__file__).resolve()
# The steps after the loop, timed where this code (or a baseline's) has them.
STEPS = {
    "kgx.run.execute": ("_log_artifacts", "_log_explanations"),
    "kgx.track.transcripts": ("log",),
    "kgx.report": ("log_run_report",),
}


def timed(module: Any, name: str, spent: dict[str, float], label: str) -> None:
    """Add ``module.name``'s seconds to ``spent[label]`` at every call."""
    original: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - start

    setattr(module, name, wrapper)


def usage(root: Path) -> tuple[int, int]:
    """(bytes, files) under ``root``."""
    size = files = 0
    for folder, _, names in os.walk(root):
        for name in names:
            size += os.lstat(os.path.join(folder, name)).st_size
            files += 1
    return size, files


def child(questions: int, method: str) -> None:
    """One run in this process; prints its figures as one JSON line."""
    with contextlib.suppress(ImportError):  # a baseline older than kgx.core.collector
        from kgx.core.collector import tune

        tune()
    import importlib

    from hydra import compose, initialize_config_dir
    from transcripts import dataset

    import kgx.run.execute as execute_module
    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.spec import to_run_spec

    spent: dict[str, float] = {}
    for module_name, names in STEPS.items():
        module = importlib.import_module(module_name)
        for name in names:
            if hasattr(module, name):
                timed(module, name, spent, name.strip("_"))
    returned: list[float] = []
    answer_all = execute_module.answer_all

    def loop(*args: Any, **kwargs: Any) -> Any:
        try:
            return answer_all(*args, **kwargs)
        finally:
            returned.append(time.perf_counter())

    execute_module.answer_all = loop
    work = Path(tempfile.mkdtemp(prefix="kgx-records-"))
    path = dataset(questions, work)
    register_schemas()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(
            config_name="config",
            overrides=[
                f"method={method}",
                "kg=demo",
                "llm=scripted",
                "dataset=custom",
                f"dataset.path={path}",
                "dataset.name=synthetic",
                "run.progress=false",
                "run.concurrency=128",
            ],
        )
    os.chdir(work)
    outcome = execute_module.execute(to_run_spec(cfg), work)
    after = time.perf_counter() - returned[-1]
    figures = {"loop_s": outcome.summary["wall_s"], "after_s": after, "steps": spent}
    for part in ("outputs", "mlruns"):
        figures[f"{part}_bytes"], figures[f"{part}_files"] = usage(work / part)
    db = work / "mlruns" / "mlflow.db"
    figures["db_bytes"] = db.stat().st_size if db.exists() else 0
    print(json.dumps(figures))
    shutil.rmtree(work)


def measure(questions: int, method: str, code: Optional[Path]) -> dict[str, Any]:
    """One run of ``questions`` in a child process running ``code``'s kgx (None: this checkout's,
    whichever kgx the environment has installed)."""
    env = dict(os.environ)
    code = code or HERE.parents[1]
    env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(
        [sys.executable, str(HERE), "--child", str(questions), method], capture_output=True, text=True, env=env
    )
    if done.returncode:
        raise SystemExit(f"{questions} questions failed with {code or 'this checkout'}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def row(label: str, n: int, got: dict[str, Any]) -> str:
    size = got["outputs_bytes"] + got["mlruns_bytes"]
    files = got["outputs_files"] + got["mlruns_files"]
    rest = got["after_s"] - sum(got["steps"].values())
    steps = ", ".join(f"{k} {v:.1f}" for k, v in {**got["steps"], "the rest": rest}.items())
    return (
        f"{label:>12} {n:>7,} questions: loop {got['loop_s']:.1f} s, after {got['after_s']:.1f} s "
        f"({got['after_s'] / got['loop_s']:.2f}x the loop; {steps}); "
        f"{size / n / 1024:.1f} KB and {files / n:.3f} files a question "
        f"({size / 2**20:.0f} MB: run folder {got['outputs_bytes'] / 2**20:.0f} MB, "
        f"MLflow database {got['db_bytes'] / 2**20:.0f} MB, MLflow artifacts "
        f"{(got['mlruns_bytes'] - got['db_bytes']) / 2**20:.0f} MB; {files:,} files)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[1000, 20000, 100000])
    parser.add_argument("--baseline", help="a git ref whose code runs the same sizes too")
    parser.add_argument("--methods", nargs="*", default=["tog", "io"], help="a run per method (on the demo KG)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.child[0]), args.child[1])
        return
    with contextlib.ExitStack() as stack:
        codes: list[tuple[str, Optional[Path]]] = [("this", None)]
        if args.baseline:
            codes.insert(0, (args.baseline, stack.enter_context(checkout(args.baseline))))
        for method in args.methods:
            for n in args.sizes:
                for label, code in codes:
                    print(row(f"{label} {method}", n, measure(n, method, code)), flush=True)


if __name__ == "__main__":
    main()
