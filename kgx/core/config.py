"""Typed schemas of a kgx run, registered in Hydra's ConfigStore.

Hydra merges every YAML file of ``conf/`` onto these dataclasses, so an unknown key or a
value of the wrong type fails at composition, before any question runs. Range checks that
types cannot express live in ``__post_init__``; they run when ``kgx.run.spec.to_run_spec`` turns the
composed config into objects, still before any work. A method's own schema lives beside the
method (``kgx.methods``), registered with it. A field made with ``execution`` says how a run
executes, not what it computes: it is left out of the run's identity (``kgx.core.run_identity``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from kgx.core.config_checks import ConfigError, check_choice, check_extra, check_temperature, question_share, share_size
from kgx.core.masking import masked_url
from kgx.core.paper_settings import SettingsSource
from kgx.core.run_identity import execution
from kgx.core.types import Horizon


@dataclass
class RunConfig:
    concurrency: int = execution(4)  # questions answered in parallel (threads)
    # Worker processes sharing those questions (kgx.run.processes): 1, N, or auto (more than one
    # only where it pays: a method that reads the KG, many questions in flight, free cores).
    processes: str = execution("1")
    seed: int = 0
    output_dir: Optional[str] = execution()  # default: outputs/runs/<method>-<dataset>-<llm>-<config hash>
    tracking_uri: Optional[str] = execution()  # default: $MLFLOW_TRACKING_URI, else sqlite under ./mlruns
    experiment: str = execution("kgx")
    cache_dir: str = execution(".kgx_cache")  # LLM response cache and built KG stores, shared by all runs
    # Where LLM responses are cached: empty = <cache_dir>/llm.sqlite (one machine); redis://[:password@]
    # host:port/db (or rediss://) = a Redis server several machines share (pip install 'kgx[redis]').
    cache_url: str = execution("")
    force: bool = execution(False)  # recompute questions that already have a prediction
    progress: bool = execution(True)
    explain: int = execution(3)  # questions per run whose explanation (text + PNG/SVG) is logged
    # Questions whose trace (every LLM and KG call, in the run's traces/ shards) is written and
    # logged: all, off, or N = the first N questions in dataset order.
    traces: str = execution("all")
    # Questions whose transcript (an MLflow trace built from the trace, kgx.track.transcripts) is
    # logged: all, off, or N; unset = the first 100 of those run.traces names (others on demand).
    transcripts: Optional[str] = execution()
    # Stop early when this many questions in a row fail the same way (an outage); 0 = never.
    max_consecutive_errors: int = execution(5)
    # A sweep's name (its parent run's); default: the sweep file and the keys it varies, made unique.
    sweep_name: Optional[str] = execution()

    def __post_init__(self) -> None:
        if self.max_consecutive_errors < 0:
            raise ConfigError(f"run.max_consecutive_errors={self.max_consecutive_errors}: must be >= 0")
        if self.concurrency < 1:
            raise ConfigError(f"run.concurrency={self.concurrency}: must be at least 1")
        self.processes = str(self.processes).strip().lower()
        if self.processes != "auto" and not (self.processes.isascii() and self.processes.isdigit()):
            raise ConfigError(f"run.processes={self.processes}: use a number of processes (1 or more) or auto")
        if self.processes != "auto" and int(self.processes) < 1:
            raise ConfigError(f"run.processes={self.processes}: must be at least 1 (or auto)")
        if self.explain < 0:
            raise ConfigError(f"run.explain={self.explain}: must be >= 0")
        if self.cache_url and not self.cache_url.startswith(("redis://", "rediss://")):
            raise ConfigError(
                f"run.cache_url={masked_url(self.cache_url)}: use redis://[:password@]host:port/db "
                f"(or rediss://), or leave it empty for the local sqlite file"
            )
        self.traces = question_share("run.traces", self.traces)
        if self.transcripts is not None:
            self.transcripts = question_share("run.transcripts", self.transcripts)
            if share_size(self.transcripts) > share_size(self.traces):
                raise ConfigError(
                    f"run.transcripts={self.transcripts}: a transcript is built from the question's trace, "
                    f"and run.traces={self.traces} writes {'none' if self.traces == 'off' else 'fewer'}; "
                    f"set run.traces={self.transcripts} too, or leave run.transcripts unset (it follows run.traces)"
                )


@dataclass
class DatasetConfig:
    """Which questions a run asks. Selection applies ``ids``, then ``sample``, then ``limit``.

    Relative file paths resolve under ``$KGX_DATA_DIR``, else the per-user data directory
    (see ``kgx.core.paths``), so that one config names a file the same way on every machine.
    """

    name: str = "demo"
    loader: str = "jsonl"  # which reader in kgx.datasets parses `path`
    # Another name for `loader` (dataset.format=rog): given, it sets `loader`, which the hash holds.
    format: Optional[str] = execution()
    path: Optional[str] = None  # None: the questions bundled with kgx
    source: str = ""  # where to get the file(s), shown when one is missing
    aliases: Optional[str] = None  # cwq: PoG's answer-name file (question -> gold answer names)
    qtype: Optional[str] = None  # metaqa: question type per line of `path`; gives meta qtype and hops
    ids: list[str] = field(default_factory=list)  # keep only these question ids ([] = all)
    sample: Optional[int] = None  # then a random subset of this size, drawn with `seed`
    seed: int = 0
    limit: Optional[int] = None  # then the first N questions
    split: Optional[str] = None  # rog: when `path` is a folder of shards, the split's (test-*.parquet)
    # The conf/kg option holding this dataset's topic entities: what kgx.run.preflight suggests when
    # the run's KG lacks them. Says which KG to use, not which one is used: left out of the hash.
    kg: Optional[str] = execution()

    def __post_init__(self) -> None:
        if self.format is not None:
            self.loader, self.format = self.format, None
        for name in ("sample", "limit"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ConfigError(f"dataset.{name}={value}: must be >= 0 (or null for all)")


@dataclass
class LocalModelConfig:
    """The in-process llama.cpp backbone (``llm=local``); ignored by every other provider."""

    model_path: Optional[str] = None  # any instruct GGUF file; None = the bundled SmolLM2-135M-Instruct
    chat_format: Optional[str] = None  # llama-cpp-python chat format; None = the template in the GGUF
    n_ctx: int = 4096
    n_threads: Optional[int] = None  # None = kgx's choice for this machine (see kgx/llm/local_setup.py)
    n_batch: int = 512
    # Off: the AMX/repacked weight buffers segfault at the first decode on some Xeon VMs.
    use_extra_bufts: bool = False

    def __post_init__(self) -> None:
        for name in ("n_ctx", "n_batch"):
            if getattr(self, name) < 1:
                raise ConfigError(f"llm.local.{name}={getattr(self, name)}: must be at least 1")
        if self.n_threads is not None and self.n_threads < 1:
            raise ConfigError(f"llm.local.n_threads={self.n_threads}: must be at least 1 (or null)")


@dataclass
class LLMConfig:
    name: str = "local"
    model: str = "kgx-local/smollm2-135m-instruct"  # litellm model string
    api_base: Optional[str] = None
    api_key_env: Optional[str] = execution()  # environment variable that must hold the API key
    temperature: float = 0.0  # of calls the method sets none for (io, cot): kgx.run.temperatures
    temperatures: list[float] = execution(default_factory=list)  # the only ones the model accepts; [] = any
    max_tokens: int = 512
    timeout_s: float = execution(120.0)  # seconds: each call whole, however slowly the server sends
    max_retries: int = execution(4)  # transient errors (429, 5xx, timeouts), exponential backoff
    backoff_s: float = execution(1.0)
    # A reply longer than this is cut (recorded as a trace note and the run's replies_cut): a server
    # sending megabytes must not fill the disk through the cache, traces, logs and MLflow.
    max_reply_chars: int = execution(200_000)
    parse_retries: int = 5  # invalid structured output: retry at temperature +0.2 (LMP App. A.7)
    retry_temperature_step: float = 0.2
    # How a reply's JSON schema is enforced: json_schema | json_object_schema | prompted | auto
    # (probed at pre-flight); None: litellm's model map decides. true/false mean json_schema/prompted.
    structured_output: Optional[str] = None
    cache: bool = True
    max_parallel: Optional[int] = execution()  # requests it serves at once; caps run.concurrency
    rpm: Optional[int] = execution()  # provider's requests per minute, shared by a sweep's parallel jobs
    tpm: Optional[int] = execution()  # provider's tokens per minute, likewise
    input_cost_per_token: Optional[float] = None  # overrides litellm's price map
    output_cost_per_token: Optional[float] = None
    latency_s: float = 0.0  # scripted backbone only: simulated latency per call
    failure_rate: float = 0.0  # scripted backbone only: share of calls failing transiently
    # Sent with every request (litellm.completion's arguments); ones kgx sets itself are refused.
    extra: dict[str, Any] = field(default_factory=dict)
    local: LocalModelConfig = field(default_factory=LocalModelConfig)  # llm=local only
    stages: dict[str, Any] = field(default_factory=dict)  # stage -> llm config name or mapping

    # The values of structured_output that name a request form (not a field: no annotation).
    STRUCTURED_MODES = ("json_schema", "json_object_schema", "prompted")

    def __post_init__(self) -> None:
        check_temperature("llm.temperature", self.temperature)
        # Configs written when this was a bool (YAML true/false arrive as "True"/"False").
        legacy = {"true": "json_schema", "false": "prompted"}
        if self.structured_output is not None:
            value = str(self.structured_output)
            self.structured_output = legacy.get(value.lower(), value)
            check_choice("llm.structured_output", self.structured_output, (*self.STRUCTURED_MODES, "auto"))
        if not 0.0 <= self.failure_rate < 1.0:
            raise ConfigError(f"llm.failure_rate={self.failure_rate}: must lie in [0, 1)")
        if self.max_parallel is not None and self.max_parallel < 1:
            raise ConfigError(f"llm.max_parallel={self.max_parallel}: must be at least 1 (or null)")
        for name in ("rpm", "tpm"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ConfigError(f"llm.{name}={getattr(self, name)}: must be at least 1 (or null)")
        if self.timeout_s <= 0:
            raise ConfigError(f"llm.timeout_s={self.timeout_s}: must be a positive number of seconds")
        for name in ("max_retries", "parse_retries", "max_tokens"):
            if getattr(self, name) < 0:
                raise ConfigError(f"llm.{name}={getattr(self, name)}: must be >= 0")
        if self.max_reply_chars < 1:
            raise ConfigError(f"llm.max_reply_chars={self.max_reply_chars}: must be at least 1")
        check_extra(self.extra)


@dataclass
class MethodConfig:
    """The fields every method has; a method's schema extends it beside the method."""

    name: str = "io"
    max_retries: Optional[int] = None  # invalid-output retries per call; None = llm.parse_retries

    def __post_init__(self) -> None:
        if self.max_retries is not None and self.max_retries < 0:
            raise ConfigError(f"method.max_retries={self.max_retries}: must be >= 0 (or null)")

    def horizon(self) -> Optional[Horizon]:
        """How far the method sees in the KG (what ``reachable`` searches); None for a method
        that reads no KG (io, cot, sc)."""
        return None

    def at_least(self, low: int, *names: str) -> None:
        """Range check of integer fields, naming the first one out of range."""
        for key in names:
            if getattr(self, key) < low:
                raise ConfigError(f"method.{key}={getattr(self, key)}: must be at least {low}")


@dataclass
class Config:
    run: RunConfig = field(default_factory=RunConfig)
    method: Any = None
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    kg: Any = None  # a KG backend's schema (kgx.core.kg_config), chosen by kg=<option>
    settings: SettingsSource = execution(default_factory=SettingsSource)
