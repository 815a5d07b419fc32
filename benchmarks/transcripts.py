"""What per-question transcripts cost a run: the question loop's wall time with run.traces=off and
run.traces=all, and the whole run's.

    LITELLM_LOCAL_MODEL_COST_MAP=True python benchmarks/transcripts.py [--questions 1000] [--repeats 3]

The questions are the bundled demo questions repeated under new ids (kgx has no repeat setting),
answered by ``method=io kg=demo llm=scripted`` in a fresh working directory per run, so every run
fills its own response cache alike. kgx logs transcripts after the loop; ``--live`` also replays
the same transcripts through MLflow's own tracing API (its async export on), the way a live or
background logger would, and prints what that costs the calling thread and how many traces it keeps.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from mlflow.tracking import MlflowClient

from kgx.core.paths import CONF_DIR
from kgx.run.compose import register_schemas
from kgx.run.execute import execute
from kgx.run.spec import to_run_spec

DEMO = Path(__file__).resolve().parents[1] / "kgx" / "datasets" / "demo" / "questions.jsonl"


def dataset(n: int, where: Path) -> Path:
    """``n`` demo questions, repeated under new ids."""
    demo = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    path = where / "questions.jsonl"
    path.write_text("".join(json.dumps({**demo[i % len(demo)], "id": f"syn-{i:05d}"}) + "\n" for i in range(n)))
    return path


def one_run(questions: Path, setting: str) -> tuple[float, float, int, Path]:
    """(loop wall s, whole run s, traces logged, working directory) of one run in a fresh directory."""
    work = Path(tempfile.mkdtemp(prefix=f"kgx-transcripts-{setting}-"))
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(
            config_name="config",
            overrides=[
                "method=io",
                "kg=demo",
                "llm=scripted",
                f"dataset.path={questions}",
                "dataset.limit=null",
                "dataset.name=synthetic",
                "run.progress=false",
                f"run.traces={setting}",
            ],
        )
    spec = to_run_spec(cfg)
    os.chdir(work)
    start = time.perf_counter()
    outcome = execute(spec, work)
    whole = time.perf_counter() - start
    client = MlflowClient(f"sqlite:///{work / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_run(outcome.run_id).info.experiment_id
    logged = len(
        client.search_traces(locations=[experiment], run_id=outcome.run_id, include_spans=False, max_results=50_000)
    )
    return outcome.summary["wall_s"], whole, logged, work


def live(work: Path) -> str:
    """Replay the run's transcripts through MLflow's live tracing API into a fresh store (spans with
    their inputs and outputs, without kgx's attributes: a lower bound of what live logging costs)."""
    import mlflow
    from mlflow.entities import Span

    from kgx.results.predlog import PredictionLog
    from kgx.track import transcripts

    records = list(PredictionLog(next(work.glob("outputs/runs/*/predictions.jsonl"))).read().latest.values())
    trees = list(transcripts.trees(records, next(work.glob("outputs/runs/*"))))
    mlflow.set_tracking_uri(f"sqlite:///{work / 'live.db'}")
    client = MlflowClient()
    experiment = client.create_experiment("live")
    start = time.perf_counter()
    for tree in trees:
        spans = [Span.from_dict(s) for s in tree.spans]
        root, ids = spans[0], {}
        top = client.start_trace(
            root.name, inputs=root.inputs, experiment_id=experiment, start_time_ns=root.start_time_ns
        )
        ids[root.span_id] = top.span_id
        for span in spans[1:]:
            ids[span.span_id] = client.start_span(
                span.name,
                top.trace_id,
                ids[span.parent_id],
                span.span_type,
                span.inputs,
                start_time_ns=span.start_time_ns,
            ).span_id
        for span in reversed(spans[1:]):
            client.end_span(top.trace_id, ids[span.span_id], span.outputs, end_time_ns=span.end_time_ns)
        client.end_trace(top.trace_id, root.outputs, end_time_ns=root.end_time_ns)
    caller = time.perf_counter() - start
    mlflow.flush_trace_async_logging()
    done = time.perf_counter() - start
    kept = len(client.search_traces(locations=[experiment], include_spans=False, max_results=50_000))
    return (
        f"MLflow live tracing API, {len(trees)} traces: {caller:.2f} s on the calling thread, "
        f"{done:.2f} s until exported, {kept} of {len(trees)} kept"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--live", action="store_true")
    args = parser.parse_args()
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.ERROR)
    register_schemas()
    questions = dataset(args.questions, Path(tempfile.mkdtemp(prefix="kgx-transcripts-data-")))
    figures: dict[str, list[tuple[float, float]]] = {"off": [], "all": []}
    last = None
    for repeat in range(args.repeats):
        for setting in ("off", "all"):
            loop, whole, logged, work = one_run(questions, setting)
            figures[setting].append((loop, whole))
            last = work if setting == "all" else last
            print(
                f"run {repeat + 1} run.traces={setting}: loop {loop:.2f} s, whole run {whole:.2f} s, {logged} traces",
                flush=True,
            )
    off, on = (statistics.median(f[0] for f in figures[s]) for s in ("off", "all"))
    off_whole, on_whole = (statistics.median(f[1] for f in figures[s]) for s in ("off", "all"))
    print(
        f"median over {args.repeats}, {args.questions} questions: question loop off {off:.2f} s, all {on:.2f} s, "
        f"ratio {on / off:.3f}; whole run off {off_whole:.2f} s, all {on_whole:.2f} s "
        f"(+{on_whole - off_whole:.2f} s for the transcripts, after the loop)"
    )
    if args.live and last is not None:
        print(live(last))


if __name__ == "__main__":
    main()
