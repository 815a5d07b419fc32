"""Typed schemas of a kgx run, registered in Hydra's ConfigStore.

Hydra merges every YAML file of ``conf/`` onto these dataclasses, so an unknown key or a
value of the wrong type fails at composition, before any question runs. Range checks that
types cannot express live in ``__post_init__``; they run when ``to_run_config`` turns the
composed config into objects, still before any work.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


class ConfigError(ValueError):
    """A config value that composes but cannot be run; the message names the field."""


def _check_temperature(where: str, value: float) -> None:
    if not 0.0 <= value <= 2.0:
        raise ConfigError(f"{where}={value}: a temperature must lie in [0, 2]")


@dataclass
class RunConfig:
    concurrency: int = 4  # questions answered in parallel (threads)
    seed: int = 0
    output_dir: Optional[str] = None  # default: outputs/runs/<method>-<dataset>-<llm>-<config hash>
    tracking_uri: Optional[str] = None  # default: $MLFLOW_TRACKING_URI, else sqlite under ./mlruns
    experiment: str = "kgx"
    cache_dir: str = ".kgx_cache"  # LLM response cache and built KG stores, shared by all runs
    force: bool = False  # recompute questions that already have a prediction
    progress: bool = True

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"run.concurrency={self.concurrency}: must be at least 1")


@dataclass
class DatasetConfig:
    name: str = "demo"
    loader: str = "jsonl"  # which reader in kgx.datasets parses `path`
    path: Optional[str] = None  # None: the questions bundled with kgx
    limit: Optional[int] = None  # take the first N questions
    source: str = ""  # where to get the file, shown when it is missing

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 0:
            raise ConfigError(f"dataset.limit={self.limit}: must be >= 0 (or null for all)")


@dataclass
class KGConfig:
    name: str = "demo"
    backend: str = "embedded"  # embedded (pyoxigraph store in a directory)
    source: Optional[str] = None  # RDF file to load; None: the KG bundled with kgx
    store: Optional[str] = None  # store directory; default <run.cache_dir>/kg/<name>


@dataclass
class LLMConfig:
    name: str = "local"
    model: str = "kgx-local/smollm2-135m-instruct"  # litellm model string
    api_base: Optional[str] = None
    api_key_env: Optional[str] = None  # environment variable that must hold the API key
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 120.0
    max_retries: int = 4  # transient errors (429, 5xx, timeouts), exponential backoff
    backoff_s: float = 1.0
    parse_retries: int = 5  # invalid structured output: retry at temperature +0.2 (LMP App. A.7)
    retry_temperature_step: float = 0.2
    structured_output: Optional[bool] = None  # response_format; None: ask litellm about the model
    cache: bool = True
    max_parallel: Optional[int] = None  # requests it serves at once; caps run.concurrency
    input_cost_per_token: Optional[float] = None  # overrides litellm's price map
    output_cost_per_token: Optional[float] = None
    latency_s: float = 0.0  # scripted backbone only: simulated latency per call
    failure_rate: float = 0.0  # scripted backbone only: share of calls failing transiently
    extra: dict[str, Any] = field(default_factory=dict)  # passed through to litellm.completion
    stages: dict[str, Any] = field(default_factory=dict)  # stage -> llm config name or mapping

    def __post_init__(self) -> None:
        _check_temperature("llm.temperature", self.temperature)
        if not 0.0 <= self.failure_rate < 1.0:
            raise ConfigError(f"llm.failure_rate={self.failure_rate}: must lie in [0, 1)")
        if self.max_parallel is not None and self.max_parallel < 1:
            raise ConfigError(f"llm.max_parallel={self.max_parallel}: must be at least 1 (or null)")
        for name in ("max_retries", "parse_retries", "max_tokens"):
            if getattr(self, name) < 0:
                raise ConfigError(f"llm.{name}={getattr(self, name)}: must be >= 0")


@dataclass
class MethodConfig:
    name: str = "io"


@dataclass
class IOConfig(MethodConfig):
    name: str = "io"


@dataclass
class CoTConfig(MethodConfig):
    name: str = "cot"
    shots: int = 3  # few-shot multi-hop exemplars in the prompt

    def __post_init__(self) -> None:
        if self.shots < 0:
            raise ConfigError(f"method.shots={self.shots}: must be >= 0")


@dataclass
class SCConfig(CoTConfig):
    name: str = "sc"
    n: int = 5  # sampled reasoning chains, majority vote (Wang et al. 2023)
    temperature: float = 0.7

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.n < 1:
            raise ConfigError(f"method.n={self.n}: must be at least 1")
        _check_temperature("method.temperature", self.temperature)


METHOD_SCHEMAS: dict[str, type[MethodConfig]] = {"io": IOConfig, "cot": CoTConfig, "sc": SCConfig}


@dataclass
class Config:
    run: RunConfig = field(default_factory=RunConfig)
    method: Any = None
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    kg: KGConfig = field(default_factory=KGConfig)


def register() -> None:
    """Make the schemas known to Hydra; group YAML files extend ``base_<name>``."""
    cs = ConfigStore.instance()
    cs.store(name="kgx_schema", node=Config)
    for name, schema in METHOD_SCHEMAS.items():
        cs.store(group="method", name=f"base_{name}", node=schema)


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

    @property
    def workers(self) -> int:
        """Questions in flight: run.concurrency, capped by backbones that serve one at a time,
        so that a question's latency measures its own work rather than a queue."""
        limits = [b.max_parallel for b in (self.llm, *self.stages.values()) if b.max_parallel]
        return min([self.run.concurrency, *limits])

    def resolved(self) -> dict[str, Any]:
        """The whole run as plain data, stage backbones expanded: what is logged and hashed."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "stages":
                out["llm_stages"] = {k: OmegaConf.to_container(OmegaConf.structured(v)) for k, v in value.items()}
            else:
                out[f.name] = OmegaConf.to_container(OmegaConf.structured(value))
        return out


def to_run_spec(cfg: DictConfig) -> RunSpec:
    """Check ranges and resolve stage backbones; raises ConfigError naming the field."""
    obj = OmegaConf.to_object(cfg)
    method = obj.method
    if not isinstance(method, MethodConfig):
        raise ConfigError("method: choose one of conf/method (e.g. method=cot)")
    stages = {stage: llm_config(value) for stage, value in obj.llm.stages.items()}
    return RunSpec(obj.run, method, obj.dataset, obj.llm, obj.kg, stages)
