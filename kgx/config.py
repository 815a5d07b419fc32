"""Typed schemas of a kgx run, registered in Hydra's ConfigStore.

Hydra merges every YAML file of ``conf/`` onto these dataclasses, so an unknown key or a
value of the wrong type fails at composition, before any question runs. Range checks that
types cannot express live in ``__post_init__``; they run when ``to_run_config`` turns the
composed config into objects, still before any work.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import MissingMandatoryValue

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"

# Schema and bookkeeping relations that carry no answer (ToG, LMP and KnowPath drop them too).
DEFAULT_FILTERS: tuple[str, ...] = ("type.object.*", "common.*", "freebase.*", "kg.*", "*sameAs*", "*.key")


class ConfigError(ValueError):
    """A config value that composes but cannot be run; the message names the field."""


def _check_choice(where: str, value: str, options: tuple[str, ...]) -> None:
    if value not in options:
        raise ConfigError(f"{where}={value}: choose one of {', '.join(options)}")


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
    explain: int = 3  # questions per run whose explanation (text + PNG/SVG) is logged
    # Stop early when this many questions in a row fail the same way (an outage); 0 = never.
    max_consecutive_errors: int = 5

    def __post_init__(self) -> None:
        if self.max_consecutive_errors < 0:
            raise ConfigError(f"run.max_consecutive_errors={self.max_consecutive_errors}: must be >= 0")
        if self.concurrency < 1:
            raise ConfigError(f"run.concurrency={self.concurrency}: must be at least 1")
        if self.explain < 0:
            raise ConfigError(f"run.explain={self.explain}: must be >= 0")


@dataclass
class DatasetConfig:
    """Which questions a run asks. Selection applies ``ids``, then ``sample``, then ``limit``.

    Relative file paths resolve under ``$KGX_DATA_DIR``, else the per-user data directory
    (see ``kgx.paths``), so that one config names a file the same way on every machine.
    """

    name: str = "demo"
    loader: str = "jsonl"  # which reader in kgx.datasets parses `path`
    path: Optional[str] = None  # None: the questions bundled with kgx
    source: str = ""  # where to get the file(s), shown when one is missing
    aliases: Optional[str] = None  # cwq: PoG's answer-name file (question -> gold answer names)
    qtype: Optional[str] = None  # metaqa: question type per line of `path`; gives meta qtype and hops
    ids: list[str] = field(default_factory=list)  # keep only these question ids ([] = all)
    sample: Optional[int] = None  # then a random subset of this size, drawn with `seed`
    seed: int = 0
    limit: Optional[int] = None  # then the first N questions

    def __post_init__(self) -> None:
        for name in ("sample", "limit"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ConfigError(f"dataset.{name}={value}: must be >= 0 (or null for all)")


@dataclass
class NoiseConfig:
    """Seeded KG damage for robustness studies (LMP Table 3), applied at query time."""

    drop_relations: float = 0.0  # share of edges removed
    drop_names: float = 0.0  # share of entities whose names are removed
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("drop_relations", "drop_names"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(f"kg.noise.{name}={getattr(self, name)}: must lie in [0, 1)")


@dataclass
class KGConfig:
    name: str = "demo"
    backend: str = "embedded"  # embedded (pyoxigraph store in a directory) | endpoint (SPARQL URL)
    sources: list[str] = field(default_factory=list)  # files to load; [] = the bundled demo KG
    format: str = "nt"  # nt | ttl | tsv | metaqa | pathquestion
    store: Optional[str] = None  # store directory; default <run.cache_dir>/kg/<name>
    endpoint: Optional[str] = None  # SPARQL query URL for backend=endpoint; no ?query, no user:password@
    default_graph: Optional[str] = None  # graph IRI, sent as the default-graph-uri parameter of every query
    headers_env: dict[str, str] = field(default_factory=dict)  # request header -> NAME of the env variable
    user_env: Optional[str] = None  # NAME of the env variable holding the HTTP basic-auth user
    password_env: Optional[str] = None  # NAME of the env variable holding its password (both or neither)
    timeout_s: float = 30.0  # seconds, a float: per connection attempt and per read
    retries: int = 3  # per query, exponential backoff
    max_candidates: Optional[int] = None  # cap on relations/neighbours returned per call
    filters: list[str] = field(default_factory=lambda: list(DEFAULT_FILTERS))  # relation globs dropped
    noise: NoiseConfig = field(default_factory=NoiseConfig)

    def __post_init__(self) -> None:
        if self.backend not in ("embedded", "endpoint"):
            raise ConfigError(f"kg.backend={self.backend}: use 'embedded' or 'endpoint'")
        if self.backend == "endpoint" and not self.endpoint:
            raise ConfigError("kg.endpoint: a SPARQL URL is needed for kg.backend=endpoint")
        if self.timeout_s <= 0:
            raise ConfigError(f"kg.timeout_s={self.timeout_s}: must be a positive number of seconds")
        if self.max_candidates is not None and self.max_candidates < 1:
            raise ConfigError(f"kg.max_candidates={self.max_candidates}: must be at least 1 (or null)")
        if self.retries < 0:
            raise ConfigError(f"kg.retries={self.retries}: must be >= 0")
        self._check_endpoint_access()

    def _check_endpoint_access(self) -> None:
        """Where and how to reach an endpoint. Secrets live only in environment variables read
        when the KG opens, so no config, log, trace or MLflow param ever holds one; a message
        about a field that may hold a secret never repeats its value."""
        import re
        from urllib.parse import urlsplit

        if self.endpoint:
            url = urlsplit(self.endpoint)
            if "@" in url.netloc or (not url.netloc and "@" in self.endpoint):
                raise ConfigError("kg.endpoint: credentials in the URL (user:password@host) are not accepted; "
                                  "put them in environment variables named by kg.user_env and kg.password_env")
            if url.scheme not in ("http", "https") or not url.netloc:
                raise ConfigError(f"kg.endpoint={self.endpoint}: must be an http:// or https:// URL")
            if "?" in self.endpoint:
                raise ConfigError(f"kg.endpoint={url.scheme}://{url.netloc}{url.path}?...: remove the query "
                                  f"string; kgx sends the query itself, and the graph with kg.default_graph=IRI")
        if self.default_graph is not None and not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]+",
                                                               self.default_graph):
            raise ConfigError(f"kg.default_graph={self.default_graph}: must be an absolute IRI "
                              f"(e.g. http://rdf.freebase.com), or null for the endpoint's default")
        variable = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
        for header, name in self.headers_env.items():
            if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", header):
                raise ConfigError(f"kg.headers_env: {header!r} is not an HTTP header name")
            if header.lower() in ("accept", "content-type", "content-length", "host"):
                raise ConfigError(f"kg.headers_env.{header}: kgx sets this header itself")
            if header.lower() == "authorization" and (self.user_env or self.password_env):
                raise ConfigError("kg.headers_env.Authorization: conflicts with kg.user_env/kg.password_env; use one")
            if not variable.fullmatch(str(name)):
                raise ConfigError(f"kg.headers_env.{header}: must be the NAME of an environment variable "
                                  f"(letters, digits, _) holding the value, never the value itself")
        for field_name in ("user_env", "password_env"):
            if getattr(self, field_name) is not None and not variable.fullmatch(getattr(self, field_name)):
                raise ConfigError(f"kg.{field_name}: must be the NAME of an environment variable (letters, "
                                  f"digits, _) holding the value, never the value itself")
        if (self.user_env is None) != (self.password_env is None):
            raise ConfigError("kg.user_env, kg.password_env: basic auth needs both (or neither)")


@dataclass
class LocalModelConfig:
    """The in-process llama.cpp backbone (``llm=local``); ignored by every other provider."""

    model_path: Optional[str] = None  # any instruct GGUF file; None = the bundled SmolLM2-135M-Instruct
    chat_format: Optional[str] = None  # llama-cpp-python chat format; None = the template in the GGUF
    n_ctx: int = 4096
    n_threads: Optional[int] = None  # None = kgx's choice for this machine (see kgx/llm/local.py)
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
    api_key_env: Optional[str] = None  # environment variable that must hold the API key
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 120.0
    max_retries: int = 4  # transient errors (429, 5xx, timeouts), exponential backoff
    backoff_s: float = 1.0
    parse_retries: int = 5  # invalid structured output: retry at temperature +0.2 (LMP App. A.7)
    retry_temperature_step: float = 0.2
    # How a reply's JSON schema is enforced: json_schema | json_object_schema | prompted | auto
    # (probed at pre-flight); None: litellm's model map decides. true/false mean json_schema/prompted.
    structured_output: Optional[str] = None
    cache: bool = True
    max_parallel: Optional[int] = None  # requests it serves at once; caps run.concurrency
    rpm: Optional[int] = None  # provider's requests per minute, shared by a sweep's parallel jobs
    tpm: Optional[int] = None  # provider's tokens per minute, likewise
    input_cost_per_token: Optional[float] = None  # overrides litellm's price map
    output_cost_per_token: Optional[float] = None
    latency_s: float = 0.0  # scripted backbone only: simulated latency per call
    failure_rate: float = 0.0  # scripted backbone only: share of calls failing transiently
    extra: dict[str, Any] = field(default_factory=dict)  # passed through to litellm.completion
    local: LocalModelConfig = field(default_factory=LocalModelConfig)  # llm=local only
    stages: dict[str, Any] = field(default_factory=dict)  # stage -> llm config name or mapping

    # The values of structured_output that name a request form (not a field: no annotation).
    STRUCTURED_MODES = ("json_schema", "json_object_schema", "prompted")

    def __post_init__(self) -> None:
        _check_temperature("llm.temperature", self.temperature)
        # Configs written when this was a bool (YAML true/false arrive as "True"/"False").
        legacy = {"true": "json_schema", "false": "prompted"}
        if self.structured_output is not None:
            value = str(self.structured_output)
            self.structured_output = legacy.get(value.lower(), value)
            _check_choice("llm.structured_output", self.structured_output, (*self.STRUCTURED_MODES, "auto"))
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


@dataclass
class LMPConfig(MethodConfig):
    """Language message passing (Wan et al.); field meanings follow the paper's Sec. 3 and App. A."""

    name: str = "lmp"
    width: int = 3  # K: relations sampled per layer
    depth: int = 1  # L: hops from the topic entity (Table 7); a layer through CVT nodes covers two
    temperature: float = 0.0  # sampling and transformation; answering too (the paper sets 0 everywhere)
    max_retries: Optional[int] = None  # invalid-output retries per call; None = llm.parse_retries
    sampler: str = "llm"  # llm | bm25 | sbert (App. D.2)
    aggregation: bool = True  # False: raw triples instead of one line per head entity (Table 5)
    transformation: bool = True  # False: raw aggregated text instead of summarised facts
    readout: bool = True  # False: only the last layer's facts, no outline
    evidence: str = "facts"  # facts | path (LMP-path: the facts graph's triples as paths)
    answer_style: str = "hits"  # hits: "all the possible answers" | f1: one answer each (App. D.1)
    max_neighbors: int = 30  # per head entity and relation; hubs are cut and the cut recorded
    max_relations: int = 80  # candidate relations offered to the sampler per layer
    max_answers: int = 5

    def __post_init__(self) -> None:
        for key in ("width", "depth", "max_neighbors", "max_relations", "max_answers"):
            if getattr(self, key) < 1:
                raise ConfigError(f"method.{key}={getattr(self, key)}: must be at least 1")
        if self.max_retries is not None and self.max_retries < 0:
            raise ConfigError(f"method.max_retries={self.max_retries}: must be >= 0 (or null)")
        _check_temperature("method.temperature", self.temperature)
        _check_choice("method.sampler", self.sampler, ("llm", "bm25", "sbert"))
        _check_choice("method.evidence", self.evidence, ("facts", "path"))
        _check_choice("method.answer_style", self.answer_style, ("hits", "f1"))


@dataclass
class KnowPathConfig(MethodConfig):
    """KnowPath (Zhao et al.): inference paths from the LLM's own knowledge guide the exploration of
    directed subgraphs. Field comments name the paper's section (Sec. 2-4, App. A, B, F)."""

    name: str = "knowpath"
    depth: int = 3  # D_max: rounds of subgraph exploration, one hop each (Sec. 2.3, Sec. 3.3)
    width: int = 3  # relations kept per subgraph and round (Sec. 2.3 relation exploration, App. F.3)
    entity_width: int = 5  # entities kept per subgraph and round (Sec. 2.3 entity exploration, App. F.4)
    triples: int = 15  # knowledge triples listed by inference paths generation (Sec. 2.2, App. F.2; Fig. 5a)
    temperature_explore: float = 0.4  # relation and entity selection (Sec. 4.4, Fig. 5a)
    temperature_answer: float = 0.0  # inference paths generation and evaluation-based answering (Sec. 2.4)
    ipg: bool = True  # False: no inference path in any prompt and no path fallback (Table 2, w/o IPG)
    exploration: bool = True  # False: answer from the inference path alone (Table 2, w/o SE)
    max_relations: int = 50  # per entity and direction offered to relation selection; cuts are recorded
    max_neighbors: int = 40  # per entity, relation and direction offered to entity selection; cuts recorded
    max_answers: int = 5  # answers kept from a reply (Sec. 2.4 gives one response; lists allow several)
    max_retries: Optional[int] = None  # invalid-output retries per call; None = llm.parse_retries

    def __post_init__(self) -> None:
        for key in ("depth", "width", "entity_width", "max_relations", "max_neighbors", "max_answers"):
            if getattr(self, key) < 1:
                raise ConfigError(f"method.{key}={getattr(self, key)}: must be at least 1")
        if self.triples < 0:
            raise ConfigError(f"method.triples={self.triples}: must be >= 0")
        if self.max_retries is not None and self.max_retries < 0:
            raise ConfigError(f"method.max_retries={self.max_retries}: must be >= 0 (or null)")
        _check_temperature("method.temperature_explore", self.temperature_explore)
        _check_temperature("method.temperature_answer", self.temperature_answer)
        if not self.ipg and not self.exploration:
            raise ConfigError("method.ipg=false with method.exploration=false leaves nothing to answer "
                              "from; the model alone is the IO baseline (method=io)")


@dataclass
class CGPEConfig(MethodConfig):
    """Clue-guided path exploration (Tao et al.); field comments name the paper's section. Per-stage
    backbones (Table 4) are ``llm.stages.clue_extraction|path_exploration|answer``."""

    name: str = "cgpe"
    max_clues: int = 6  # clues one extraction may return (Sec. 3.2 gives no bound)
    max_clue_words: int = 8  # longest question phrase offered as a clue (Sec. 3.2)
    search_limit: int = 5  # KG nodes searched per clue for initial nodes (Sec. 3.3)
    character_matching: bool = True  # a neighbour named like an unused clue is the next node (Sec. 3.4; Table 3)
    llm_pruning: bool = True  # fuzzy, rough and exact matching by the LLM (Sec. 3.4; Table 3)
    rough_top_k: Optional[int] = None  # rough matching: None = drop score 0; k = keep the k best (Sec. 3.4)
    termination: bool = True  # clue coverage ends all exploration, paths merge (Sec. 3.5; Table 3)
    max_steps: int = 3  # without termination: steps each path takes (Sec. 4.4, "explored each path thrice")
    max_paths: int = 10  # paths explored at once; forks past it are cut and the cut recorded (kgx's bound)
    max_relations: int = 50  # relations per node and direction in the candidate set (Sec. 3.4); cuts recorded
    max_neighbors: int = 20  # neighbours per node, relation and direction (Sec. 3.4); cuts recorded
    max_candidates: int = 60  # (label, entity) pairs offered to rough matching (Sec. 3.4); cuts recorded
    max_answers: int = 20  # answers kept from the reply: one-to-many questions (Sec. 4.1, complete match)
    temperature: float = 0.0  # every call (Sec. 4.1: temperature 0 for all LLMs)
    max_retries: Optional[int] = None  # invalid-output retries per call; None = llm.parse_retries (kgx's)

    def __post_init__(self) -> None:
        for key in ("max_clues", "max_clue_words", "search_limit", "max_steps", "max_paths", "max_relations",
                    "max_neighbors", "max_candidates", "max_answers"):
            if getattr(self, key) < 1:
                raise ConfigError(f"method.{key}={getattr(self, key)}: must be at least 1")
        if self.rough_top_k is not None and self.rough_top_k < 1:
            raise ConfigError(f"method.rough_top_k={self.rough_top_k}: must be at least 1 (or null)")
        if self.max_retries is not None and self.max_retries < 0:
            raise ConfigError(f"method.max_retries={self.max_retries}: must be >= 0 (or null)")
        _check_temperature("method.temperature", self.temperature)


@dataclass
class ToGConfig(MethodConfig):
    """Think-on-Graph (Sun et al., ICLR 2024, Sec. 2.1): beam search over the KG, the LLM pruning
    relations and scoring entities. Defaults are the published run's (ToG/main_freebase.py)."""

    name: str = "tog"
    width: int = 3  # N: relations kept per entity and paths kept per depth
    depth: int = 3  # D: maximum search depth
    temperature_explore: float = 0.4  # relation pruning and entity scoring
    temperature_reason: float = 0.0  # the sufficiency check and the answer
    prune: str = "llm"  # llm | bm25 | sbert: who scores relations and entities (bm25/sbert: D + 1 calls)
    num_retain_entity: int = 5  # entities kept at random from a relation (ToG: only from hubs, see sample_above)
    sample_above: int = 20  # ToG: a relation with at least this many candidates is sampled to num_retain_entity
    max_neighbors: int = 100  # KG cap per (entity, relation) before sampling; cuts are recorded
    max_relations: int = 100  # KG cap on candidate relations per entity and direction; cuts are recorded
    score_tolerance: float = 0.05  # relation scores must add up to 1 within this
    max_retries: Optional[int] = None  # invalid-output retries per call; None = llm.parse_retries
    fallback: str = "paths"  # at max depth, answer from the paths | cot: without them (the published code)
    exemplars: bool = True  # one worked example per stage, as the published prompts have (False: zero-shot)
    max_answers: int = 5

    def __post_init__(self) -> None:
        for key in ("width", "depth", "num_retain_entity", "sample_above", "max_neighbors", "max_relations",
                    "max_answers"):
            if getattr(self, key) < 1:
                raise ConfigError(f"method.{key}={getattr(self, key)}: must be at least 1")
        if self.max_retries is not None and self.max_retries < 0:
            raise ConfigError(f"method.max_retries={self.max_retries}: must be >= 0 (or null)")
        if not 0.0 <= self.score_tolerance < 1.0:
            raise ConfigError(f"method.score_tolerance={self.score_tolerance}: must lie in [0, 1)")
        _check_temperature("method.temperature_explore", self.temperature_explore)
        _check_temperature("method.temperature_reason", self.temperature_reason)
        _check_choice("method.prune", self.prune, ("llm", "bm25", "sbert"))
        _check_choice("method.fallback", self.fallback, ("paths", "cot"))


@dataclass
class ToGRConfig(ToGConfig):
    """ToG-R (Sec. 2.2): relations pruned as in ToG, entities kept at random (seeded) instead of
    scored by the LLM; ``num_retain_entity`` per chosen relation."""

    name: str = "tog_r"


METHOD_SCHEMAS: dict[str, type[MethodConfig]] = {
    "io": IOConfig, "cot": CoTConfig, "sc": SCConfig, "lmp": LMPConfig,
    "knowpath": KnowPathConfig, "cgpe": CGPEConfig, "tog": ToGConfig, "tog_r": ToGRConfig,
}


@dataclass
class Config:
    run: RunConfig = field(default_factory=RunConfig)
    method: Any = None
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    kg: KGConfig = field(default_factory=KGConfig)


def register() -> None:
    """Make the schemas known to Hydra; group YAML files extend ``base_<name>``.

    ``${kgx.token:}`` is a random token, drawn once per composed config (Hydra copies the
    resolver cache into every job of a sweep): it keeps two sweeps started in the same second
    out of each other's folder."""
    if not OmegaConf.has_resolver("kgx.token"):
        OmegaConf.register_new_resolver("kgx.token", lambda: secrets.token_hex(3), use_cache=True)
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
    try:
        obj = OmegaConf.to_object(cfg)
    except MissingMandatoryValue as exc:
        raise ConfigError(f"{exc.full_key}: a value is required (e.g. {exc.full_key}=...)") from exc
    method = obj.method
    if not isinstance(method, MethodConfig):
        raise ConfigError("method: choose one of conf/method (e.g. method=cot)")
    stages = {stage: llm_config(value) for stage, value in obj.llm.stages.items()}
    return RunSpec(obj.run, method, obj.dataset, obj.llm, obj.kg, stages)
