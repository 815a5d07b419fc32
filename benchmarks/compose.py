"""What composing a run's config costs, with kgx's two changes to Hydra 1.3 (kgx.run.compose) and
without them: the config store shared rather than deep-copied at each compose, and each distinct
YAML text parsed once per process.

    python benchmarks/compose.py                 # 10 methods x 4 datasets, 4 rounds
    python benchmarks/compose.py --rounds 8

Rounds alternate between the two in one process, so both see the same machine; each row gives
the CPU per compose (median over rounds, and the range). Every config of one side equals the
other's, or the script fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from hydra import compose, initialize_config_dir  # noqa: E402
from hydra._internal.core_plugins import file_config_source, importlib_resources_config_source  # noqa: E402
from hydra.core.config_store import ConfigStore  # noqa: E402
from hydra.core.global_hydra import GlobalHydra  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from kgx.core.paths import CONF_DIR  # noqa: E402
from kgx.methods import METHODS  # noqa: E402
from kgx.run.compose import ParsedOnce, register_schemas  # noqa: E402

DATASETS = ("demo", "metaqa_2hop", "cwq", "webqsp")


def composed(overrides: list[str]) -> dict:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(config_name="config", overrides=overrides)
    return OmegaConf.to_container(cfg)  # type: ignore[return-value]


def as_shipped(on: bool) -> None:
    """Hydra 1.3 as released (``on=False``) or with kgx's changes."""
    if on:
        register_schemas()
        return
    if "__deepcopy__" in vars(ConfigStore):
        del ConfigStore.__deepcopy__
    file_config_source.OmegaConf = importlib_resources_config_source.OmegaConf = OmegaConf  # type: ignore[misc]


def round_ms(jobs: list[list[str]], kgx: bool, seen: dict[str, list[dict]]) -> float:
    as_shipped(kgx)
    start = time.process_time()
    configs = [composed(job) for job in jobs]
    spent = (time.process_time() - start) / len(jobs) * 1000
    seen.setdefault("kgx" if kgx else "hydra", configs)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    register_schemas()
    jobs = [[f"method={m}", f"dataset={d}", "llm=scripted"] for m in sorted(METHODS) for d in DATASETS]
    for job in jobs[:4]:  # imports, the plugin scan and the first parse of every file
        composed(job)
    seen: dict[str, list[dict]] = {}
    times: dict[str, list[float]] = {"hydra": [], "kgx": []}
    for _ in range(args.rounds):
        times["hydra"].append(round_ms(jobs, False, seen))
        times["kgx"].append(round_ms(jobs, True, seen))
    if seen["hydra"] != seen["kgx"]:
        sys.exit("error: the two sides composed different configs")
    assert file_config_source.OmegaConf is ParsedOnce
    print(f"{len(jobs)} composes a round ({len(METHODS)} methods x {len(DATASETS)} datasets), {args.rounds} rounds")
    for side, label in (("hydra", "Hydra 1.3 as released"), ("kgx", "kgx.run.compose")):
        ms = times[side]
        print(f"  {label:<22} {statistics.median(ms):6.1f} ms CPU a compose ({min(ms):.1f}-{max(ms):.1f})")


if __name__ == "__main__":
    main()
