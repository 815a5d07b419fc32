"""``hydra/launcher=ray``: every job of a sweep is a Ray task, on a local Ray instance or a cluster.

kgx's own launcher, not hydra-ray-launcher: that package requires cloudpickle<3 (for its AWS
launcher only), and joblib 1.6.0, which kgx pins, requires cloudpickle>=3, so the two cannot be
installed together. This is its local launcher (the same ``ray.init``/``ray.remote`` settings)
plus ``n_jobs``, the most jobs running at once, which kgx's sweep callback reads to share the
rate limits between jobs, as with joblib.

Ray is imported only when a sweep is launched: Hydra imports every plugin module on every run.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from hydra.core.hydra_config import HydraConfig
from hydra.core.singleton import Singleton
from hydra.core.utils import (
    JobReturn,
    configure_log,
    filter_overrides,
    run_job,
    setup_globals,
)
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict

log = logging.getLogger(__name__)
# ray.init arguments for starting a local instance, refused when connecting to a cluster
LOCAL_ONLY = ("num_cpus", "num_gpus", "include_dashboard", "object_store_memory", "resources", "_temp_dir")
LOG_GRACE_S = 1.0


def _run_job(
    hydra_context: HydraContext,
    sweep_config: DictConfig,
    task_function: TaskFunction,
    singleton_state: dict[Any, Any],
    cwd: str,
) -> JobReturn:
    """One job, in a Ray worker: in the launching directory when this machine has it (relative
    paths, the default ./mlruns store), with the launching process's Hydra state."""
    if os.path.isdir(cwd):
        os.chdir(cwd)
    setup_globals()
    Singleton.set_state(singleton_state)
    HydraConfig.instance().set_config(sweep_config)
    try:
        return run_job(
            hydra_context=hydra_context,
            task_function=task_function,
            config=sweep_config,
            job_dir_key="hydra.sweep.dir",
            job_subdir_key="hydra.sweep.subdir",
        )
    finally:  # a worker's output goes to a file Ray forwards to the launching terminal: not left in a buffer
        sys.stdout.flush()
        sys.stderr.flush()


class RayLauncher(Launcher):
    def __init__(self, n_jobs: int = 2, ray: Optional[DictConfig] = None) -> None:
        self.n_jobs = max(1, int(n_jobs))
        self.ray_cfg = ray if ray is not None else OmegaConf.create({"init": {}, "remote": {}})
        self.hydra_context: Optional[HydraContext] = None
        self.task_function: Optional[TaskFunction] = None
        self.config: Optional[DictConfig] = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.config = config
        self.hydra_context = hydra_context
        self.task_function = task_function

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        try:
            import ray
        except ImportError as exc:
            raise ImportError('hydra/launcher=ray needs Ray: pip install -e ".[ray]"') from exc
        assert self.config is not None and self.hydra_context is not None and self.task_function is not None
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        log.info(
            f"Ray launcher: {len(job_overrides)} jobs, at most {self.n_jobs} at once; sweep output dir {sweep_dir}"
        )

        init = OmegaConf.to_container(self.ray_cfg.get("init") or {}, resolve=True)
        init = {k: v for k, v in init.items() if v is not None}
        if init.get("address"):  # a running cluster: its resources are its own
            init = {k: v for k, v in init.items() if k not in LOCAL_ONLY}
        remote = OmegaConf.to_container(self.ray_cfg.get("remote") or {}, resolve=True)
        started = not ray.is_initialized()
        if started:
            ray.init(**init)
        try:
            task = ray.remote(**remote)(_run_job) if remote else ray.remote(_run_job)
            state = ray.put(Singleton.get_state())
            cwd = os.getcwd()
            pending: dict[Any, int] = {}
            results: dict[int, JobReturn] = {}
            for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
                if len(pending) >= self.n_jobs:  # at most n_jobs at once, whatever the cluster's size
                    [ready], _ = ray.wait(list(pending), num_returns=1)
                    results[pending.pop(ready)] = ray.get(ready)
                log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
                sweep_config = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
                with open_dict(sweep_config):
                    sweep_config.hydra.job.id = f"ray_{idx}"
                    sweep_config.hydra.job.num = idx
                pending[task.remote(self.hydra_context, sweep_config, self.task_function, state, cwd)] = idx
            for ref, idx in pending.items():
                results[idx] = ray.get(ref)
            return [results[idx] for idx in sorted(results)]
        finally:
            if started:
                time.sleep(LOG_GRACE_S)  # Ray forwards the workers' last lines asynchronously
                ray.shutdown()
