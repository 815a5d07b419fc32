"""A sweep's joblib workers end with their launcher, even when it is killed with ``kill -9``.

Hydra's joblib launcher runs jobs in loky worker processes. A killed launcher runs no cleanup, so
its workers went on under PID 1, finishing their jobs and then idling for loky's five-minute
timeout, and loky's resource trackers waited for them (2.3 GB held in a 4-job sweep). The
launcher gives no hook of its own, so the ``loky`` backend joblib builds for it is registered
again here (joblib's public ``register_parallel_backend``) with a worker initializer: each worker
watches its parent pid and kills itself once the launcher is gone (kgx.core.lifeline). The
resource trackers then read end-of-file on their pipe and exit on their own.
"""

from __future__ import annotations

import functools
import os

from kgx.core.lifeline import watch_parent

JOBLIB_LAUNCHER = "hydra_joblib_launcher"


def start_worker(launcher_pid: int) -> None:
    """loky's initializer, in every worker as it starts: die with the launcher."""
    watch_parent(launcher_pid)


def bind_workers(launcher_target: str) -> bool:
    """In the launching process, before the launcher starts its pool: give the workers of the
    joblib launcher (named by its ``_target_``) :func:`start_worker`. True when it applies."""
    if JOBLIB_LAUNCHER not in launcher_target:
        return False
    from joblib import register_parallel_backend
    from joblib._parallel_backends import LokyBackend  # the launcher hard-codes backend="loky"

    factory = functools.partial(LokyBackend, initializer=start_worker, initargs=(os.getpid(),))
    register_parallel_backend("loky", factory)
    return True
