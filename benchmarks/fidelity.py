"""Method fidelity figures: what each KG method retrieves and spends per question.

    python benchmarks/fidelity.py                      # 100 MetaQA 2-hop questions, scripted backbone
    python benchmarks/fidelity.py --local              # the 16 demo questions, the local SmolLM2 model
    python benchmarks/fidelity.py --only lmp --set method.sample_when_trivial=false

Prints one row per method: answer recall (a gold answer in the gathered evidence), hits@1, the
fallback rate, LLM calls, tokens and parse failures per question, and the method's own stats. The
scripted backbone is deterministic, so its rows measure the implementation (what a layer offers,
what survives into the evidence), never a model's accuracy; the local model's rows show what a
weak real model meets. Runs go to a temporary folder; built KG stores are kept in --cache.
Needs ``$KGX_DATA_DIR`` for MetaQA.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

METHODS = {"lmp": ["method.depth=2"], "knowpath": [], "tog": [], "tog_r": [], "cgpe": [], "pog": [], "structgpt": []}
SHOWN = ("answer_recall", "hits1", "fallback_rate", "llm_calls_per_q", "total_tokens_per_q", "parse_failures")


def outcome(overrides: list[str], cache: Path):
    """One run in process, as ``python -m kgx`` makes it, in a temporary launch folder: its outcome."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from kgx.core.paths import CONF_DIR
    from kgx.run.compose import register_schemas
    from kgx.run.execute import execute
    from kgx.run.spec import to_run_spec

    register_schemas()
    GlobalHydra.instance().clear()
    with tempfile.TemporaryDirectory() as launch, initialize_config_dir(str(CONF_DIR), version_base=None):
        cfg = compose("config", [*overrides, f"run.cache_dir={cache}", "run.progress=false", "run.explain=0"])
        cwd = os.getcwd()
        os.chdir(launch)
        try:
            return execute(to_run_spec(cfg), Path(launch))
        finally:
            os.chdir(cwd)
            GlobalHydra.instance().clear()


def run(method: str, overrides: list[str], cache: Path) -> dict[str, float]:
    return outcome([f"method={method}", *METHODS[method], *overrides], cache).summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", action="store_true", help="the local model on the demo questions")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--only", nargs="*", default=list(METHODS))
    parser.add_argument("--set", nargs="*", default=[], help="extra overrides for every run")
    parser.add_argument("--cache", type=Path, default=Path(".kgx_cache"))
    args = parser.parse_args()
    if args.local:
        base = ["llm=local", "kg=demo", "dataset=demo", "llm.cache=false"]
    else:
        base = [
            "llm=scripted",
            "kg=metaqa",
            "dataset=metaqa_2hop",
            f"dataset.limit={args.questions}",
            "llm.cache=false",
        ]
    print(f"{'method':10}" + "".join(f"{name:>20}" for name in SHOWN) + "  wall_s  stats")
    for method in args.only:
        start = time.perf_counter()
        s = run(method, [*base, *args.set], args.cache.resolve())
        stats = ", ".join(f"{k[5:]}={v:.2f}" for k, v in sorted(s.items()) if k.startswith("stat."))
        print(
            f"{method:10}"
            + "".join(f"{s[name]:>20.2f}" for name in SHOWN)
            + f"  {time.perf_counter() - start:6.0f}  {stats}",
            flush=True,
        )


if __name__ == "__main__":
    main()
