"""Hydra's own record of a run keeps its command line verbatim: ``.hydra/overrides.yaml``,
``config.yaml`` and ``hydra.yaml`` in the run's directory, and a sweep's ``multirun.yaml``. A
credential given there (``llm.extra.api_key=...``, ``run.cache_url=redis://:pw@...``) would stay in
them, although kgx redacts it everywhere else. :func:`scrub` makes every credential the config
holds known to :data:`kgx.core.boundary.SECRETS` and rewrites those files without them, first
thing in a job, before anything can stop it. A sweep's launcher prints each job's overrides:
:func:`redact_logs` makes every log record redact them.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from kgx.core.boundary import SECRETS
from kgx.core.masking import config_secrets, is_secret_key


def know_secrets(cfg: DictConfig, overrides: list[str]) -> None:
    """Add the credentials of the config and of its overrides to SECRETS."""
    for name, value in config_secrets(OmegaConf.to_container(cfg, resolve=False)):
        SECRETS.add(value, name)
    for override in overrides:
        key, eq, value = override.partition("=")
        if eq and is_secret_key(key.lstrip("+~").rsplit(".", 1)[-1]):
            SECRETS.add(value, key.lstrip("+~"))


def record_files() -> list[Path]:
    """The files in which Hydra recorded this job's config and command line."""
    hydra = HydraConfig.get()
    files = []
    if hydra.output_subdir is not None:
        files += sorted((Path(hydra.runtime.output_dir) / hydra.output_subdir).glob("*.yaml"))
    if hydra.mode == RunMode.MULTIRUN:
        files.append(Path(hydra.sweep.dir) / "multirun.yaml")
    return [path for path in files if path.is_file()]


def scrub(cfg: DictConfig) -> int:
    """Redact the run's secrets from Hydra's record of it; returns how many were found. A file is
    replaced whole (written aside, then renamed), so a job killed meanwhile leaves one or the other."""
    hydra = HydraConfig.get()
    know_secrets(cfg, [*hydra.overrides.task, *hydra.overrides.hydra])
    found = 0
    for path in record_files():
        text, n = SECRETS.redact(path.read_text(encoding="utf-8"))
        if n:
            aside = path.with_name(f".{path.name}.{os.getpid()}")
            aside.write_text(text, encoding="utf-8")
            os.replace(aside, path)
            found += n
    return found


def redact_logs(config: DictConfig) -> None:
    """Have every log record of the process redact the secrets of ``config`` and its overrides
    (a record factory: Hydra's launchers configure their handlers again as they start)."""
    know_secrets(config, list(config.hydra.overrides.task))
    make = logging.getLogRecordFactory()
    if getattr(make, "redacting", False):
        return

    def record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        made = make(*args, **kwargs)
        text, n = SECRETS.redact(made.getMessage())
        if n:
            made.msg, made.args = text, None
        return made

    record.redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(record)
