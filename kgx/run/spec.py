"""The composed run as objects: what ``python -m kgx`` runs.

``to_run_spec`` turns Hydra's composed config into typed objects, running every range check,
resolving per-stage backbones and refusing what Hydra lets through silently: a ``+method.<key>``
the method does not have, and a ``llm.stages.<stage>`` the method never calls.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Sequence

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import InterpolationValidationError, MissingMandatoryValue

from kgx.core.config import (
    ConfigError,
    DatasetConfig,
    LLMConfig,
    MethodConfig,
    RunConfig,
)
from kgx.core.kg_config import KGConfig
from kgx.core.masking import masked_config
from kgx.core.paper_settings import SettingsSource
from kgx.core.paths import CONF_DIR
from kgx.core.run_identity import behaviours, identity
from kgx.llm.ratelimit import JOBS_ENV
from kgx.run.temperatures import check_temperatures

# run.processes=auto (auto_processes): questions in flight per process, questions to answer.
PER_PROCESS = 128
MIN_QUESTIONS = 1000


def llm_config(value: Any) -> LLMConfig:
    """An LLM config from a ``conf/llm`` option name or a mapping of LLMConfig fields.

    This is what lets ``llm.stages.answer=gpt4`` name a backbone per stage.
    """
    base = OmegaConf.structured(LLMConfig)
    if isinstance(value, str):
        path = CONF_DIR / "llm" / f"{value}.yaml"
        if not path.exists():
            options = sorted(p.stem for p in (CONF_DIR / "llm").glob("*.yaml"))
            raise ConfigError(f"llm stage backbone '{value}': no conf/llm/{value}.yaml; options: {options}")
        value = OmegaConf.load(path)
    try:
        merged = OmegaConf.merge(base, value)
    except Exception as exc:  # omegaconf raises several validation types
        raise ConfigError(f"llm stage backbone: {exc}") from exc
    return OmegaConf.to_object(merged)


@dataclass
class RunSpec:
    """The composed run as objects, with stage backbones resolved."""

    run: RunConfig
    method: MethodConfig
    dataset: DatasetConfig
    llm: LLMConfig
    kg: KGConfig
    stages: dict[str, LLMConfig]
    settings: SettingsSource = field(default_factory=SettingsSource)  # where the method's settings came from

    @property
    def workers(self) -> int:
        """Questions in flight: run.concurrency, capped by backbones that serve one at a time,
        so that a question's latency measures its own work rather than a queue."""
        limits = [b.max_parallel for b in (self.llm, *self.stages.values()) if b.max_parallel]
        return min([self.run.concurrency, *limits])

    def processes(self, questions: int) -> int:
        """Worker processes (kgx.run.processes) for ``questions`` to answer: ``run.processes``, never
        more than questions in flight; ``auto`` decides with :func:`auto_processes`."""
        if self.run.processes == "auto":
            return auto_processes(min(self.workers, questions), self.method.horizon() is not None, questions)
        return min(int(self.run.processes), self.workers, questions)

    def resolved(self) -> dict[str, Any]:
        """The whole run as plain data, stage backbones expanded: what is logged."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "stages":
                out["llm_stages"] = {k: OmegaConf.to_container(OmegaConf.structured(v)) for k, v in value.items()}
            else:
                out[f.name] = OmegaConf.to_container(OmegaConf.structured(value))
        # No credential in a URL (llm.api_base, kg.endpoint, run.cache_url ...) nor a value under a
        # credential's name (llm.extra.api_key=...) is logged.
        return masked_config(out)

    def identity(self) -> dict[str, Any]:
        """What the run's results depend on: :meth:`resolved` without execution fields, and the
        behaviour version of a versioned double it calls (the oracle's), for such runs only."""
        versions = behaviours([self.llm.model, *(b.model for b in self.stages.values())])
        # Credentials are masked: an API key or a URL's password changes who pays, not the results.
        return masked_config(
            {
                "run": identity(self.run),
                "method": identity(self.method),
                "dataset": identity(self.dataset),
                "llm": identity(self.llm),
                "kg": identity(self.kg),
                "llm_stages": {k: identity(v) for k, v in self.stages.items()},
                **({"behaviours": versions} if versions else {}),
            }
        )


def auto_processes(workers: int, reads_kg: bool, questions: int) -> int:
    """More than one process only where the figures say it pays (docs/guides/composing-runs.md,
    "Several processes"): a method that reads the KG, PER_PROCESS questions in flight per process,
    enough questions to repay the fork server's start, and a core for each process besides the
    one the run's own process needs (a sweep's parallel jobs share the cores)."""
    if not reads_kg or questions < MIN_QUESTIONS:
        return 1
    cores = (os.cpu_count() or 1) // max(1, int(os.environ.get(JOBS_ENV, "1")))
    return max(1, min(cores - 1, workers // PER_PROCESS))


def to_run_spec(cfg: DictConfig, overrides: Sequence[str] = ()) -> RunSpec:
    """Check ranges and resolve stage backbones; raises ConfigError naming the field.
    ``overrides`` (what the user set) lets a setting the run would ignore be refused."""
    try:
        obj = OmegaConf.to_object(cfg)
    except MissingMandatoryValue as exc:
        raise ConfigError(f"{exc.full_key}: a value is required (e.g. {exc.full_key}=...)") from exc
    except InterpolationValidationError as exc:  # kg=subgraph's sources: ${dataset.path} on a dataset without one
        raise ConfigError(
            f"{exc.full_key}: {str(exc).splitlines()[0]}; set the value it refers to (or {exc.full_key} itself)"
        ) from exc
    method = obj.method
    if not isinstance(method, MethodConfig):
        raise ConfigError("method: choose one of conf/method (e.g. method=cot)")
    if not isinstance(obj.kg, KGConfig):
        raise ConfigError("kg: choose one of conf/kg, or a KG backend (e.g. kg=demo)")
    check_method_keys(cfg.method, method)
    check_stages(method, obj.llm.stages)
    stages = {stage: llm_config(value) for stage, value in obj.llm.stages.items()}
    check_temperatures(method, obj.llm, stages, overrides)
    return RunSpec(obj.run, method, obj.dataset, obj.llm, obj.kg, stages, obj.settings)


def check_method_keys(node: DictConfig, method: MethodConfig) -> None:
    """Hydra adds ``+method.<key>=...`` to a schema node without checking it, and the key would be
    ignored: a misspelt hyperparameter must stop the run instead."""
    known = [f.name for f in fields(method)]
    unknown = [key for key in node.keys() if key not in known]
    if unknown:
        raise ConfigError(
            f"method.{unknown[0]}: {method.name} has no such setting; its settings: {', '.join(known[1:])}"
        )


def check_stages(method: MethodConfig, stages: dict[str, Any]) -> None:
    """``llm.stages.<stage>`` must name a stage the method calls, else its backbone is never used."""
    from kgx.methods import method as registered

    valid = registered(method.name).stages
    for stage in stages:
        if stage not in valid:
            raise ConfigError(
                f"llm.stages.{stage}: {method.name} has no stage '{stage}'; its stages: {', '.join(valid)}"
            )
