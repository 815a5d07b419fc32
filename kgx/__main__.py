"""``python -m kgx [overrides]``: one run, or a sweep with ``-m``."""
from __future__ import annotations

import faulthandler
import math
import sys
from pathlib import Path
from typing import Optional

import hydra
from omegaconf import DictConfig

from kgx import sweep
from kgx.config import ConfigError, register
from kgx.spec import to_run_spec

register()
# A crash in native code (llama.cpp, a driver) prints the Python stack that led into it.
faulthandler.enable()


@hydra.main(version_base=None, config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> Optional[float]:
    from kgx.datasets import DataError
    from kgx.kg import KGError
    from kgx.llm.client import LLMError
    from kgx.locks import Busy
    from kgx.run import execute

    job = sweep.current_job()
    try:
        spec = to_run_spec(cfg)
        outcome = execute(spec, Path.cwd(), run_name=job.name, parent_id=job.parent_id)
    except (ConfigError, DataError, KGError, LLMError, Busy, FileNotFoundError) as exc:
        if job.parent_id:
            return sweep.job_failed(cfg, job, exc)
        raise SystemExit(f"kgx: error: {exc}") from None
    except Exception as exc:  # a crashed job must not stop the other jobs of a sweep
        if job.parent_id:
            return sweep.job_failed(cfg, job, exc)
        raise
    s = outcome.summary
    if outcome.skipped:
        print(f"already finished: mlflow run {outcome.run_id} (hits@1={s.get('hits1', float('nan')):.1f}); "
              f"run.force=true recomputes")
        return s.get("hits1", float("nan"))
    cost = "unknown" if math.isnan(s["cost_usd"]) else f"${s['cost_usd']:.4f}"
    print(
        f"{spec.method.name} on {spec.dataset.name} with {spec.llm.name}: "
        f"hits@1={s['hits1']:.1f} hits1_tog={s['hits1_tog']:.1f} hit_any={s['hit_any']:.1f} "
        f"f1={s['f1']:.1f} over {int(s['n_questions'])} questions ({int(s['errors'])} errors)\n"
        f"  evidence: answer_recall={s['answer_recall']:.1f} partial_match={s['partial_match']:.1f} "
        f"complete_match={s['complete_match']:.1f}; fallback {s['fallback_rate']:.1f}%, "
        f"{s['parse_failures']:.0f} parse failures\n"
        f"  per question: {s['llm_calls_per_q']:.2f} LLM calls, {s['total_tokens_per_q']:.0f} tokens, "
        f"{s['latency_s_per_q']:.2f} s; cost {cost}; wall {s['wall_s']:.1f} s\n"
        f"  this invocation: {outcome.computed} answered, {outcome.resumed} resumed, "
        f"{outcome.billed_calls} billed LLM calls\n"
        f"  outputs {outcome.out_dir}  mlflow run {outcome.run_id} ({outcome.status})"
    )
    if outcome.interrupted:
        print("interrupted: finished questions are kept; run the same command to resume", file=sys.stderr)
        raise SystemExit(130)
    if outcome.status == "FAILED":
        problem = failure_report(outcome)
        if job.parent_id:  # the sweep goes on; its parent counts this job as failed
            print(f"kgx: job {job.name}: {problem}", file=sys.stderr)
            return s["hits1"]
        raise SystemExit(f"kgx: error: {problem}")
    return s["hits1"]


def failure_report(outcome) -> str:
    """Why a run is FAILED, and that a rerun picks up exactly what is missing."""
    from kgx.failures import describe

    parts = []
    if outcome.tripped:
        parts.append(f"stopped early: {outcome.tripped.signature} on consecutive questions "
                     f"({outcome.tripped.message})")
    if outcome.failures:
        parts.append(f"{len(outcome.failures)} of {len(outcome.records)} questions ended in errors "
                     f"({describe(outcome.failures)}); their figures are partial")
    if outcome.not_started:
        parts.append(f"{outcome.not_started} questions were not run")
    return ("; ".join(parts) + ". The MLflow run is FAILED. Finished questions are kept: run the same "
            "command to compute the rest.")


if __name__ == "__main__":
    main()
